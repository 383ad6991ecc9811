"""A pupil asks to talk to someone; assessments wait for a safeguarding lead."""

import pytest
from django.core import mail

from accounts.models import StaffRole
from audit.models import AuditEvent
from followups.models import FollowUp
from learners.models import Level
from safeguarding.models import Alert
from staff.services import staff_add
from tests.factories import PASSWORD, make_learner, make_staff, signed_in
from tests.journeys import page_showing, register_pupil


@pytest.mark.django_db
def test_every_learner_page_offers_to_talk_to_someone(learner):
    client = signed_in(learner.user)
    for path in ["/me/", "/me/talk/"]:
        assert 'href="/me/talk/"' in client.get(path).content.decode(), path


@pytest.mark.django_db
def test_asking_opens_a_priority_follow_up_and_an_alert_like_a_priority_result(learner):
    client = signed_in(learner.user)

    page = client.post("/me/talk/").content.decode()

    follow_up = FollowUp.objects.get(learner=learner)
    assert follow_up.priority and follow_up.source == FollowUp.Source.ASKED
    alert = Alert.objects.get(kind=Alert.Kind.ASKED)
    assert alert.learner == learner and alert.follow_up == follow_up
    assert len(mail.outbox) == 1
    assert learner.first_name not in mail.outbox[0].body
    assert AuditEvent.objects.filter(action=AuditEvent.Action.HELP_ASKED).count() == 1
    # Plain about what happens and when; never that someone is on the way.
    assert "during school hours (Monday to Friday, 08:30 to 16:00)" in page
    assert "Childline" in page and "0800 1111" in page and "85258" in page
    for promise in ["on the way", "on their way", "coming to", "right away"]:
        assert promise not in page.lower()


@pytest.mark.django_db
def test_asking_twice_before_anyone_acknowledges_adds_nothing(learner):
    client = signed_in(learner.user)
    client.post("/me/talk/")

    page = client.post("/me/talk/").content.decode()

    assert "You asked already" in page
    assert Alert.objects.count() == 1 and FollowUp.objects.count() == 1
    assert len(mail.outbox) == 1


@pytest.mark.django_db
def test_a_primary_pupil_is_told_in_simpler_words(db):
    pupil = make_learner("pip.primary", "u-pip")
    pupil.level = Level.PRIMARY
    pupil.save(update_fields=["level"])

    page = signed_in(pupil.user).get("/me/talk/").content.decode()

    assert "grown-up" in page


@pytest.mark.django_db
def test_a_request_shows_in_the_follow_up_queue_first(learner, staff):
    signed_in(learner.user).post("/me/talk/")

    page = signed_in(staff).get("/follow-ups/").content.decode()

    assert "Asked to talk to someone" in page and "Priority" in page


@pytest.mark.no_dsl
@pytest.mark.django_db
def test_without_a_dsl_with_an_email_assessments_do_not_start(learner, upstream):
    make_staff("no.email.dsl", role=StaffRole.DSL)  # a DSL nobody can email does not count
    client = signed_in(learner.user)

    page = client.post("/me/start/").content.decode()

    assert "Not open yet" in page
    assert learner.attempts.count() == 0
    assert upstream.state.count(endpoint="next-assessment") == 0


@pytest.mark.no_dsl
@pytest.mark.django_db
def test_staff_are_told_why_until_a_dsl_exists_then_assessments_open(upstream):
    admin = make_staff("ann.admin", role=StaffRole.ADMIN)
    learner = register_pupil(admin)
    banner = "Learners cannot start an assessment until at least one designated"
    assert banner in signed_in(admin).get("/learners/").content.decode()

    staff_add(
        username="della.dsl",
        email="della@school.example",
        role=StaffRole.DSL,
        password=PASSWORD,
        added_by=admin,
        address=None,
    )

    assert banner not in page_showing(signed_in(admin), "/learners/", "<h1>Learners</h1>")
    response = signed_in(learner.user).post("/me/start/")
    assert response.status_code == 302 and learner.attempts.count() == 1


@pytest.mark.no_dsl
@pytest.mark.django_db
def test_my_assessments_says_kindly_that_nothing_is_open_yet(learner):
    page = signed_in(learner.user).get("/me/").content.decode()

    assert "Not open yet." in page and "Start my assessment" not in page
