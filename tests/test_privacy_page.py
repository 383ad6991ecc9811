"""The learner's privacy page: what is kept, who sees it, how long, who to ask, for their age."""

import pytest
from django.test import Client

from learners.models import Learner, Level
from privacy.holds import records_hold_place
from schools.models import PartnerSettings
from tests.factories import make_attempt, make_group, make_result, make_staff, put_in_group
from tests.journeys import page_showing

PRIVACY = "/me/privacy/"


def set_partner(**values) -> None:
    PartnerSettings.current()
    PartnerSettings.objects.update(**values)


def main_part(page: str) -> str:
    """Return the page's main content (the header's sign-out form has a fresh token each time)."""
    return page[page.index('<main id="main"') :]


def page_of(client: Client) -> str:
    response = client.get(PRIVACY)
    assert response.status_code == 200
    return response.content.decode()


def test_a_learner_reads_what_is_kept_who_sees_it_how_long_and_who_to_ask(learner_client):
    page = page_of(learner_client)

    assert "<h1>Your information and privacy</h1>" in page
    for heading in ("What we keep", "Who can see it", "How long we keep it", "Who to ask"):
        assert f"<h2>{heading}</h2>" in page
    assert "Your name, date of birth and username" in page
    assert "Notes that staff write when they follow up your results" in page
    assert "safeguarding leads" in page
    assert "until you are 25" in page


def test_a_primary_pupil_reads_shorter_simpler_words(learner_client, learner):
    secondary = page_of(learner_client)
    Learner.objects.filter(pk=learner.pk).update(level=Level.PRIMARY)
    primary = page_of(learner_client)

    assert "<h1>Your information</h1>" in primary
    assert "Your name, your birthday and your username." in primary
    assert "grown-ups at school" in primary and "safeguarding leads" not in primary
    assert "safeguarding leads" in secondary and "grown-ups" not in secondary
    assert len(primary) < len(secondary)


@pytest.mark.parametrize("level", [Level.PRIMARY, Level.SECONDARY, Level.FURTHER_EDUCATION])
def test_the_page_states_the_partners_retention_period(client, learner, level):
    Learner.objects.filter(pk=learner.pk).update(level=level)
    set_partner(retention_years=5)
    client.force_login(learner.user)

    page = page_of(client)

    assert "for 5 years after you last use this website" in page
    assert "3 years" not in page


def test_one_year_is_said_in_the_singular(learner_client):
    set_partner(retention_years=1)

    assert "for 1 year after you last use this website" in page_of(learner_client)


def test_what_teachers_see_follows_the_partners_setting(learner_client):
    assert "Your teachers can see whether you have finished an assessment, but not" in (
        page_of(learner_client)
    )

    set_partner(teachers_see_results=True)

    assert "Your teachers can see whether you have finished an assessment, and your results." in (
        page_of(learner_client)
    )


def test_the_learner_is_told_to_ask_their_teacher_or_the_school_contact(learner_client, learner):
    assert "ask your teacher." in page_of(learner_client)

    set_partner(school_contact="Mrs Khan, in room 12")
    assert "ask your teacher or Mrs Khan, in room 12." in page_of(learner_client)

    group = make_group("7B")
    group.contact = "Mr Osei, our head of year"
    group.save()
    put_in_group(group, learner)
    assert "ask your teacher or Mr Osei, our head of year." in page_of(learner_client)


def test_the_page_does_not_tell_the_learner_whether_their_own_records_are_held(
    learner_client, learner, staff
):
    before = main_part(page_of(learner_client))
    records_hold_place(learner=learner, placed_by=staff, reason="Referral open")

    assert main_part(page_of(learner_client)) == before


def test_every_learner_page_links_to_the_privacy_page(learner_client, learner):
    attempt = make_attempt(learner, assessment_id=41)
    make_result(make_attempt(learner, assessment_id=42, state="submitted"))
    link = f'<a href="{PRIVACY}">My information</a>'

    for path in [
        "/me/",
        f"/me/assessments/{attempt.assessment_id}/page/1/",
        f"/me/assessments/{attempt.assessment_id}/check/",
        "/me/assessments/42/results/",
        PRIVACY,
        "/card/",
        "/accounts/logout/",
    ]:
        response = learner_client.get(path)
        assert response.status_code == 200, path
        assert link in response.content.decode(), path


def test_staff_pages_do_not_link_to_it_and_staff_get_not_found(client, staff, learner):
    client.force_login(staff)

    assert PRIVACY not in page_showing(client, "/learners/", "<h1>Learners</h1>")
    assert client.get(PRIVACY).status_code == 404
    assert client.get(f"/learners/{learner.pk}/").status_code == 200


def test_anyone_signed_out_is_sent_to_sign_in(client, db):
    response = client.get(PRIVACY)

    assert response.status_code == 302
    assert response.url == f"/accounts/login/?next={PRIVACY}"


def test_the_page_is_read_only(learner_client):
    assert learner_client.post(PRIVACY).status_code == 405


def test_a_teacher_of_the_learner_still_gets_not_found(client, learner):
    group = make_group("7B")
    put_in_group(group, learner)
    client.force_login(make_staff("tara.teacher", groups=[group]))

    assert client.get(PRIVACY).status_code == 404
