"""The dashboard by class: its `group` filter, the "By class" table, and small groups."""

import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from accounts.models import StaffRole
from schools.models import School
from tests.dashboard_support import by_class, figures
from tests.factories import (
    cohort_learner,
    completed,
    make_group,
    make_staff,
    put_in_group,
    signed_in,
)


@pytest.fixture
def classes(db):
    """7B: 6 assessed, 2 needing help. 8C: 2 assessed, 1 needing help. Tara teaches 8C."""
    class_7b, class_8c = make_group("7B"), make_group("8C")
    for number in range(7):
        learner = cohort_learner()
        put_in_group(class_7b, learner)
        if number < 6:
            areas = {"Sleep": "yes" if number < 2 else "no"}
            completed(learner, "2026-09-10", risk="HIGH" if number < 3 else "LOW", areas=areas)
    for number in range(3):
        learner = cohort_learner()
        put_in_group(class_8c, learner)
        if number < 2:
            completed(learner, "2026-09-10", areas={"Sleep": "yes" if number else "no"})
    bravo = School.objects.create(code="BRAVO", name="Bravo Academy")
    return {
        "7B": class_7b,
        "8C": class_8c,
        "9Z": make_group("9Z", school=bravo),
        "tara": make_staff("tara.teacher", role=StaffRole.TEACHER, groups=[class_8c]),
        "dsl": make_staff("dee.dsl", groups=[class_8c]),
    }


def test_the_by_class_table_counts_each_class_and_protects_how_they_did(classes):
    response = signed_in(classes["dsl"]).get("/dashboard/")

    assert response.status_code == 200
    # Learners in the class and learners assessed are exact; needing help is protected with
    # those not needing it: 2 of 6 says 4 do not, and 1 of 2 says how each did.
    assert by_class(response) == {
        "8C": ["3", "2", "not shown"],
        "7B": ["7", "6", "not shown"],
    }


def test_the_dashboard_filters_every_figure_by_class(classes):
    client = signed_in(classes["dsl"])

    response = client.get("/dashboard/", {"group": classes["7B"].pk})

    assert response.status_code == 200
    assert figures(response)["Learners registered"] == "7"
    assert figures(response)["Learners assessed"] == "6"
    assert list(by_class(response)) == ["7B"]
    html = response.content.decode()
    assert "Showing 7B (" in html
    # The lists and the export the figures link to carry the class too.
    assert f"/learners/?group={classes['7B'].pk}" in html
    assert f"/learners/results.csv?level=&amp;from=&amp;to=&amp;group={classes['7B'].pk}" in html


def test_a_teacher_sees_their_classes_and_is_refused_another(classes):
    client = signed_in(classes["tara"])

    own = client.get("/dashboard/")
    other = client.get("/dashboard/", {"group": classes["7B"].pk})
    elsewhere = client.get("/dashboard/", {"group": classes["9Z"].pk})

    assert list(by_class(own)) == ["8C"]
    for refused in (other, elsewhere):
        assert refused.status_code == 200
        html = refused.content.decode()
        assert "Choose a class from the list: that one is not a class you can see." in html
        assert "these figures are for all learners at every date" in html
        # Their own learners' figures only, never 7B's 7 learners.
        assert figures(refused)["Learners registered"] == "3"
        assert list(by_class(refused)) == ["8C"]


def test_a_teacher_dashboard_counts_exactly_the_completed_pupils_their_class_page_lists(classes):
    client = signed_in(classes["tara"])

    class_page = client.get(f"/classes/{classes['8C'].pk}/").content.decode()
    dashboard = client.get("/dashboard/")

    assert class_page.count("Completed") >= 2  # each of the 2 pupils, by name
    # Was "fewer than 5", though the class page says who finished, one by one.
    assert figures(dashboard)["Learners assessed"] == "2"
    assert by_class(dashboard)["8C"][:2] == ["3", "2"]


def test_with_fewer_assessed_than_the_smallest_group_no_result_is_broken_down(classes):
    response = signed_in(classes["dsl"]).get("/dashboard/", {"group": classes["8C"].pk})

    html = response.content.decode()
    assert figures(response)["Learners assessed"] == "2"
    assert "so their risk levels and focus areas are not shown" in html
    assert "<caption>Learners by risk level</caption>" not in html
    assert "Sleep" not in html


def test_a_class_big_enough_keeps_its_risk_levels_protected_as_before(classes):
    response = signed_in(classes["dsl"]).get("/dashboard/", {"group": classes["7B"].pk})

    html = response.content.decode()
    risk = html.split("<caption>Learners by risk level</caption>")[1].split("</table>")[0]
    cells = re.findall(r"<td>([^<]+)</td>", risk)
    # HIGH 3 and LOW 3: each "fewer than 5", beside an exact total of 6.
    assert cells == ["fewer than 5", "fewer than 5", "6"]


@pytest.mark.backend  # query count
def test_the_by_class_table_costs_the_same_queries_for_2_classes_or_12(classes):
    client = signed_in(classes["dsl"])
    client.get("/dashboard/")  # the session's activity time is saved now, not below

    def queries() -> int:
        with CaptureQueriesContext(connection) as captured:
            assert client.get("/dashboard/").status_code == 200
        return len(captured)

    few = queries()
    for number in range(10):
        group = make_group(f"Set {number}")
        learner = cohort_learner()
        put_in_group(group, learner)
        completed(learner, "2026-09-10")
    assert queries() == few
