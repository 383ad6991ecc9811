"""The dashboard by class: no "not shown" figure can be worked out from the others on show."""

import re

import pytest

from learners.models import Level
from tests.dashboard_support import by_class, figures
from tests.factories import (
    cohort_learner,
    completed,
    make_group,
    make_staff,
    put_in_group,
    signed_in,
)

NEEDS_HELP = {"Sleep": "yes"}
FINE = {"Sleep": "no"}


def pupils(count: int, *, level: str = Level.SECONDARY, areas=NEEDS_HELP, risk: str = "HIGH"):
    """Create pupils assessed on one day, each needing help (or not) in the only focus area."""
    made = [cohort_learner(level=level) for _ in range(count)]
    for learner in made:
        completed(learner, "2026-09-10", risk=risk, areas=areas)
    return made


def numbers(cells: list[str]) -> list[int]:
    return [int(cell) for cell in cells if cell.isdigit()]


def sleep_count(response) -> str:
    """Return the focus area table's count for Sleep, or "" when the table is not shown."""
    found = re.search(
        r"Sleep<span[^>]*>: follow-ups</span></a></th><td>([^<]+)</td>", _html(response)
    )
    return found.group(1) if found else ""


def _html(response) -> str:
    return response.content.decode()


@pytest.fixture
def year_7(db):
    """The reviewer's case: 7A 6 secondary pupils, 7B 2 primary, Y7 all 8; all need help."""
    secondary, primary = pupils(6), pupils(2, level=Level.PRIMARY)
    groups = {name: make_group(name) for name in ("7A", "7B", "Y7")}
    put_in_group(groups["7A"], *secondary)
    put_in_group(groups["7B"], *primary)
    put_in_group(groups["Y7"], *secondary, *primary)
    return {**groups, "dsl": make_staff("dee.dsl")}


def test_no_class_can_be_taken_from_another_or_the_total_to_give_a_small_one_away(year_7):
    response = signed_in(year_7["dsl"]).get("/dashboard/")

    assert response.status_code == 200
    table = by_class(response)
    assert table["7B"] == ["2", "2", "not shown"]
    # Was 7A 6 beside Y7 8 (and the school's 8 needing help with Sleep): 8 - 6 = 7B's 2.
    assert table["7A"] == ["6", "6", "not shown"]
    assert table["Y7"] == ["8", "8", "8"]  # the school's own total, which tells no more
    shown = [*numbers([row[2] for row in table.values()]), *numbers([sleep_count(response)])]
    assert shown
    assert not [a - b for a in shown for b in shown if 0 < a - b < 5]


def test_a_year_group_minus_its_classes_inside_it_is_withheld(year_7):
    # Ten more pupils in no class: the school's total now hides 7B among them.
    pupils(5)
    pupils(5, areas=FINE, risk="LOW")
    others = pupils(6)
    put_in_group(year_7["Y7"], *others)
    class_7c = make_group("7C")
    put_in_group(class_7c, *others)

    table = by_class(signed_in(year_7["dsl"]).get("/dashboard/"))

    assert table["7A"] == ["6", "6", "6"]
    assert table["7C"] == ["6", "6", "6"]
    # Y7 less 7A, less 7C (neither alone), is 7B: 14 - 6 - 6 = 2.
    assert table["Y7"] == ["14", "14", "not shown"]
    assert table["7B"] == ["2", "2", "not shown"]


def test_needing_help_is_withheld_when_it_tells_how_few_others_did(db):
    class_9a = make_group("9A")
    put_in_group(class_9a, *pupils(5), *pupils(2, areas=FINE))
    pupils(5, areas=FINE)  # elsewhere in the school

    table = by_class(signed_in(make_staff("dee.dsl")).get("/dashboard/"))

    # Was 5 beside 7 assessed: the 2 others do not need help.
    assert table["9A"] == ["7", "7", "not shown"]


def test_a_class_at_one_level_gives_none_of_its_other_levels_away(year_7):
    client = signed_in(year_7["dsl"])

    whole = client.get("/dashboard/", {"group": year_7["Y7"].pk})
    secondary = client.get("/dashboard/", {"group": year_7["Y7"].pk, "level": Level.SECONDARY})

    assert whole.status_code == secondary.status_code == 200
    assert sleep_count(whole) == "8"
    assert by_class(whole)["Y7"] == ["8", "8", "8"]
    # Was 6 with Sleep and 6 needing help: 8 - 6 says the 2 primary pupils need help.
    assert figures(secondary)["Learners assessed"] == "6"
    assert "are not shown at one level" in _html(secondary)
    assert sleep_count(secondary) == ""
    assert "<caption>Learners by risk level</caption>" not in _html(secondary)
    assert by_class(secondary)["Y7"] == ["6", "6", "not shown"]


def test_the_by_class_table_at_one_level_gives_no_class_s_other_levels_away(year_7):
    pupils(5, areas=FINE, risk="LOW")  # so that the school's secondary total hides no one

    table = by_class(signed_in(year_7["dsl"]).get("/dashboard/", {"level": Level.SECONDARY}))

    assert table["7A"] == ["6", "6", "6"]
    # Y7's secondary pupils are 7A's 6; Y7 at every level shows 8 on the unfiltered page.
    assert table["Y7"] == ["6", "6", "not shown"]


def test_a_class_of_one_level_keeps_its_figures_at_that_level(year_7):
    response = signed_in(year_7["dsl"]).get(
        "/dashboard/", {"group": year_7["7A"].pk, "level": Level.SECONDARY}
    )

    assert sleep_count(response) == "6"
    assert "are not shown at one level" not in _html(response)
