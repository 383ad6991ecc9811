"""Safeguarding stays within the school first: its leads, its time, then the trust's leads."""

from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.core import mail

from accounts.models import StaffRole
from safeguarding.models import Alert
from safeguarding.services import alerts_escalate_due, escalation_deadline
from schools.context import working_in
from schools.models import PartnerSettings, School, first_school_id
from tests.factories import DSL_ON_DUTY_EMAIL, make_staff, signed_in
from tests.journeys import page_showing, register_pupil
from tests.safeguarding_support import finish_with_labels

pytestmark = pytest.mark.django_db

OAK_DSL = "olive.dsl@oak.example"
TRUST_LEAD = "tia.trust@trust.example"


def with_email(user, email):
    user.email = email
    user.save(update_fields=["email"])
    return user


@pytest.fixture
def oak():
    """A second school, with its own DSL and a slower escalation time."""
    school = School.objects.create(code="100002", name="Oak Primary")
    PartnerSettings.objects.create(school=school, alert_escalate_minutes=120)
    with_email(make_staff("olive.dsl", role=StaffRole.DSL, school=school), OAK_DSL)
    return school


@pytest.fixture
def trust_lead(db):
    return with_email(make_staff("tia.trust", role=StaffRole.TRUST_SAFEGUARDING_LEAD), TRUST_LEAD)


def test_an_alert_reaches_its_schools_leads_then_the_trusts_never_another_schools(
    upstream, staff, oak, trust_lead
):
    first = School.objects.get(pk=first_school_id())
    PartnerSettings.objects.filter(school=first).update(alert_escalate_minutes=15)
    pupil = register_pupil(staff)
    assert pupil.school == first
    alert = Alert.objects.get(
        attempt=finish_with_labels(upstream, pupil, needs_help="Yes - priority")
    )
    assert alert.school == first
    (raised,) = mail.outbox
    assert DSL_ON_DUTY_EMAIL in raised.to
    assert OAK_DSL not in raised.to and TRUST_LEAD not in raised.to
    # The school's own time decides, not the other school's two hours.
    assert alert.escalate_at == escalation_deadline(alert.raised_at, PartnerSettings.of(first.pk))
    assert alert.escalate_at != escalation_deadline(alert.raised_at, PartnerSettings.of(oak.pk))
    mail.outbox.clear()

    assert alerts_escalate_due(now=alert.escalate_at - timedelta(seconds=1)) == 0
    assert alerts_escalate_due(now=alert.escalate_at + timedelta(seconds=1)) == 1

    (escalated,) = mail.outbox
    assert "not yet acknowledged" in escalated.subject
    assert TRUST_LEAD in escalated.to and DSL_ON_DUTY_EMAIL in escalated.to
    assert OAK_DSL not in escalated.to
    # On the trust lead's banner, whichever school they are working in, and theirs to open.
    in_oak = signed_in(trust_lead, oak)
    page = page_showing(in_oak, "/learners/", "<h1>Learners</h1>")
    assert "1 is overdue" in page
    assert in_oak.get(f"/safeguarding/alerts/{alert.pk}/").status_code == 200
    # Its follow-up is assigned among its own school's staff, never Oak's.
    follow_up = page_showing(
        signed_in(trust_lead, "all"), f"/follow-ups/{alert.follow_up_id}/", 'name="assignee"'
    )
    assert "tia.trust" in follow_up and "olive.dsl" not in follow_up
    # Not on the other school's lead's.
    olive = User.objects.get(username="olive.dsl")
    oak_page = page_showing(signed_in(olive), "/learners/", "<h1>Learners</h1>")
    assert "overdue" not in oak_page


def test_each_school_escalates_on_its_own_time(upstream, staff, oak):
    oak_staff = make_staff("otto.admin", role=StaffRole.ADMIN, school=oak)
    with working_in(oak.pk):
        oak_pupil = register_pupil(oak_staff, "opal.pupil")
    assert oak_pupil.school == oak
    alert = Alert.objects.get(
        attempt=finish_with_labels(upstream, oak_pupil, needs_help="Yes - priority")
    )
    assert alert.school == oak
    (raised,) = mail.outbox
    assert raised.to == [OAK_DSL]
    # Oak's two hours of school time, not the first school's default thirty minutes.
    first = PartnerSettings.of(first_school_id())
    assert alert.escalate_at == escalation_deadline(alert.raised_at, PartnerSettings.of(oak.pk))
    assert alert.escalate_at > escalation_deadline(alert.raised_at, first)


def test_assessments_are_shut_only_in_the_school_without_a_dsl(upstream, staff):
    elm = School.objects.create(code="100003", name="Elm Academy")
    elm_admin = make_staff("eve.admin", role=StaffRole.ADMIN, school=elm)
    with working_in(elm.pk):
        elm_pupil = register_pupil(elm_admin, "ezra.pupil")
    pupil = register_pupil(staff)

    shut = signed_in(elm_pupil.user).get("/me/").content.decode()
    open_page = signed_in(pupil.user).get("/me/").content.decode()
    assert "Start my assessment" in open_page
    assert "Start my assessment" not in shut and "My assessments" in shut
    # The school's staff are told; the other school's are not.
    elm_page = page_showing(signed_in(elm_admin), "/learners/", "<h1>Learners</h1>")
    first_page = page_showing(signed_in(staff), "/learners/", "<h1>Learners</h1>")
    assert "safeguarding lead" in elm_page.lower()
    assert "assessments cannot start" not in first_page.lower()
