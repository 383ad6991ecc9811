"""The dashboard's figures and the CSV files, per role and school: each counts what it sees."""

import csv
import io
import re

import pytest
from django.contrib.auth.models import User

from accounts.models import StaffRole
from assessments.models import AssessmentAttempt
from classes.models import SchoolGroup
from learners.models import Learner
from schools.models import School
from tests.factories import (
    SLEEP,
    attempt,
    cohort_learner,
    completed,
    flagged,
    make_group,
    make_staff,
    put_in_group,
    signed_in,
)

ROLES = ["admin", "teacher_a", "teacher_b", "head_of_year", "dsl"]


@pytest.fixture
def school(db, settings) -> dict[str, User]:
    """Class A (3 learners), class B (2), Year 7 (class A and one more), one learner in none."""
    settings.DASHBOARD_MIN_GROUP_SIZE = 1  # exact figures: the counting is what is tested
    class_a, class_b = make_group("7A"), make_group("7B")
    year = make_group("Year 7", kind=SchoolGroup.Kind.YEAR_GROUP)
    a1, a2, a3 = (cohort_learner(name=f"ann{n}") for n in (1, 2, 3))
    b1, b2 = (cohort_learner(name=f"ben{n}") for n in (1, 2))
    y4, loner = cohort_learner(name="yan4"), cohort_learner(name="lou5")
    put_in_group(class_a, a1, a2, a3)
    put_in_group(class_b, b1, b2)
    put_in_group(year, a1, a2, a3, y4)
    completed(a1, "2026-09-10", risk="HIGH", areas={"Sleep": "yes"})
    completed(b1, "2026-09-10", risk="LOW", areas={"Sleep": "no"})
    completed(y4, "2026-09-11", risk="HIGH", areas={"Exams": "yes"})
    completed(loner, "2026-09-12", risk="MODERATE", areas={"Sleep": "yes"})
    attempt(a2, state=AssessmentAttempt.State.IN_PROGRESS)
    return {
        "admin": make_staff("ada.admin", role=StaffRole.ADMIN),
        "teacher_a": make_staff("tara.teacher", role=StaffRole.TEACHER, groups=[class_a]),
        "teacher_b": make_staff("tom.teacher", role=StaffRole.TEACHER, groups=[class_b]),
        "head_of_year": make_staff("hugo.hoy", role=StaffRole.HEAD_OF_YEAR, groups=[year]),
        "dsl": make_staff("dee.dsl", role=StaffRole.DSL),
    }


def headline(page: str) -> dict[str, str]:
    pairs = re.findall(
        r'headline-count[^"]*">([^<]+)</span>\s*<span class="headline-label">(?:<a [^>]+>)?([^<]+)',
        page,
    )
    return {label: text for text, label in pairs}


def risk_table(page: str) -> dict[str, str] | None:
    if "<caption>Learners by risk level</caption>" not in page:
        return None
    table = page.split("<caption>Learners by risk level</caption>")[1].split("</tbody>")[0]
    rows = re.findall(r'<th scope="row">(.*?)</th><td>(.*?)</td>', table)
    return {re.sub(r"<[^>]+>|: follow-ups", "", head): cell for head, cell in rows}


def csv_of(response) -> list[dict[str, str]]:
    text = b"".join(response.streaming_content).decode("utf-8-sig")
    return list(csv.DictReader(io.StringIO(text)))


EXPECTED_DASHBOARD = {
    # role: (registered, assessed, in progress, risk levels or None when not shown)
    "admin": ("7", "4", "1", None),
    "teacher_a": ("3", "1", "1", None),
    "teacher_b": ("2", "1", "0", None),
    "head_of_year": ("4", "2", "1", {"HIGH": "2"}),
    "dsl": ("7", "4", "1", {"HIGH": "2", "MODERATE": "1", "LOW": "1"}),
}


@pytest.mark.parametrize("role", ROLES)
def test_the_dashboard_counts_only_the_learners_and_results_the_role_sees(school, role):
    page = signed_in(school[role]).get("/dashboard/").content.decode()

    registered, assessed, in_progress, risks = EXPECTED_DASHBOARD[role]
    figures = headline(page)
    assert figures["Learners registered"] == registered
    assert figures["Learners assessed"] == assessed
    assert figures["Learners with an assessment in progress"] == in_progress
    assert risk_table(page) == risks
    assert ("Needs help, by focus area" in page) == (risks is not None)


EXPECTED_LEARNERS_CSV = {
    # role: (usernames, whether the risk column is filled)
    "admin": ({"ann1", "ann2", "ann3", "ben1", "ben2", "yan4", "lou5"}, False),
    "teacher_a": ({"ann1", "ann2", "ann3"}, False),
    "teacher_b": ({"ben1", "ben2"}, False),
    "head_of_year": ({"ann1", "ann2", "ann3", "yan4"}, True),
    "dsl": ({"ann1", "ann2", "ann3", "ben1", "ben2", "yan4", "lou5"}, True),
}


@pytest.mark.parametrize("role", ROLES)
def test_the_learners_csv_holds_only_the_roles_learners(school, role):
    rows = csv_of(signed_in(school[role]).get("/learners/learners.csv"))

    usernames, with_risk = EXPECTED_LEARNERS_CSV[role]
    assert {row["username"] for row in rows} == usernames
    risks = {row["latest_risk_level"] for row in rows}
    assert (risks - {""} != set()) == with_risk


EXPECTED_RESULTS_CSV = {
    "admin": None,  # 404: admins do not read results unless the partner says so
    "teacher_a": None,
    "teacher_b": None,
    "head_of_year": {"ann1", "yan4"},
    "dsl": {"ann1", "ben1", "yan4", "lou5"},
}


@pytest.mark.parametrize("role", ROLES)
def test_the_results_csv_holds_only_the_results_the_role_reads(school, role):
    response = signed_in(school[role]).get("/learners/results.csv")

    expected = EXPECTED_RESULTS_CSV[role]
    if expected is None:
        assert response.status_code == 404
    else:
        assert {row["username"] for row in csv_of(response)} == expected


@pytest.mark.parametrize("role", ROLES)
def test_the_learner_search_finds_only_the_roles_learners(school, role):
    page = signed_in(school[role]).get("/learners/", {"q": "n"}).content.decode()

    usernames, _with_risk = EXPECTED_LEARNERS_CSV[role]
    shown = set(re.findall(r"<td>((?:ann|ben|yan|lou)\d)</td>", page))
    assert shown == {name for name in usernames if "n" in name}


# Several schools: a school's staff count that school's learners alone ----------------------------


def in_school(school: School, *learners: Learner) -> None:
    Learner.objects.filter(pk__in=[learner.pk for learner in learners]).update(school=school)


@pytest.fixture
def schools(db, settings) -> dict[str, User]:
    """Our school: 3 learners, 2 assessed; Hill Academy: 2 learners, 1 assessed, a class of 1."""
    settings.DASHBOARD_MIN_GROUP_SIZE = 1  # exact figures: the counting is what is tested
    ours = School.everyone()[0]
    hill = School.objects.create(code="HILL", name="Hill Academy")
    amy, ali, abe = (cohort_learner(name=name) for name in ("amy", "ali", "abe"))
    hal, hob = cohort_learner(name="hal"), cohort_learner(name="hob")
    in_school(ours, amy, ali, abe)
    in_school(hill, hal, hob)
    completed(amy, "2026-09-10", risk="HIGH", areas={"Sleep": "yes"})
    completed(ali, "2026-09-10", risk="LOW", areas={"Sleep": "no"})
    completed(hal, "2026-09-11", risk="MODERATE", areas={"Exams": "yes"})
    attempt(abe, state=AssessmentAttempt.State.IN_PROGRESS)
    attempt(hob, state=AssessmentAttempt.State.IN_PROGRESS)
    attempt(hal, state=AssessmentAttempt.State.IN_PROGRESS, offered="2026-09-12")
    hill_class = make_group("9H")
    hill_class.school = hill
    hill_class.save()
    put_in_group(hill_class, hob)
    return {
        "ours": make_staff("dee.dsl", role=StaffRole.DSL, school=ours),
        "hill": make_staff("hana.dsl", role=StaffRole.DSL, school=hill),
        "hill_teacher": make_staff(
            "tim.teacher", role=StaffRole.TEACHER, school=hill, groups=[hill_class]
        ),
    }


EXPECTED_IN_SCHOOLS = {
    # who: (registered, assessed, in progress, risk levels or None when not shown)
    "ours": ("3", "2", "1", {"HIGH": "1", "LOW": "1"}),
    "hill": ("2", "1", "2", {"MODERATE": "1"}),
    "hill_teacher": ("1", "0", "1", None),
}


@pytest.mark.parametrize("who", EXPECTED_IN_SCHOOLS)
def test_a_schools_dashboard_counts_its_own_learners_only(schools, who):
    response = signed_in(schools[who]).get("/dashboard/")

    assert response.status_code == 200
    page = response.content.decode()
    registered, assessed, in_progress, risks = EXPECTED_IN_SCHOOLS[who]
    figures = headline(page)
    assert figures["Learners registered"] == registered
    assert figures["Learners assessed"] == assessed
    assert figures["Learners with an assessment in progress"] == in_progress
    assert risk_table(page) == risks


def test_a_schools_follow_up_queue_lists_its_own_items_only(schools):
    ours = Learner.objects.get(username="amy")
    theirs = Learner.objects.get(username="hal")
    flagged(ours, SLEEP)
    flagged(theirs, SLEEP)

    for who, shown, hidden in (("ours", ours, theirs), ("hill", theirs, ours)):
        response = signed_in(schools[who]).get("/follow-ups/")
        assert response.status_code == 200
        page = response.content.decode()
        assert shown.display_name in page
        assert hidden.display_name not in page
