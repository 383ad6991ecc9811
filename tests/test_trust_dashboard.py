"""The trust's dashboard: one row per school, small counts protected per school, honest totals."""

import re
from datetime import timedelta
from html import unescape

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from accounts.models import StaffRole
from audit.models import AuditEvent
from learners.models import Learner
from safeguarding.models import Alert
from schools.context import working_in
from schools.models import PartnerSettings, School
from tests.factories import cohort_learner, completed, make_staff, settings_form

SLEEP, FOCUS = "SLEEP & TIREDNESS", "FOCUS & ATTENTION"
LEARNERS_AND_ALERTS = "Learners and safeguarding alerts, by school"
NEEDS_HELP = "Learners needing help, by school and focus area"
TOTAL = "All schools shown"
WITHHELD = "Withheld by the school"


def table(response, caption: str) -> dict[str, list[str]]:
    """Return the table with this caption: row header -> the text of each cell, in order.

    The header row is keyed "School"; the total row is in the table too.
    """
    html = response.content.decode()
    assert f">{caption}</caption>" in html, f"no table {caption!r} on the page"
    body = html.split(f">{caption}</caption>")[1].split("</table>")[0]
    rows = {}
    for row in re.findall(r"<tr>(.*?)</tr>", body, flags=re.S):
        cells = [
            unescape(re.sub(r"<[^>]+>", "", cell)).strip()
            for cell in re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", row, flags=re.S)
        ]
        rows[cells[0]] = cells[1:]
    return rows


def pupils(school: School, count: int, *, areas: dict[str, str] | None = None) -> list[Learner]:
    """Register `count` learners in a school, each with a completed assessment."""
    made = []
    with working_in(school.pk):
        for _ in range(count):
            learner = cohort_learner()
            completed(learner, "2026-09-10", areas=areas or {SLEEP: "yes", FOCUS: "no"})
            made.append(learner)
    return made


def alert(school: School, *, minutes: int | None, kind: str = Alert.Kind.RESULT) -> Alert:
    """Record an alert raised a day ago, acknowledged after `minutes` (None: still waiting)."""
    raised = timezone.now() - timedelta(days=1)
    return Alert.objects.create(
        kind=kind,
        reason=Alert.Reason.TEST if kind == Alert.Kind.TEST else Alert.Reason.PRIORITY,
        school=school,
        raised_at=raised,
        escalate_at=raised + timedelta(minutes=30),
        acknowledged_at=None if minutes is None else raised + timedelta(minutes=minutes),
    )


def withhold(school: School) -> None:
    PartnerSettings.objects.filter(pk=PartnerSettings.of(school.pk).pk).update(
        withhold_from_trust=True
    )


@pytest.fixture
def big(db) -> School:
    return School.objects.create(code="BEECH", name="Beech Academy")


@pytest.fixture
def small(db) -> School:
    return School.objects.create(code="ROWAN", name="Rowan Primary")


@pytest.fixture
def viewer_client(client, db):
    client.force_login(make_staff("vera.viewer", role=StaffRole.TRUST_VIEWER))
    return client


def test_a_small_schools_count_is_shown_as_fewer_than_5_and_left_out_of_the_total(
    viewer_client, big, small
):
    pupils(big, 40)
    pupils(small, 3)

    response = viewer_client.get("/trust/")

    assert response.status_code == 200
    areas = table(response, NEEDS_HELP)
    assert areas["School"] == [SLEEP]  # FOCUS never needed help: no column
    assert areas["Beech Academy"] == ["40"]
    assert areas["Rowan Primary"] == ["fewer than 5"]
    # 40, not 43: the total adds only the figures shown, so 43 - 40 cannot reveal the 3.
    assert areas[TOTAL] == ["40"]
    figures = table(response, LEARNERS_AND_ALERTS)
    # Registered (exact, as on every dashboard), assessed (protected), alerts, median.
    assert figures["Beech Academy"][:2] == ["40", "40"]
    assert figures["Rowan Primary"][:2] == ["3", "fewer than 5"]
    assert figures[TOTAL][:2] == ["43", "40"]
    assert "Totals add up the figures shown" in response.content.decode()


def test_a_withheld_school_shows_as_withheld_and_adds_nothing_to_the_totals(
    viewer_client, big, small
):
    pupils(big, 5)
    pupils(small, 6)
    alert(small, minutes=5)
    withhold(small)

    response = viewer_client.get("/trust/")

    assert response.status_code == 200
    figures = table(response, LEARNERS_AND_ALERTS)
    assert figures["Beech Academy"] == ["5", "5", "0", "not shown: fewer than 5 acknowledged"]
    assert figures["Rowan Primary"] == [WITHHELD]
    assert figures[TOTAL] == ["5", "5", "0", "not shown: fewer than 5 acknowledged"]
    areas = table(response, NEEDS_HELP)
    assert areas["Rowan Primary"] == [WITHHELD]
    assert areas[TOTAL] == ["5"]
    assert "1 school has withheld its figures from the trust" in response.content.decode()


@pytest.mark.backend  # the medians: window functions over a difference of times
def test_real_alerts_are_counted_per_school_with_their_median_time_to_acknowledge(
    viewer_client, big, small
):
    for minutes in (10, 20, 30, 40, 50, 60):
        alert(big, minutes=minutes)
    alert(big, minutes=None)  # still waiting: raised, not in the median
    alert(big, minutes=1, kind=Alert.Kind.TEST)  # a test alert is not a real one
    alert(small, minutes=15)

    response = viewer_client.get("/trust/")

    figures = table(response, LEARNERS_AND_ALERTS)
    assert figures["Beech Academy"][2:] == ["7", "35 min"]
    # One alert's median would be that incident's own time: not shown below the group size.
    assert figures["Rowan Primary"][2:] == ["fewer than 5", "not shown: fewer than 5 acknowledged"]
    # The total adds the counts shown; the trust's median is over every alert of the schools
    # shown (10, 15, 20, 30, 40, 50, 60 minutes).
    assert figures[TOTAL][2:] == ["7", "30 min"]


def test_the_page_runs_the_same_queries_for_two_schools_as_for_six(viewer_client, big, small):
    pupils(big, 2)
    alert(big, minutes=5)

    def queries() -> int:
        with CaptureQueriesContext(connection) as captured:
            assert viewer_client.get("/trust/").status_code == 200
        return len(captured)

    queries()  # the session, the user and the list of schools come into the cache
    few = queries()
    for number in range(4):
        school = School.objects.create(code=f"S{number}", name=f"School {number}")
        pupils(school, 2)
        alert(school, minutes=number + 1)
    queries()
    assert queries() == few


def test_trust_roles_see_the_trust_dashboard_and_school_staff_get_a_404(client, big, small):
    for role in (StaffRole.TRUST_ADMIN, StaffRole.TRUST_SAFEGUARDING_LEAD, StaffRole.TRUST_VIEWER):
        client.force_login(make_staff(f"trust.{role}", role=role))
        response = client.get("/trust/")
        assert response.status_code == 200, role
        assert "<h1>Trust dashboard</h1>" in response.content.decode()
    for role in (StaffRole.ADMIN, StaffRole.DSL, StaffRole.TEACHER):
        client.force_login(make_staff(f"school.{role}", role=role, school=big))
        assert client.get("/dashboard/").status_code == 200, role  # staff, in their school
        assert client.get("/trust/").status_code == 404, role


def test_a_trust_viewer_is_sent_to_the_trust_dashboard_and_sees_no_learner_page(viewer_client, big):
    (learner,) = pupils(big, 1)

    response = viewer_client.get("/", follow=True)

    assert response.redirect_chain == [("/trust/", 302)]
    html = response.content.decode()
    nav = html.split('<nav aria-label="Main">')[1].split("</nav>")[0]
    # The trust's figures, and ending their own sessions: never a learner's page.
    assert re.findall(r"<a [^>]*>([^<]+)</a>", nav) == ["Trust dashboard", "Sign out everywhere"]
    assert "Sign out" in nav
    assert 'id="school-choice"' not in html  # no school to switch to: figures only
    for name, args in (
        ("dashboard:home", []),
        ("learners:list", []),
        ("learners:detail", [learner.pk]),
        ("learners:new", []),
        ("classes:list", []),
        ("followups:queue", []),
        ("safeguarding:alerts", []),
        ("operations", []),
        ("staff:staff_list", []),
        ("staff:settings", []),
        ("staff:sign_in_locks", []),
        ("dashboard:results_csv", []),
    ):
        path = reverse(name, args=args)
        assert viewer_client.get(path).status_code == 404, path


def test_trust_admins_and_safeguarding_leads_still_start_on_the_dashboard(client, big):
    for role in (StaffRole.TRUST_ADMIN, StaffRole.TRUST_SAFEGUARDING_LEAD):
        client.force_login(make_staff(f"trust.{role}", role=role))
        response = client.get("/")
        assert response.status_code == 302
        assert response["Location"] == "/dashboard/"
        nav = client.get("/dashboard/").content.decode().split("</nav>")[0]
        assert 'href="/trust/">Trust dashboard</a>' in nav


def test_a_one_school_deployment_shows_nothing_about_the_trust(client, superuser):
    client.force_login(superuser)  # a trust admin too, with one school
    response = client.get("/settings/")

    assert response.status_code == 200
    html = response.content.decode()
    assert "Save settings" in html
    assert 'href="/settings/">Settings</a>' in html
    assert "withhold_from_trust" not in html
    assert "Trust dashboard" not in html
    assert "school-choice" not in html


def test_a_school_admin_withholds_its_figures_and_the_change_is_audited(client, big, small):
    client.force_login(make_staff("ada.admin", role=StaffRole.ADMIN, school=small))
    page = client.get("/settings/").content.decode()
    assert 'name="withhold_from_trust"' in page
    with working_in(small.pk):
        form = settings_form(withhold_from_trust=True)

    response = client.post("/settings/", form, follow=True)

    assert "Saved." in response.content.decode()
    assert PartnerSettings.of(small.pk).withhold_from_trust is True
    assert PartnerSettings.of(big.pk).withhold_from_trust is False
    event = AuditEvent.objects.get(action=AuditEvent.Action.SETTINGS_CHANGED)
    assert event.detail == {"withhold_from_trust": True}
    assert event.actor_username == "ada.admin"
    assert event.school_id == small.pk

    with working_in(small.pk):
        form = settings_form(withhold_from_trust=False)
    client.post("/settings/", form)
    assert PartnerSettings.of(small.pk).withhold_from_trust is False
    changes = AuditEvent.objects.filter(action=AuditEvent.Action.SETTINGS_CHANGED)
    assert [event.detail for event in changes.order_by("pk")] == [
        {"withhold_from_trust": True},
        {"withhold_from_trust": False},
    ]


def test_the_trust_cannot_change_a_schools_choice_to_withhold(client, big, small):
    withhold(small)
    client.force_login(make_staff("tara.trust", role=StaffRole.TRUST_ADMIN))
    client.post("/schools/choose/", {"school": small.pk, "next": "/settings/"})
    page = client.get("/settings/").content.decode()
    assert "Only the school&#x27;s own admins can change this." in page
    with working_in(small.pk):
        form = settings_form()
    form.pop("withhold_from_trust", None)  # a disabled box is not sent, nor is an unticked one

    response = client.post("/settings/", form, follow=True)

    assert response.status_code == 200
    assert PartnerSettings.of(small.pk).withhold_from_trust is True
    assert not AuditEvent.objects.filter(action=AuditEvent.Action.SETTINGS_CHANGED).exists()
