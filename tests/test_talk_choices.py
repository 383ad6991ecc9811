"""A pupil's request says what they want to say: what about, whom, and that they feel unsafe."""

import re

import pytest
from django.core import mail

from audit.models import AuditEvent
from learners.models import Level
from safeguarding.models import Alert, AlertEmail
from schools.models import PartnerSettings
from tests.factories import make_group, make_learner, put_in_group, signed_in

TALK = "/me/talk/"


def with_contacts(learner, *, school="Mrs Khan, in room 12", group="Mr Osei, your form tutor"):
    """Give the school and the learner's class a named person to talk to."""
    PartnerSettings.current()
    PartnerSettings.objects.update(school_contact=school)
    tutor_group = make_group("9 North")
    tutor_group.contact = group
    tutor_group.save()
    put_in_group(tutor_group, learner)


def radio_labels(html: str, name: str) -> list[str]:
    """Return the labels of a radio group's choices, in order."""
    ids = re.findall(rf'<input type="radio" name="{name}" value="[^"]*"[^>]* id="([^"]+)"', html)
    return [re.search(rf'<label for="{i}">([^<]*)</label>', html).group(1) for i in ids]


def normalised(body: str) -> str:
    """Return an email body without what differs between any two alerts: its link and time."""
    body = re.sub(r"/safeguarding/alerts/\d+/", "/safeguarding/alerts/N/", body)
    return re.sub(r"raised at [^).]*", "raised at T", body)


# The form -------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_the_form_offers_their_classes_contact_then_the_schools_then_anyone(learner):
    with_contacts(learner)

    response = signed_in(learner.user).get(TALK)

    html = response.content.decode()
    assert response.status_code == 200
    assert "<legend>Who would you like to talk to?</legend>" in html
    assert radio_labels(html, "contact") == [
        "Mr Osei, your form tutor",
        "Mrs Khan, in room 12",
        "Any adult at school",
    ]
    assert "<legend>What is it about?</legend>" in html
    assert radio_labels(html, "about")[-1] == "I&#x27;d rather say in person"
    assert 'type="checkbox" name="unsafe"' in html and "I don't feel safe right now" in html


@pytest.mark.django_db
def test_without_contacts_the_form_offers_any_adult_at_school(learner):
    html = signed_in(learner.user).get(TALK).content.decode()

    assert "<legend>Who would you like to talk to?</legend>" in html
    assert radio_labels(html, "contact") == ["Any adult at school"]


@pytest.mark.django_db
def test_a_primary_pupil_is_offered_choices_in_short_child_words(learner):
    learner.level = Level.PRIMARY
    learner.save(update_fields=["level"])

    html = signed_in(learner.user).get(TALK).content.decode()

    assert radio_labels(html, "about") == [
        "How I feel",
        "Friends",
        "Home",
        "School work",
        "Being online",
        "My body",
        "I&#x27;d rather say it to a grown-up",
    ]
    assert radio_labels(html, "contact") == ["Any grown-up at school"]


@pytest.mark.django_db
@pytest.mark.parametrize("about", [value for value, _label in Alert.About.choices])
def test_each_choice_of_what_it_is_about_is_kept_on_the_alert(learner, about):
    response = signed_in(learner.user).post(TALK, {"about": about})

    assert response.status_code == 200 and "We have told the staff" in response.content.decode()
    assert Alert.objects.get(kind=Alert.Kind.ASKED).about == about


@pytest.mark.django_db
def test_the_contact_chosen_is_kept_as_the_pupil_read_it(learner):
    with_contacts(learner)

    signed_in(learner.user).post(TALK, {"contact": "Mrs Khan, in room 12"})

    alert = Alert.objects.get(kind=Alert.Kind.ASKED)
    assert alert.wanted_contact == "Mrs Khan, in room 12"
    assert alert.about == "" and alert.urgent is False


@pytest.mark.django_db
def test_nothing_chosen_still_asks_as_before(learner):
    response = signed_in(learner.user).post(TALK)

    assert "We have told the staff" in response.content.decode()
    alert = Alert.objects.get(kind=Alert.Kind.ASKED)
    assert (alert.about, alert.wanted_contact, alert.urgent) == ("", "", False)
    assert alert.escalated_at is None


@pytest.mark.django_db
def test_a_contact_not_offered_is_refused_plainly_and_the_rest_is_kept(learner):
    with_contacts(learner)

    response = signed_in(learner.user).post(
        TALK, {"about": "home", "contact": "Someone forged", "unsafe": "on"}
    )

    html = response.content.decode()
    assert response.status_code == 200
    assert "Choose one from the list, or leave it empty." in html
    assert re.search(r'value="home"[^>]*checked', html)
    assert re.search(r'name="unsafe"[^>]*checked', html)
    assert not Alert.objects.exists()


# I don't feel safe -----------------------------------------------------------------------------


@pytest.mark.django_db
def test_not_feeling_safe_marks_the_alert_urgent_and_escalates_it_at_once(learner):
    response = signed_in(learner.user).post(TALK, {"unsafe": "on"})

    assert response.status_code == 200
    alert = Alert.objects.get(kind=Alert.Kind.ASKED)
    assert alert.urgent and alert.escalated_at is not None
    assert alert.escalate_at == alert.raised_at == alert.escalated_at
    sent = AlertEmail.objects.filter(alert=alert, state=AlertEmail.State.SENT)
    assert set(sent.values_list("purpose", flat=True)) == {"raised", "escalated"}
    assert len(mail.outbox) == 2
    assert AuditEvent.objects.filter(action=AuditEvent.Action.ALERT_ESCALATED).count() == 1
    assert AuditEvent.objects.get(action=AuditEvent.Action.HELP_ASKED).detail["urgent"] is True


@pytest.mark.django_db
def test_not_feeling_safe_shows_999_and_the_helplines_before_anything_else(learner):
    html = signed_in(learner.user).post(TALK, {"unsafe": "on"}).content.decode()

    main = html[html.index("<main") :]
    danger = main.index('<a href="tel:999">999</a>')
    childline = main.index('<a href="tel:08001111">0800 1111</a>')
    told = main.index("We have told the staff")
    next_steps = main.index("during school hours")
    assert danger < childline < told < next_steps
    assert main.index("<h1") < danger < main.index("</h1>")


@pytest.mark.django_db
def test_a_primary_pupil_who_feels_unsafe_is_told_to_find_a_grown_up_now(learner):
    learner.level = Level.PRIMARY
    learner.save(update_fields=["level"])

    html = signed_in(learner.user).post(TALK, {"unsafe": "on"}).content.decode()

    main = html[html.index("<main") :]
    assert '<a href="tel:999">999</a>' in main
    assert main.index("tel:999") < main.index("tell a grown-up near you now, like your teacher")
    assert "It might not be today" not in main


@pytest.mark.django_db
def test_a_primary_pupil_is_told_the_grown_ups_know_as_the_form_promised(learner):
    learner.level = Level.PRIMARY
    learner.save(update_fields=["level"])
    client = signed_in(learner.user)
    assert "We will tell the grown-ups" in client.get(TALK).content.decode()

    html = client.post(TALK, {"about": "friends"}).content.decode()

    assert "<h1>We have told the grown-ups</h1>" in html
    assert "the staff" not in html[html.index("<main") :]


@pytest.mark.django_db
def test_a_plain_request_shows_what_happens_next_first(learner):
    html = signed_in(learner.user).post(TALK).content.decode()

    main = html[html.index("<main") :]
    assert "<h1>We have told the staff</h1>" in main
    assert main.index("during school hours") < main.index("call 999")
    assert 'href="tel:999"' not in main


@pytest.mark.django_db
def test_a_second_press_saying_unsafe_makes_the_waiting_request_urgent(learner):
    client = signed_in(learner.user)
    client.post(TALK, {"about": "friends"})
    assert len(mail.outbox) == 1

    page = client.post(TALK, {"unsafe": "on", "about": "home"}).content.decode()

    assert "You asked already" in page and 'href="tel:999"' in page
    alert = Alert.objects.get(kind=Alert.Kind.ASKED)
    assert alert.urgent and alert.escalated_at is not None
    assert alert.about == "friends"  # the first answer stands
    assert len(mail.outbox) == 2  # the escalation, at once
    assert Alert.objects.count() == 1


@pytest.mark.django_db
def test_a_second_press_adds_what_the_waiting_request_lacks_and_nothing_else(learner):
    with_contacts(learner)
    client = signed_in(learner.user)
    client.post(TALK)

    page = client.post(
        TALK, {"about": "online", "contact": "Mr Osei, your form tutor"}
    ).content.decode()

    assert "You asked already" in page and "What you told us now has been added." in page
    alert = Alert.objects.get(kind=Alert.Kind.ASKED)
    assert (alert.about, alert.wanted_contact) == ("online", "Mr Osei, your form tutor")
    assert not alert.urgent and alert.escalated_at is None
    assert len(mail.outbox) == 1


@pytest.mark.django_db
def test_a_second_unsafe_press_on_an_urgent_request_sends_nothing_more(learner):
    client = signed_in(learner.user)
    client.post(TALK, {"unsafe": "on"})

    page = client.post(TALK, {"unsafe": "on"}).content.decode()

    assert "You asked already" in page
    assert len(mail.outbox) == 2
    assert AuditEvent.objects.filter(action=AuditEvent.Action.ALERT_ESCALATED).count() == 1


# What the leads see, and what the email does not say --------------------------------------------


@pytest.mark.django_db
def test_the_lead_sees_what_the_pupil_said_on_the_alert_and_the_list(learner, staff):
    with_contacts(learner)
    signed_in(learner.user).post(
        TALK, {"about": "home", "contact": "Mrs Khan, in room 12", "unsafe": "on"}
    )
    alert = Alert.objects.get(kind=Alert.Kind.ASKED)
    lead = signed_in(staff)

    page = lead.get(f"/safeguarding/alerts/{alert.pk}/").content.decode()
    listed = lead.get("/safeguarding/").content.decode()

    for html in (page, listed):
        assert "Urgent: the pupil said they don't feel safe" in html
        assert "Home or family" in html and "Mrs Khan, in room 12" in html
    assert "1 is urgent: a pupil said they don't feel safe." in listed
    assert "is overdue" not in listed  # escalated at once, not late


@pytest.mark.django_db
def test_urgent_requests_come_first_among_the_waiting_alerts(learner, other_learner, staff):
    signed_in(learner.user).post(TALK)  # the older one
    signed_in(other_learner.user).post(TALK, {"unsafe": "on"})

    listed = signed_in(staff).get("/safeguarding/").content.decode()

    assert listed.index(other_learner.display_name) < listed.index(learner.display_name)


@pytest.mark.django_db
def test_the_email_says_nothing_of_what_the_pupil_chose(learner, other_learner):
    with_contacts(learner)
    signed_in(other_learner.user).post(TALK)
    plain = mail.outbox[0]
    signed_in(learner.user).post(
        TALK, {"about": "home", "contact": "Mrs Khan, in room 12", "unsafe": "on"}
    )
    raised, escalated = mail.outbox[1:]

    assert "/safeguarding/alerts/" in raised.body and "Please sign in" in raised.body
    assert (raised.subject, normalised(raised.body)) == (plain.subject, normalised(plain.body))
    assert "needs review now" in escalated.body and "/safeguarding/alerts/" in escalated.body
    for email in (raised, escalated):
        text = f"{email.subject}\n{email.body}".lower()
        for said in ["home", "family", "khan", "room 12", "feel safe", "urgent", "osei"]:
            assert said not in text, said


@pytest.mark.django_db
def test_a_pupil_at_another_level_reads_their_own_words(db):
    pupil = make_learner("fay.further", "u-fay")
    pupil.level = Level.FURTHER_EDUCATION
    pupil.save(update_fields=["level"])

    html = signed_in(pupil.user).get(TALK).content.decode()

    assert "How I&#x27;m feeling" in html and "Any adult at school" in html
    assert "grown-up" not in html.lower().split("<main", 1)[1].split("</form>", 1)[0]
