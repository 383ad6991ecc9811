"""Classes where staff look: the `group` filter and the Class column of lists and exports."""

import csv
import io
import re

import pytest
from django.db import connection
from django.http import StreamingHttpResponse
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from accounts.models import StaffRole
from classes.models import SchoolGroup
from schools.models import PartnerSettings, School
from tests.factories import (
    SLEEP,
    flagged,
    make_group,
    make_learner,
    make_staff,
    put_in_group,
    signed_in,
)


def rows_of(response) -> list[dict[str, str]]:
    """Return the CSV body of a streamed download as dicts."""
    assert isinstance(response, StreamingHttpResponse)
    text = b"".join(response.streaming_content).decode("utf-8")
    return list(csv.DictReader(io.StringIO(text.lstrip("\ufeff"))))


def listed(response) -> list[str]:
    """Return the learner names the list or the queue shows, in order."""
    return re.findall(
        r'<th scope="row"><a href="/learners/\d+/">([^<]+)</a>', response.content.decode()
    )


def class_cells(response) -> list[str]:
    """Return the Class column of the learner list, row by row."""
    rows = response.content.decode().split("<tbody>")[1].split("</tbody>")[0].split("<tr>")[1:]
    # Username, level, then the class.
    return [re.findall(r"<td>([^<]*)</td>", row)[2] for row in rows]


@pytest.fixture
def school(db):
    """7B (Tara's) and 8C (Omar's), their pupils, a pupil in no class, another school's 9Z."""
    class_7b = make_group("7B")
    class_8c = make_group("8C")
    ann, ben, cat, dan = (
        make_learner(f"{name}.pupil", f"u-{name}") for name in ("ann", "ben", "cat", "dan")
    )
    put_in_group(class_7b, ann, cat)
    put_in_group(class_8c, ben, cat)
    bravo = School.objects.create(code="BRAVO", name="Bravo Academy")
    return {
        "7B": class_7b,
        "8C": class_8c,
        "9Z": make_group("9Z", school=bravo),
        "tara": make_staff("tara.teacher", role=StaffRole.TEACHER, groups=[class_7b]),
        "omar": make_staff("omar.teacher", role=StaffRole.TEACHER, groups=[class_8c]),
        # A head of year: the whole school, and teaches 8C herself.
        "ada": make_staff("ada.admin", role=StaffRole.ADMIN, groups=[class_8c]),
        "dsl": make_staff("dee.dsl"),
        "learners": (ann, ben, cat, dan),
    }


def test_the_learner_list_filters_by_class_and_shows_each_learners_classes(school):
    client = signed_in(school["ada"])

    everyone = client.get("/learners/")
    in_7b = client.get("/learners/", {"group": school["7B"].pk})

    assert everyone.status_code == 200
    assert listed(everyone) == ["Ann Pupil", "Ben Pupil", "Cat Pupil", "Dan Pupil"]
    assert '<th scope="col">Class</th>' in everyone.content.decode()
    assert class_cells(everyone) == ["7B", "8C", "7B, 8C", "–"]
    assert in_7b.status_code == 200
    assert listed(in_7b) == ["Ann Pupil", "Cat Pupil"]


def test_a_members_own_classes_come_first_in_the_menu(school):
    html = signed_in(school["ada"]).get("/learners/").content.decode()

    menu = html.split('name="group"')[1].split("</select>")[0]
    assert re.findall(r'<optgroup label="([^"]+)">', menu) == ["Your classes", "Other classes"]
    own, other = menu.split('label="Other classes"')
    assert "8C (" in own and "7B (" not in own
    assert "7B (" in other
    assert "9Z" not in menu  # another school's class


def test_a_teacher_is_offered_their_own_classes_only(school):
    html = signed_in(school["tara"]).get("/learners/").content.decode()

    menu = html.split('name="group"')[1].split("</select>")[0]
    assert "7B (" in menu
    assert "8C" not in menu and "9Z" not in menu


@pytest.mark.parametrize("other", ["8C", "9Z", "nonsense"])
def test_a_class_the_teacher_does_not_see_lists_no_one_and_says_why(school, other):
    group = school[other].pk if other in school else other

    response = signed_in(school["tara"]).get("/learners/", {"group": group})

    assert response.status_code == 200
    html = response.content.decode()
    assert "There is a problem" in html
    assert "Choose a class from the list: that one is not a class you can see." in html
    assert "No learners are listed" in html
    assert listed(response) == []
    assert "Ben Pupil" not in html and "Ann Pupil" not in html


def test_another_schools_class_is_refused_to_a_whole_school_role_too(school):
    response = signed_in(school["ada"]).get("/learners/", {"group": school["9Z"].pk})

    assert "not a class you can see" in response.content.decode()
    assert listed(response) == []


def test_an_archived_class_leaves_the_menu_but_its_filter_still_works(school):
    SchoolGroup.objects.filter(pk=school["7B"].pk).update(archived_at=timezone.now())
    school["7B"].memberships.update(left_at=timezone.now())
    client = signed_in(school["ada"])

    menu = client.get("/learners/").content.decode().split('name="group"')[1].split("</select>")[0]
    response = client.get("/learners/", {"group": school["7B"].pk})

    assert "8C (" in menu and "7B" not in menu
    assert listed(response) == ["Ann Pupil", "Cat Pupil"]
    chosen = f'<option value="{school["7B"].pk}" selected>7B'
    assert chosen in response.content.decode()


def test_the_filter_stays_in_the_page_links_and_the_export_link(school, monkeypatch):
    monkeypatch.setattr("learners.views.PAGE_SIZE", 1)

    html = signed_in(school["ada"]).get("/learners/", {"group": school["7B"].pk}).content.decode()

    group = f"group={school['7B'].pk}"
    assert re.search(rf'href="\?{group}&amp;page=2" rel="next"', html)
    assert re.search(rf'href="/learners/learners.csv\?{group}" download', html)


@pytest.mark.backend  # query count
def test_the_class_column_costs_the_same_queries_for_2_learners_or_20(school):
    client = signed_in(school["ada"])
    client.get("/learners/")  # the session's activity time is saved now, not below

    def queries() -> int:
        with CaptureQueriesContext(connection) as captured:
            assert client.get("/learners/").status_code == 200
        return len(captured)

    few = queries()
    for number in range(18):
        learner = make_learner(f"extra{number}.pupil", f"u-extra{number}")
        put_in_group(school["7B"], learner)
        put_in_group(school["8C"], learner)
    assert queries() == few


def test_the_follow_up_queue_filters_by_class_and_shows_each_learners_classes(school):
    ann, ben, cat, _dan = school["learners"]
    for learner in (ann, ben, cat):
        flagged(learner, SLEEP)
    client = signed_in(school["dsl"])

    everyone = client.get("/follow-ups/")
    in_8c = client.get("/follow-ups/", {"group": school["8C"].pk})

    assert everyone.status_code == 200
    html = everyone.content.decode()
    assert '<th scope="col">Class</th>' in html
    assert '<td data-label="Class">7B, 8C</td>' in html
    assert sorted(listed(everyone)) == ["Ann Pupil", "Ben Pupil", "Cat Pupil"]
    assert sorted(listed(in_8c)) == ["Ben Pupil", "Cat Pupil"]


@pytest.mark.backend  # query count
def test_the_queue_class_column_costs_the_same_queries_for_1_item_or_10(school):
    client = signed_in(school["dsl"])
    flagged(school["learners"][2], SLEEP)
    client.get("/follow-ups/")  # the session's activity time is saved now, not below

    def queries() -> int:
        with CaptureQueriesContext(connection) as captured:
            assert client.get("/follow-ups/").status_code == 200
        return len(captured)

    few = queries()
    for number in range(9):
        learner = make_learner(f"more{number}.pupil", f"u-more{number}")
        put_in_group(school["7B"], learner)
        put_in_group(school["8C"], learner)
        flagged(learner, SLEEP)
    assert queries() == few


def test_a_teacher_cannot_read_another_class_follow_ups(school):
    PartnerSettings.current()
    PartnerSettings.objects.update(teachers_see_results=True)
    ann, ben, _cat, _dan = school["learners"]
    flagged(ann, SLEEP)
    flagged(ben, SLEEP)
    client = signed_in(school["tara"])

    own = client.get("/follow-ups/", {"group": school["7B"].pk})
    other = client.get("/follow-ups/", {"group": school["8C"].pk})

    assert listed(own) == ["Ann Pupil"]
    assert other.status_code == 200
    assert "not a class you can see" in other.content.decode()
    assert "No follow-ups are listed" in other.content.decode()
    assert listed(other) == []


def test_the_learners_export_has_a_classes_column_last_and_takes_the_filter(school):
    client = signed_in(school["ada"])

    everyone = rows_of(client.get("/learners/learners.csv"))
    in_8c = rows_of(client.get("/learners/learners.csv", {"group": school["8C"].pk}))

    assert list(everyone[0])[-2:] == ["left_on", "classes"]
    assert {row["username"]: row["classes"] for row in everyone} == {
        "ann.pupil": "7B",
        "ben.pupil": "8C",
        "cat.pupil": "7B; 8C",
        "dan.pupil": "",
    }
    assert [row["username"] for row in in_8c] == ["ben.pupil", "cat.pupil"]


def test_an_export_of_a_class_the_teacher_does_not_see_exports_nothing(school):
    response = signed_in(school["tara"]).get("/learners/learners.csv", {"group": school["8C"].pk})

    assert response.status_code == 302
    assert response["Location"] == f"/learners/?group={school['8C'].pk}"
    assert not isinstance(response, StreamingHttpResponse)


def test_the_results_export_has_a_classes_column_last_and_takes_the_filter(school):
    ann, ben, cat, _dan = school["learners"]
    for learner in (ann, ben, cat):
        flagged(learner, SLEEP)
    client = signed_in(school["dsl"])

    everyone = rows_of(client.get("/learners/results.csv"))
    in_7b = rows_of(client.get("/learners/results.csv", {"group": school["7B"].pk}))
    refused = client.get("/learners/results.csv", {"group": school["9Z"].pk})

    assert list(everyone[0])[-2:] == ["focus_areas_needing_help", "classes"]
    assert {row["username"]: row["classes"] for row in everyone} == {
        "ann.pupil": "7B",
        "ben.pupil": "8C",
        "cat.pupil": "7B; 8C",
    }
    assert sorted(row["username"] for row in in_7b) == ["ann.pupil", "cat.pupil"]
    assert refused.status_code == 302


def test_both_exports_keep_a_class_name_with_a_comma_whole_and_never_run_one(school):
    ann, ben, _cat, _dan = school["learners"]
    put_in_group(make_group("Maths, set 1"), ann, ben)
    put_in_group(make_group('=HYPERLINK("x")'), ann)
    flagged(ann, SLEEP)
    client = signed_in(school["dsl"])

    learners = rows_of(client.get("/learners/learners.csv"))
    results = rows_of(client.get("/learners/results.csv"))

    for rows in (learners, results):
        classes = {row["username"]: row["classes"] for row in rows}
        # "; " between classes, as between focus areas: a comma belongs to a name.
        assert sorted(classes["ann.pupil"].split("; ")) == [
            '\'=HYPERLINK("x")',
            "7B",
            "Maths, set 1",
        ]
        assert not classes["ann.pupil"].startswith("=")
    assert {row["username"]: row["classes"] for row in learners}["ben.pupil"] == (
        "8C; Maths, set 1"
    )
