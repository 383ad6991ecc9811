"""A signed-in request with production settings (sessions and the user in the cache) is cheap,
and every per-request check still holds on the cached user."""

import re
import time

import pytest
from django.contrib.auth.models import User
from django.core.cache import cache
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from accounts.idle import LAST_ACTIVITY_SESSION_KEY
from assessments.models import AssessmentAttempt
from assessments.taking import PRIMARY_LEVEL
from classes.services import group_learner_remove, group_learners_add
from kit import row_cache
from privacy.services import learner_erase
from schools.models import PartnerSettings, settings_key
from tests.factories import make_attempt, make_group, make_result
from tests.journeys import page_showing, page_url

PRIVACY = "/me/privacy/"


@pytest.fixture
def production_cache(settings):
    """The settings a shared cache brings (portal/settings.py): cached_db sessions, cached user."""
    settings.SESSION_ENGINE = "accounts.sessions"
    settings.ROW_CACHE_SECONDS = 300
    settings.UPSTREAM_HEALTH_CACHE_SECONDS = 2


@pytest.fixture
def attempt(learner):
    return make_attempt(learner)


@pytest.fixture
def signed_in(production_cache, client, learner, attempt):
    """The learner's client after one page view: session, user and health now in the cache."""
    client.force_login(learner.user)
    assert client.get(page_url(attempt)).status_code == 200
    return client


def without_caching(settings, learner) -> Client:
    """A new client (its middleware loads the session engine afresh) with today's defaults."""
    settings.ROW_CACHE_SECONDS = 0
    settings.SESSION_ENGINE = "django.contrib.sessions.backends.db"
    client = Client()
    client.force_login(learner.user)
    return client


def queries_of(client, url: str) -> list[str]:
    with CaptureQueriesContext(connection) as captured:
        assert client.get(url).status_code == 200
    return [query["sql"] for query in captured]


def test_a_question_page_reads_only_its_attempt_from_the_database(
    signed_in, attempt, settings, learner
):
    cached = queries_of(signed_in, page_url(attempt))
    uncached_client = without_caching(settings, learner)
    uncached_client.get(page_url(attempt))
    uncached = queries_of(uncached_client, page_url(attempt))

    assert len(cached) == 1 and "assessments_assessmentattempt" in cached[0]
    # The session, the user with learner, the attempt, and the schools (the header names the
    # learner's; kept in the shared cache with the rest).
    assert len(uncached) == 4


def test_a_primary_pupils_one_question_page_reads_only_its_attempt_too(signed_in, attempt, learner):
    learner.level = PRIMARY_LEVEL
    learner.save(update_fields=["level"])
    signed_in.get(page_url(attempt, 2))  # the school's settings, now in the row cache

    queries = queries_of(signed_in, page_url(attempt, 3))

    assert len(queries) == 1 and "assessments_assessmentattempt" in queries[0]
    assert "Question 3 of 3" in signed_in.get(page_url(attempt, 3)).content.decode()


def test_a_results_page_needs_no_session_or_user_query(signed_in, attempt, settings, learner):
    AssessmentAttempt.objects.filter(pk=attempt.pk).update(state=AssessmentAttempt.State.SUBMITTED)
    make_result(attempt)
    url = f"/me/assessments/{attempt.assessment_id}/results/"
    signed_in.get(url)

    cached = queries_of(signed_in, url)
    uncached_client = without_caching(settings, learner)
    uncached_client.get(url)
    uncached = queries_of(uncached_client, url)

    # Today's 6 (session, user, partner's settings, attempt with result, school contacts, the
    # schools for the header's name) to 1.
    assert len(uncached) == 6 and len(cached) == 1
    assert not any(
        table in sql
        for sql in cached
        for table in (
            "auth_user",
            "django_session",
            "portal_partnersettings",
            "learners_groupmembership",
            "schools_school",
        )
    )


def test_the_cached_school_contacts_follow_the_learners_groups(signed_in, attempt, learner):
    AssessmentAttempt.objects.filter(pk=attempt.pk).update(state=AssessmentAttempt.State.SUBMITTED)
    make_result(attempt)
    url = f"/me/assessments/{attempt.assessment_id}/results/"
    tutor_group = make_group("9 North")
    tutor_group.contact = "Mr Osei, in room 4"
    tutor_group.save()

    def contacts() -> list[str]:
        listed = re.search(
            r'<ul class="contacts">(.*?)</ul>', signed_in.get(url).content.decode(), re.S
        )
        return re.findall(r"<li>(.*?)</li>", listed.group(1)) if listed else []

    assert contacts() == []  # now cached: no group yet
    group_learners_add(group=tutor_group, learners=[learner], added_by=None, address=None)
    assert contacts() == ["Mr Osei, in room 4"]
    tutor_group.contact = "Ms Ali, in room 9"
    tutor_group.save()
    assert contacts() == ["Ms Ali, in room 9"]
    group_learner_remove(group=tutor_group, learner=learner, removed_by=None, address=None)
    assert contacts() == []


def still_signed_in(client) -> bool:
    """Say whether the learner still reads their privacy page; False when sent to sign in.

    Any other answer (an error page, a redirect elsewhere) fails the test: a signed-out learner
    is proved by the sign-in page, not by whatever is not the privacy page.
    """
    response = client.get(PRIVACY)
    if response.status_code == 200:
        assert "<h1>Your information" in response.content.decode()
        return True
    assert response.status_code == 302, response.status_code
    assert response.url.startswith(f"/accounts/login/?next={PRIVACY}"), response.url
    return False


def test_a_deactivated_account_is_signed_out_at_the_next_request(signed_in, learner):
    assert still_signed_in(signed_in)
    user = User.objects.get(pk=learner.user_id)
    user.is_active = False
    user.save()

    assert not still_signed_in(signed_in)


def test_a_changed_password_signs_out_at_the_next_request(signed_in, learner):
    user = User.objects.get(pk=learner.user_id)
    user.set_password("an entirely new password")
    user.save()

    assert not still_signed_in(signed_in)


def test_an_erased_learner_is_signed_out_at_the_next_request(signed_in, learner, staff):
    learner_erase(learner=learner, erased_by=staff)

    assert not still_signed_in(signed_in)


def test_a_learner_who_left_their_session_idle_is_still_signed_out(signed_in, settings):
    session = signed_in.session
    session[LAST_ACTIVITY_SESSION_KEY] = int(time.time()) - settings.LEARNER_IDLE_TIMEOUT - 5
    session.save()

    response = signed_in.get(PRIVACY, follow=True)

    assert response.redirect_chain and "login" in response.redirect_chain[-1][0]
    assert "You were signed out after 15 minutes without activity" in response.content.decode()


def test_a_learner_marked_no_longer_registered_loses_the_learner_pages(signed_in, learner):
    learner.status = learner.Status.PENDING
    learner.save()

    response = signed_in.get(PRIVACY)
    assert response.status_code == 404
    assert "<h1>Page not found</h1>" in response.content.decode()


@pytest.mark.django_db
def test_the_partners_settings_are_read_once_and_fresh_after_a_change(production_cache):
    from schools.models import PartnerSettings

    PartnerSettings.current()
    with CaptureQueriesContext(connection) as captured:
        first = PartnerSettings.current()
    first.hide_results_from_learners = not first.hide_results_from_learners
    first.save()

    assert len(captured) == 0
    assert PartnerSettings.current().hide_results_from_learners == first.hide_results_from_learners


def test_the_session_and_the_user_come_in_one_cache_read(signed_in, learner, monkeypatch):
    from django.core.cache import cache

    reads = []
    for name in ("get", "get_many"):
        real = getattr(cache, name)
        monkeypatch.setattr(
            cache,
            name,
            lambda *args, _real=real, _name=name, **kw: (
                reads.append((_name, args)) or _real(*args, **kw)
            ),
        )

    assert signed_in.session.session_key.startswith(f"u{learner.user_id}-")
    assert still_signed_in(signed_in)
    kinds = [name for name, _ in reads]
    assert kinds.count("get_many") == 1, reads
    # (The local-memory cache's get_many calls its get with a marker: not round trips.)
    other_keys = [args[0] for name, args in reads if name == "get" and len(args) == 1]
    assert all(
        not key.startswith(("portal.user", "django.contrib.sessions")) for key in other_keys
    ), reads


def test_the_partners_choice_to_hide_results_reaches_every_process_within_moments(
    signed_in, attempt, settings, monkeypatch
):
    learner = attempt.learner
    settings.ROW_MEMORY_SECONDS = 2
    AssessmentAttempt.objects.filter(pk=attempt.pk).update(state=AssessmentAttempt.State.SUBMITTED)
    make_result(attempt)
    url = f"/me/assessments/{attempt.assessment_id}/results/"
    clock = [1000.0]
    monkeypatch.setattr(row_cache.time, "monotonic", lambda: clock[0])
    hidden = "Your answers have been received"
    results_shown = '<h2 id="results-heading">'
    assert hidden not in page_showing(signed_in, url, results_shown)

    # Another process hides results: the database row and the shared cache change, this
    # process's memory does not hear of it.
    PartnerSettings.objects.filter(school=learner.school_id).update(hide_results_from_learners=True)
    cache.delete(settings_key(learner.school_id))
    assert hidden not in page_showing(signed_in, url, results_shown)
    clock[0] += 2.5
    assert hidden in signed_in.get(url).content.decode()

    # A change saved through this process shows at once.
    partner = PartnerSettings.objects.get(school=learner.school_id)
    partner.hide_results_from_learners = False
    partner.save()
    assert hidden not in page_showing(signed_in, url, results_shown)
