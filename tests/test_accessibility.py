"""Every page and state axe can reach has no WCAG 2.x A or AA violation.

Every URL name of the portal is either checked here in at least one state or listed in
NOT_A_PAGE with the reason it has no page of its own (downloads, JSON, actions that only
redirect): test_every_url_name_is_checked_by_axe_or_excluded_with_a_reason holds the two
lists to the resolver, and at the end of a session that ran this whole module,
tests/axe_coverage.py holds them to the pages its tests actually reached, on whichever
xdist workers they ran.
"""

import time
from urllib.parse import urlsplit

import pytest
from allauth.mfa.models import Authenticator
from allauth.socialaccount.models import SocialAccount
from django.urls import Resolver404, resolve

from accounts.models import StaffRole
from assessments.models import AttemptAnswer
from pictures.models import Picture
from pictures.selectors import address_hash
from safeguarding.models import Alert
from schools.context import working_in
from schools.models import PartnerSettings, School
from tests.browsing import (
    browser_sign_in,
    fill_date,
    make_last_resort_pages_reachable,
    second_factor_given_minutes_ago,
    violations,
)
from tests.factories import (
    GOOD_PASSWORD,
    HEADER,
    MOON,
    PASSWORD,
    SUN,
    VALID,
    cohort_learner,
    completed,
    flagged,
    good_rows,
    make_attempt,
    make_result,
    make_sign_in_lock,
    make_staff,
    mid_way,
    pictured_content,
    ready_picture,
    upload_file,
)
from tests.identity_provider import running_identity_provider, use_identity_provider
from tests.journeys import page_url
from tests.page_tour import fill_school, visit_as
from tests.portal_urls import portal_urls

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# The URL name of every page axe checked in this process: tests/axe_coverage.py gathers every
# process's at the end of the session.
REACHED: set[str] = set()


def url_name(url: str) -> str:
    """Return the namespaced URL name of a page's address, or "<no route>"."""
    try:
        return resolve(urlsplit(url).path).view_name
    except Resolver404:
        return "<no route>"


def assert_accessible(page, state: str) -> None:
    REACHED.add(url_name(page.url))
    problems = violations(page)
    assert not problems, f"{state} ({page.url}):\n  " + "\n  ".join(problems)


def sign_in(browser, live_server, user, viewport):
    page = browser.new_page(viewport=viewport)
    browser_sign_in(page, live_server.url, user.username)
    return page


def test_the_sign_in_page_passes_axe_blank_and_with_an_error(browser, live_server, db, viewport):
    page = browser.new_page(viewport=viewport)
    page.goto(live_server.url + "/accounts/login/")
    assert_accessible(page, "sign-in page")
    page.fill("#id_username", "nobody")
    page.fill("#id_password", "wrong-password")
    page.click("main button[type=submit]")
    page.wait_for_load_state()
    assert_accessible(page, "sign-in page with an error")
    page.close()


def test_staff_pages_pass_axe_in_each_state(browser, live_server, staff, settings, viewport):
    settings.DASHBOARD_MIN_GROUP_SIZE = 1
    page = sign_in(browser, live_server, staff, viewport)

    page.goto(live_server.url + "/learners/")
    assert_accessible(page, "learner list, empty")
    page.goto(live_server.url + "/follow-ups/")
    assert_accessible(page, "follow-up queue, empty")

    grower = cohort_learner(name="grower")
    completed(grower, "2026-09-10", score="40.25", risk="HIGH")
    completed(grower, "2026-10-10", score="55", risk="MODERATE")
    item = flagged(grower, "SLEEP")

    for path, state in [
        ("/dashboard/", "dashboard"),
        ("/dashboard/?from=2026-09-30&to=2026-09-01&level=LEVEL9", "dashboard, filter errors"),
        ("/learners/", "learner list with rows"),
        (f"/learners/{grower.pk}/", "learner detail with a trend"),
        ("/follow-ups/", "follow-up queue with an item"),
        (f"/follow-ups/{item.pk}/", "follow-up item"),
        ("/learners/import/", "import upload page"),
        ("/operations/", "operations page"),
    ]:
        page.goto(live_server.url + path)
        assert_accessible(page, state)

    page.goto(live_server.url + "/learners/new/")
    page.click("main button[type=submit]")
    page.wait_for_load_state()
    assert_accessible(page, "register form with errors")
    fill_date(page, "dob", 27, "", 2009)
    page.click("main button[type=submit]")
    page.wait_for_load_state()
    assert page.get_attribute("#id_dob_month", "aria-invalid") == "true"
    assert_accessible(page, "register form, the date of birth without its month")
    page.goto(live_server.url + "/dashboard/?to_day=31&to_month=2&to_year=2026")
    assert page.is_visible(".error-summary")
    assert_accessible(page, "dashboard, a date typed in boxes that is not real")

    page.goto(live_server.url + "/learners/import/")
    bad_rows = HEADER + "\nbad name!,,2010-01-01,,,,\nok.name,short,1800-01-01,x,,,LEVEL9\n"
    page.set_input_files(
        "input[type=file]",
        files=[{"name": "learners.csv", "mimeType": "text/csv", "buffer": bad_rows.encode()}],
    )
    page.click("main button[type=submit]")
    page.wait_for_load_state()
    assert "/learners/import/" in page.url
    assert_accessible(page, "import preview with bad rows")
    page.close()


def test_learner_pages_pass_axe_in_each_state(browser, live_server, learner, settings, viewport):
    attempt = make_attempt(learner)
    make_result(make_attempt(learner, assessment_id=42, state="submitted"))
    page = sign_in(browser, live_server, learner.user, viewport)

    page.goto(live_server.url + "/me/")
    assert_accessible(page, "my assessments")
    page.goto(live_server.url + page_url(attempt))
    assert_accessible(page, "question page")
    page.click("main button[name=continue]")
    page.wait_for_load_state()
    assert page.is_visible(".error-summary")
    assert_accessible(page, "question page with an error summary")

    for question_id, answer_id in [
        ("q-sleep", "q-sleep-a1"),
        ("q-wake", "q-wake-a2"),
        ("q-notes", "q-notes-a1"),
    ]:
        AttemptAnswer.objects.create(attempt=attempt, question_id=question_id, answer_id=answer_id)
    page.goto(live_server.url + f"/me/assessments/{attempt.assessment_id}/check/")
    assert "/check/" in page.url
    assert_accessible(page, "check answers")
    page.goto(live_server.url + "/me/assessments/42/results/")
    assert_accessible(page, "results")
    page.goto(live_server.url + "/me/privacy/")
    assert_accessible(page, "privacy page")

    settings.LEARNER_IDLE_TIMEOUT = 121  # the warning comes 2 minutes before: after 1 s
    page.goto(live_server.url + "/me/")
    page.get_by_role("alertdialog").wait_for(timeout=10000)
    assert_accessible(page, "session-timeout dialog open")
    page.close()


def test_the_primary_one_question_page_passes_axe_with_pictures_and_speak_buttons(
    browser, live_server, learner, viewport
):
    """A primary pupil's page: one question, picture tiles, dots, the read-aloud buttons shown."""
    ready_picture(SUN)
    # The moon's picture is on its way: rendering asks for none, so nothing is fetched.
    Picture.objects.create(address=MOON, address_hash=address_hash(MOON))
    learner.level = "LOA_PARTNER_LEVEL3"
    learner.save(update_fields=["level"])
    attempt = make_attempt(learner, content=pictured_content())
    page = sign_in(browser, live_server, learner.user, viewport)

    page.goto(live_server.url + page_url(attempt))
    picture = page.locator("main img.answer-picture")
    # Served from the portal's own origin, whole (the page's CSP allows no other).
    assert picture.count() == 1 and picture.evaluate("img => img.naturalWidth") == 64
    # What static/js/read_aloud.js shows where the browser can speak.
    page.evaluate(
        "document.querySelectorAll('.speak, .read-aloud-toggle')"
        ".forEach(function (button) { button.hidden = false; })"
    )
    assert_accessible(page, "primary question page, one question")
    page.click("label[for=id_q1_1]")
    click_and_wait(page, "main button[name=continue]")
    assert "/page/2/" in page.url
    click_and_wait(page, "main button[name=continue]")
    assert page.is_visible(".error-summary")
    assert_accessible(page, "primary question page, second question with an error")
    page.close()


def test_further_pages_and_states_pass_axe(browser, live_server, staff, learner, viewport):
    """Pages beyond the named list: a banner, a learner with no results, staff's own forms."""
    from datetime import timedelta

    from django.utils import timezone

    from partner_api import get_client
    from partner_api.models import UpstreamHealth

    make_result(make_attempt(learner, assessment_id=42, state="submitted"))
    make_attempt(learner, assessment_id=43, state="submitted")
    make_attempt(learner, assessment_id=44)
    staff_page = sign_in(browser, live_server, staff, viewport)
    for path, state in [
        (f"/learners/{learner.pk}/", "learner detail with one result"),
        (f"/learners/{learner.pk}/attempts/42/", "staff view of a learner's results"),
        (f"/learners/{learner.pk}/password/", "password reset form"),
        (f"/learners/{learner.pk}/edit/", "edit a learner's details"),
        ("/learners/?status=completed&risk=moderate&sort=risk", "learner list, filtered"),
        (f"/learners/{learner.pk}/erase/", "erase confirmation"),
        (f"/learners/{learner.pk}/hold/", "safeguarding hold, not held"),
        ("/learners/?q=nobody-matches", "learner list, no matches"),
        ("/learners/999999/", "not found page"),
    ]:
        staff_page.goto(live_server.url + path)
        assert_accessible(staff_page, state)

    staff_page.goto(live_server.url + f"/learners/{learner.pk}/edit/")
    staff_page.fill("#id_email", "not-an-email")
    staff_page.click("main form button[type=submit]")
    staff_page.wait_for_load_state()
    assert staff_page.is_visible(".error-summary")
    assert_accessible(staff_page, "edit a learner's details, with an error")

    UpstreamHealth.objects.update_or_create(
        base_url=get_client().base_url,
        defaults={"unavailable_until": timezone.now() + timedelta(minutes=5)},
    )
    item = flagged(learner, "SLEEP")
    staff_page.goto(live_server.url + f"/follow-ups/{item.pk}/")
    fill_date(staff_page, "due_date", 31, 2, 2026)
    staff_page.click("main form button[type=submit]")
    staff_page.wait_for_load_state()
    assert staff_page.is_visible(".error-summary")
    assert_accessible(staff_page, "follow-up item with an error")
    fill_date(staff_page, "due_date", item.due_date.day, item.due_date.month, item.due_date.year)
    staff_page.fill("#id_note", "Spoke to the family.")
    staff_page.click("main form button[type=submit]")
    staff_page.wait_for_load_state()
    assert staff_page.locator(".messages").count()
    assert_accessible(staff_page, "follow-up item with a message")
    staff_page.goto(live_server.url + f"/learners/{learner.pk}/hold/")
    assert staff_page.is_visible("main button[name=lift]")
    assert_accessible(staff_page, "safeguarding hold, held by a follow-up")

    for number in range(30):
        cohort_learner(name=f"many{number}")
    staff_page.goto(live_server.url + "/learners/?page=2")
    assert staff_page.locator("nav.pagination, .pagination").count()
    assert_accessible(staff_page, "learner list, second page")

    staff_page.goto(live_server.url + "/accounts/logout/")
    assert_accessible(staff_page, "sign-out confirmation")

    staff_page.goto(live_server.url + "/dashboard/")
    assert staff_page.is_visible(".banner-warning")
    assert_accessible(staff_page, "dashboard with the service-down banner")
    staff_page.close()

    page = sign_in(browser, live_server, learner.user, viewport)
    page.goto(live_server.url + "/me/assessments/44/page/2/")
    assert_accessible(page, "the last question page, service down")
    page.goto(live_server.url + "/me/assessments/43/")
    assert_accessible(page, "a sent assessment waiting for results, service down")
    page.close()


def test_the_check_would_catch_a_violation_on_a_portal_page(
    browser, live_server, learner, viewport
):
    """Axe runs under the portal's Content-Security-Policy and its findings reach the message."""
    page = sign_in(browser, live_server, learner.user, viewport)
    page.goto(live_server.url + "/me/")
    page.evaluate("document.documentElement.removeAttribute('lang')")

    with pytest.raises(AssertionError, match="html-has-lang"):
        assert_accessible(page, "my assessments without lang")
    page.close()


def test_pages_after_registering_through_the_sandbox_pass_axe(
    browser, live_server, staff, upstream, viewport
):
    page = sign_in(browser, live_server, staff, viewport)
    page.goto(live_server.url + "/learners/new/")
    for name, value in VALID.items():
        if name == "level":
            page.select_option(f"#id_{name}", value)
        elif name == "dob":
            fill_date(page, name, *reversed(value.split("-")))
        else:
            page.fill(f"#id_{name}", value)
    page.click("main button[type=submit]")
    page.wait_for_load_state()
    assert "/learners/new/" not in page.url
    assert_accessible(page, "after registering a learner")

    page.goto(live_server.url + "/learners/import/")
    rows = HEADER + "\n" + good_rows(2) + "bad name!,,2010-01-01,,,,\n"
    page.set_input_files(
        "input[type=file]",
        files=[{"name": "learners.csv", "mimeType": "text/csv", "buffer": rows.encode()}],
    )
    page.click("main button[type=submit]")
    page.wait_for_load_state()
    page.click("main form[action$='/confirm/'] button[type=submit]")
    page.wait_for_load_state()
    page.get_by_text("Import finished").first.wait_for(timeout=10000)
    assert_accessible(page, "a finished import with a skipped row")
    page.close()


def test_class_staff_and_settings_pages_pass_axe(
    browser, live_server, learner, other_learner, viewport
):
    """An admin's pages (classes, staff accounts, settings), a teacher's, and card sign-in."""
    for user, stops in fill_school(learner=learner, other_learner=other_learner):
        page = browser.new_page(viewport=viewport)
        for stop, shown in visit_as(page, live_server.url, user, stops):
            assert_accessible(shown, f"{stop.name} as {getattr(user, 'username', 'a visitor')}")
        page.close()


def test_the_staff_sign_in_pages_pass_axe(browser, live_server, settings, viewport):
    """How staff sign in: the list and an account's page, each action's page, signing out."""
    settings.SOCIALACCOUNT_PROVIDERS = {
        "openid_connect": {
            "APPS": [
                {
                    "provider_id": "oidc",
                    "name": "Trust",
                    "client_id": "x",
                    "secret": "y",
                    "settings": {"server_url": "http://127.0.0.1:9/"},
                }
            ]
        }
    }
    admin = make_staff("ada.admin", role=StaffRole.ADMIN)
    teacher = make_staff("tara.teacher", role=StaffRole.TEACHER)
    SocialAccount.objects.create(user=teacher, provider="google", uid="g-1")
    Authenticator.objects.create(user=teacher, type=Authenticator.Type.TOTP, data={})
    page = sign_in(browser, live_server, admin, viewport)
    base = live_server.url
    for path, state in [
        ("/staff/", "staff accounts, with how each signs in"),
        (f"/staff/{teacher.pk}/", "a staff account, with how they sign in"),
        (f"/staff/{teacher.pk}/school-account/unlink/", "unlink a school account"),
        (f"/staff/{teacher.pk}/second-factor/reset/", "reset a second factor"),
        (f"/staff/{admin.pk}/second-factor/reset/", "one's own second factor: refused"),
        (f"/staff/{teacher.pk}/sessions/end/", "sign someone out everywhere"),
        ("/settings/", "settings, with staff passwords"),
        ("/sign-out-everywhere/", "sign out everywhere"),
    ]:
        goto_and_check(page, base, path, state)
    click_and_wait(page, "main button[name=confirm]")
    assert page.is_visible(".messages")
    assert_accessible(page, "signed out everywhere")
    page.close()


# Pages and states beyond the named list ---------------------------------------------------------


def goto_and_check(page, base: str, path: str, state: str, status: int = 200) -> None:
    response = page.goto(base + path)
    assert response.status == status, f"{state}: {response.status} {page.url}"
    assert_accessible(page, state)


def click_and_wait(page, selector: str) -> None:
    page.click(selector)
    page.wait_for_load_state()


def test_sign_in_states_and_error_pages_pass_axe(browser, live_server, learner, settings, viewport):
    """What anyone may meet: a locked sign-in, signed out, a failed form, no access, 404."""
    from django.contrib.auth.models import User
    from django.contrib.sessions.backends.db import SessionStore

    from accounts.idle import LAST_ACTIVITY_SESSION_KEY

    base = live_server.url
    context = browser.new_context(viewport=viewport)
    page = context.new_page()
    goto_and_check(page, base, "/no-such-page/", "not found page, signed out", status=404)

    settings.LOGIN_FAILURE_LIMIT_PER_USERNAME = 1
    page.goto(base + "/accounts/login/")
    for _ in range(2):
        page.fill("#id_username", "locked.out")
        page.fill("#id_password", "wrong-password")
        click_and_wait(page, "main button[type=submit]")
    assert page.is_visible(".error-summary")
    assert_accessible(page, "sign-in page, locked after too many attempts")

    page.goto(base + "/accounts/login/")
    context.clear_cookies(name="csrftoken")
    page.fill("#id_username", learner.username)
    page.fill("#id_password", "wrong-password")
    click_and_wait(page, "main button[type=submit]")
    assert page.locator("h1").count() == 1
    assert_accessible(page, "CSRF failure (403) page")

    # Signed out by the button, then signed out for being idle: the sign-in page says which.
    browser_sign_in(page, base, learner.username)
    click_and_wait(page, "header form[action$='/logout/'] button")
    assert page.locator(".messages").count()
    assert_accessible(page, "sign-in page after signing out")
    browser_sign_in(page, base, learner.username)
    cookie = next(c for c in context.cookies() if c["name"] == "sessionid")
    session = SessionStore(session_key=cookie["value"])
    session[LAST_ACTIVITY_SESSION_KEY] = int(time.time()) - 100_000
    session.save()
    page.goto(base + "/me/")
    assert "/accounts/login/" in page.url and page.locator(".messages").count()
    assert_accessible(page, "sign-in page after an idle sign-out")

    User.objects.create_user("no.role", password=PASSWORD)
    browser_sign_in(page, base, "no.role")
    assert page.locator("h1").count() == 1 and urlsplit(page.url).path == "/"
    assert_accessible(page, "no-access page (signed in with neither role)")
    context.close()


def test_more_learner_states_pass_axe(
    browser, live_server, learner, monkeypatch, settings, viewport
):
    """Autosave, check answers with gaps, every results state, and the pages of failures."""
    from decimal import Decimal

    from assessments.models import AssessmentAttempt, AssessmentResult, FocusArea

    base = live_server.url
    page = sign_in(browser, live_server, learner.user, viewport)
    goto_and_check(page, base, "/me/", "my assessments, nothing started yet")
    goto_and_check(page, base, "/me/assessments/999/results/", "not found, learner", status=404)
    attempt = make_attempt(learner)

    page.goto(base + page_url(attempt))
    page.click("label[for=id_q1_1]")
    page.locator("#autosave-status:not(:empty)").wait_for(timeout=10000)
    assert_accessible(page, "question page, answer autosaved")
    # Sent from another tab meanwhile: the next autosave is refused and says so.
    AssessmentAttempt.objects.filter(pk=attempt.pk).update(state="submitted")
    page.click("label[for=id_q2_2]")
    page.locator("#autosave-status.autosave-failed").wait_for(timeout=10000)
    assert_accessible(page, "question page, autosave failed")
    AssessmentAttempt.objects.filter(pk=attempt.pk).update(state="in_progress")

    page.goto(base + page_url(attempt))
    click_and_wait(page, "main button[name=save_and_exit]")
    assert urlsplit(page.url).path == "/me/" and page.locator(".messages").count()
    assert_accessible(page, "my assessments with a message")

    goto_and_check(page, base, f"/me/assessments/{attempt.assessment_id}/check/", "check, gaps")
    assert page.locator(".unanswered").count()
    click_and_wait(page, "main form[action$='/submit/'] button[type=submit]")
    assert page.is_visible(".error-summary")
    assert_accessible(page, "check answers after sending with a question unanswered")
    click_and_wait(page, ".unanswered a")
    assert "from=check" in page.url
    assert_accessible(page, "question page reached from check answers")

    # Results in every state the learner can find them in.
    needy = make_attempt(learner, assessment_id=42, state="completed")
    result = AssessmentResult.objects.create(
        attempt=needy,
        loa_score=Decimal("23.75"),
        risk_level="HIGH",
        trait_title="The night owl",
        trait_copy="You do your best thinking late.",
        result_description_html="<p>Sleep affects your learning.</p>",
        trait_signs_html="<ul><li>Tired in the morning</li></ul>",
        trait_tips_html="<ol><li>Keep a regular bedtime</li></ol>",
    )
    for position, (name, value) in enumerate(
        [("SLEEP & TIREDNESS", "yes"), ("EXAM ANXIETY", "YES"), ("FOCUS", "Yes, urgently")]
    ):
        FocusArea.objects.create(
            result=result, name=name, needs_help=value, questions_count=4, position=position
        )
    goto_and_check(page, base, "/me/assessments/42/results/", "results, needs help in every area")

    sent = make_attempt(learner, assessment_id=46, state="submitted")
    states = [
        (45, "submitting", "", "results, answers being sent"),
        (43, "submit_pending", "The service could not be reached.", "results, waiting to send"),
        (44, "rejected", "The service refused: question q-9 is unknown.", "results, refused"),
    ]
    for assessment_id, state, error, name in states:
        made = make_attempt(learner, assessment_id=assessment_id, state=state)
        AssessmentAttempt.objects.filter(pk=made.pk).update(last_error=error)
        goto_and_check(page, base, f"/me/assessments/{assessment_id}/results/", name)
    goto_and_check(page, base, "/me/", "my assessments, answers refused")

    # The last-resort pages: a service failure no view expected (503), and a crash (500).
    make_last_resort_pages_reachable(monkeypatch)
    page.goto(base + f"/me/assessments/{sent.assessment_id}/results/")
    click_and_wait(page, "main form button[type=submit]")
    assert page.locator("h1").count() == 1
    assert_accessible(page, "upstream error page (503)")
    page.goto(base + "/me/assessments/43/results/")
    with page.expect_response(lambda response: response.status == 500):
        page.click("main form button[type=submit]")
    page.wait_for_load_state()
    assert_accessible(page, "server error page (500)")

    # The session-timeout dialog when "Stay signed in" cannot reach the portal.
    settings.LEARNER_IDLE_TIMEOUT = 121  # the warning comes 2 minutes before: after 1 s
    page.route("**/me/session/", lambda route: route.abort())
    page.goto(base + "/me/assessments/42/results/")
    dialog = page.get_by_role("alertdialog")
    dialog.wait_for(timeout=10000)
    dialog.get_by_role("button").click()
    dialog.locator(".error-message").wait_for(state="visible", timeout=10000)
    assert_accessible(page, "session-timeout dialog, staying signed in failed")
    page.close()


def test_bulk_registration_in_every_state_passes_axe(browser, live_server, staff, viewport):
    """Each state of an import job: checked, running mid-way, finished, passwords, discarded."""

    from imports.models import ImportJob, ImportRow
    from imports.services import import_job_create_from_csv

    base = live_server.url
    page = sign_in(browser, live_server, staff, viewport)
    goto_and_check(page, base, "/learners/imports/", "imports list, empty")

    page.goto(base + "/learners/import/")
    page.click("details.import-help summary")
    assert_accessible(page, "import upload page, column help open")
    page.eval_on_selector("main form[enctype]", "form => { form.noValidate = true; }")
    click_and_wait(page, "main form[enctype] button[type=submit]")
    assert page.is_visible(".error-summary")
    assert_accessible(page, "import upload page, no file chosen")

    nothing_valid = import_job_create_from_csv(
        file=upload_file(HEADER + "\nbad name!,short,1800-01-01,not-an-email,,,LEVEL9\n"),
        created_by=staff,
    )
    goto_and_check(
        page, base, f"/learners/import/{nothing_valid.pk}/", "import preview, no row valid"
    )
    click_and_wait(page, "form.import-discard button")
    assert page.locator(".messages").count()
    assert_accessible(page, "import upload page after discarding a preview")
    goto_and_check(page, base, f"/learners/import/{nothing_valid.pk}/", "import discarded")

    passwords = import_job_create_from_csv(
        file=upload_file(
            "username,dob,first_name\nkit.kay,2012-02-02,Kit\nmax.moe,2013-03-03,Max\n"
            "ada.ash,2012-04-04,Ada\nbad name!,2012-02-02,Bad\n"
        ),
        created_by=staff,
    )
    goto_and_check(
        page, base, f"/learners/import/{passwords.pk}/", "import preview with passwords to make"
    )

    running = import_job_create_from_csv(
        file=upload_file(HEADER + "\n" + good_rows(10) + f"x!,{GOOD_PASSWORD},2010-01-01,,,,\n"),
        created_by=staff,
    )
    now, _ = mid_way(running, reason="The assessment service refused this username: already taken.")
    goto_and_check(page, base, f"/learners/import/{running.pk}/", "import running, mid-way")
    assert page.eval_on_selector("#import-progress", "bar => bar.value") == 5
    running.rows.filter(state__in=["queued", "sending"]).update(state="registered")
    goto_and_check(
        page, base, f"/learners/import/{running.pk}/", "import running, setting up sign-in"
    )
    assert "setting up sign-in" in page.inner_text("#import-summary")

    ImportJob.objects.filter(pk=passwords.pk).update(
        state=ImportJob.State.FINISHED, confirmed_at=now, started_at=now, finished_at=now
    )
    made = list(passwords.rows.exclude(state="invalid").values_list("pk", flat=True))
    ImportRow.objects.filter(pk__in=made[:2]).update(state="registered", signin_ready_at=now)
    ImportRow.objects.filter(pk=made[2]).update(
        state="failed", reason="The assessment service could not be reached."
    )
    goto_and_check(
        page, base, f"/learners/import/{passwords.pk}/", "import finished, passwords to download"
    )
    # Wiped behind the page's back (the hour passed): the button now explains instead.
    ImportJob.objects.filter(pk=passwords.pk).update(credentials_wiped_at=now)
    click_and_wait(page, f"main form[action$='/{passwords.pk}/passwords.csv'] button")
    assert page.locator(".messages").count()
    assert_accessible(page, "import finished, passwords no longer available")
    goto_and_check(page, base, "/learners/imports/", "imports list, one in each state")
    page.close()


def test_more_staff_states_pass_axe(browser, live_server, staff, learner, upstream, viewport):
    """Small groups, failures on the operations page, empty filters, and account pages."""
    from datetime import timedelta

    from django.utils import timezone

    from assessments.models import AssessmentAttempt
    from followups.models import FollowUp
    from learners.models import Level
    from partner_api.models import UpstreamFailure

    base = live_server.url
    page = sign_in(browser, live_server, staff, viewport)
    goto_and_check(page, base, "/dashboard/", "dashboard, nothing to show yet")
    goto_and_check(page, base, "/operations/", "operations, nothing needs attention")
    goto_and_check(page, base, f"/learners/{learner.pk}/", "learner detail, no assessment yet")

    # Three learners: every group is smaller than the default minimum of 5 and is withheld.
    for number, risk in enumerate(["HIGH", "MODERATE", "LOW"]):
        completed(cohort_learner(name=f"small{number}"), "2026-09-10", risk=risk)
    goto_and_check(page, base, "/dashboard/", "dashboard, small groups withheld")
    goto_and_check(
        page,
        base,
        f"/dashboard/?level={Level.SECONDARY.value}&from=2026-09-01&to=2026-12-31",
        "dashboard, filtered to small groups",
    )
    goto_and_check(
        page,
        base,
        f"/learners/?level={Level.SECONDARY.value}",
        "learner list filtered by level",
    )

    item = flagged(learner, "SLEEP")
    FollowUp.objects.filter(pk=item.pk).update(due_date=timezone.localdate() - timedelta(days=3))
    goto_and_check(page, base, "/follow-ups/", "follow-up queue with an overdue item")
    goto_and_check(
        page,
        base,
        f"/follow-ups/?overdue=on&level={Level.PRIMARY.value}",
        "follow-up queue, filters match nothing",
    )
    goto_and_check(page, base, f"/follow-ups/{item.pk}/", "follow-up item, overdue")

    now = timezone.now()
    waiting = cohort_learner(name="waiting")
    for assessment_id, state, error in [
        (51, "submit_pending", "The assessment service could not be reached."),
        (52, "rejected", "The assessment service refused the request: unknown question."),
        (53, "submitted", "Results not ready yet."),
    ]:
        AssessmentAttempt.objects.create(
            learner=waiting,
            assessment_id=assessment_id,
            title="Study skills check",
            state=state,
            state_changed_at=now,
            submitted_at=now,
            last_error=error,
            delivery_attempts=3,
            next_attempt_at=now + timedelta(minutes=4),
        )
    UpstreamFailure.objects.bulk_create(
        UpstreamFailure(
            endpoint=endpoint,
            method="POST",
            outcome=outcome,
            status=status,
            attempt=number,
            request_id=f"sbx-{number:08d}",
            latency_ms=120 * number,
            at=now - timedelta(minutes=number),
        )
        for number, (endpoint, outcome, status) in enumerate(
            [
                ("submit-assessment", "HTTP 503", 503),
                ("results", "timeout", None),
                ("create-learner", "HTTP 500", 500),
            ],
            start=1,
        )
    )
    goto_and_check(page, base, "/operations/", "operations with failures listed")
    goto_and_check(
        page, base, f"/learners/{waiting.pk}/attempts/52/", "staff view, refused, no results"
    )
    page.goto(base + "/operations/")
    submitted = AssessmentAttempt.objects.get(assessment_id=53)
    click_and_wait(page, f"main form[action$='/attempts/{submitted.pk}/retry/'] button")
    assert urlsplit(page.url).path == "/operations/" and page.locator(".messages").count()
    assert_accessible(page, "operations after a retry")

    page.goto(base + f"/learners/{learner.pk}/password/")
    page.fill("#id_new_password1", "Bright-Window-Seat-3")
    page.fill("#id_new_password2", "Something-Else-9")
    click_and_wait(page, "main form button[type=submit]")
    assert page.is_visible(".error-summary")
    assert_accessible(page, "password reset with an error")
    page.fill("#id_new_password1", "Bright-Window-Seat-3")
    page.fill("#id_new_password2", "Bright-Window-Seat-3")
    click_and_wait(page, "main form button[type=submit]")
    assert page.locator(".messages").count()
    assert_accessible(page, "learner detail after a password reset")
    page.goto(base + f"/learners/{learner.pk}/password/")
    page.check("#id_make_password")
    click_and_wait(page, "main form button[type=submit]")
    assert page.is_visible(".password-made")
    assert_accessible(page, "learner detail showing the password the portal made")

    # The follow-up holds the records: the lead lifts the hold, saying why, before erasing.
    page.goto(base + f"/learners/{learner.pk}/erase/")
    click_and_wait(page, "main form button[name=lift]")
    assert page.is_visible(".error-summary")
    assert_accessible(page, "erase confirmation under a hold, lifting it without a reason")
    page.fill("#id_lift-reason", "Resolved with the family.")
    click_and_wait(page, "main form button[name=lift]")
    assert page.locator(".messages").count()
    # An assessment being sent right now: erasing waits, and says so.
    sending = make_attempt(learner, assessment_id=61, state="submitting")
    page.goto(base + f"/learners/{learner.pk}/erase/")
    click_and_wait(page, "main form button[name=erase]")
    assert page.locator(".messages").count()
    assert_accessible(page, "erase confirmation with an error")
    AssessmentAttempt.objects.filter(pk=sending.pk).update(state="submit_pending")
    click_and_wait(page, "main form button[name=erase]")
    assert urlsplit(page.url).path == "/learners/" and page.locator(".messages").count()
    assert_accessible(page, "learner list after erasing a learner")
    page.close()


def test_the_sign_in_locks_page_passes_axe_empty_listed_and_after_a_lift(
    browser, live_server, staff, learner, viewport
):
    base = live_server.url
    page = sign_in(browser, live_server, staff, viewport)
    goto_and_check(page, base, "/sign-in-locks/", "sign-in locks, none")

    make_sign_in_lock(kind="account_address", user=learner.user, address="192.0.2.10")
    make_sign_in_lock(kind="account", user=learner.user, minutes=20)
    make_sign_in_lock(kind="address", address="2001:db8:85a3::8a2e:370:7334", minutes=90)
    make_sign_in_lock(kind="card", user=learner.user, address="192.0.2.10", minutes=25)
    make_sign_in_lock(
        kind="card_device", address="192.0.2.10", device="Safari on an iPad", minutes=30
    )
    make_sign_in_lock(kind="card_address", address="192.0.2.10", minutes=35)
    goto_and_check(
        page,
        base,
        "/sign-in-locks/",
        "sign-in locks, a learner's, a card's, a device's, an address's",
    )
    goto_and_check(page, base, f"/learners/{learner.pk}/", "learner detail, sign-in locked")
    page.goto(base + "/sign-in-locks/")
    click_and_wait(page, "main form[action$='/lift/'] button")
    assert page.locator(".messages").count()
    assert_accessible(page, "sign-in locks after lifting one")
    page.close()


def test_the_trust_dashboard_and_the_school_switcher_pass_axe(
    browser, live_server, db, settings, viewport
):
    """Two schools: the trust's figures (a small count, a withheld school), the switcher."""
    settings.DASHBOARD_MIN_GROUP_SIZE = 3
    beech = School.objects.create(code="BEECH", name="Beech Academy")
    rowan = School.objects.create(code="ROWAN", name="Rowan Primary")
    for school, learners in ((beech, 4), (rowan, 1)):
        with working_in(school.pk):
            for _ in range(learners):
                completed(cohort_learner(), "2026-09-10", areas={"SLEEP": "yes", "MEMORY": "yes"})
    # The school every test database has ("Our school") keeps its figures to itself.
    PartnerSettings.objects.filter(pk=PartnerSettings.of(School.default().pk).pk).update(
        withhold_from_trust=True
    )
    trust_admin = make_staff("tara.trust", role=StaffRole.TRUST_ADMIN)
    viewer = make_staff("vera.viewer", role=StaffRole.TRUST_VIEWER)

    page = sign_in(browser, live_server, trust_admin, viewport)
    assert page.is_visible("#school-choice")
    assert_accessible(page, "the dashboard with the school switcher")
    page.goto(live_server.url + "/trust/")
    assert "Withheld by the school" in page.inner_text("main")
    assert "fewer than 3" in page.inner_text("main")
    assert_accessible(page, "the trust dashboard, as a trust admin")
    page.select_option("#school-choice", "all")
    click_and_wait(page, ".school-switcher button")
    assert page.inner_text("#working-school") == "Working in: all schools"
    goto_and_check(page, live_server.url, "/dashboard/", "the dashboard of all schools")
    page.close()

    page = sign_in(browser, live_server, viewer, viewport)
    assert urlsplit(page.url).path == "/trust/"
    assert_accessible(page, "the trust dashboard, as a trust viewer")
    page.close()


def test_the_roster_pages_pass_axe(browser, live_server, viewport):
    """The school's records: the list, a held sync with problems, grades, slips and printing."""
    from classes.models import SchoolGroup
    from roster.models import RosterSync
    from tests.factories import make_group
    from tests.roster_syncs import make_sync, registered_with_slips

    admin = make_staff("ada.admin", role=StaffRole.ADMIN)
    held = make_sync(state=RosterSync.State.HELD, joiners=60, problems=3)
    applied = make_sync(state=RosterSync.State.APPLIED, filename="earlier.zip")
    registered_with_slips(
        applied, [make_group("7A"), make_group("Year 7", kind=SchoolGroup.Kind.YEAR_GROUP)]
    )
    base = live_server.url
    page = sign_in(browser, live_server, admin, viewport)
    goto_and_check(page, base, "/roster/", "school records, a held sync and an applied one")
    assert page.is_visible("text=Held: waiting for you")
    click_and_wait(page, "main form button[type=submit]")
    assert page.is_visible(".error-summary")
    assert_accessible(page, "school records, an upload without a file")

    goto_and_check(page, base, f"/roster/{held.pk}/", "a held sync with problems")
    assert page.is_visible(".roster-hold")
    page.locator("details.roster-names summary").first.click()
    assert_accessible(page, "a held sync, a list of names open")

    reading = make_sync(state=RosterSync.State.READING, filename="uploaded.zip")
    goto_and_check(page, base, f"/roster/{reading.pk}/", "a sync being read")
    assert page.is_visible("#roster-wait")
    # Read by the worker meanwhile: the page shows it by itself (roster_wait.js).
    RosterSync.objects.filter(pk=reading.pk).update(state=RosterSync.State.APPLIED)
    page.wait_for_selector("#roster-wait", state="detached", timeout=15_000)
    assert page.is_visible("text=Applied")

    goto_and_check(page, base, "/roster/grades/", "grades and levels")
    page.fill("#id_roster_grade_levels", "Y7 = secondary\nY8 is big")
    click_and_wait(page, "main form button[type=submit]")
    assert page.is_visible(".error-summary")
    assert_accessible(page, "grades and levels, a line that cannot be read")

    goto_and_check(page, base, f"/roster/{applied.pk}/slips/", "password slips to print")
    click_and_wait(page, "main form button[type=submit]")
    assert page.is_visible(".password-slip")
    assert_accessible(page, "a class's password slips, printed")
    goto_and_check(page, base, f"/roster/{applied.pk}/slips/", "password slips, none left")
    page.close()


# The actions of these URL names answer with a file, with JSON, or with a redirect to a page
# that is checked above in the state the action leaves: they have no page of their own.
def test_safeguarding_pages_pass_axe(browser, live_server, staff, learner, viewport):
    PartnerSettings.current()
    PartnerSettings.objects.update(school_contact="Mrs Khan, in room 12")
    page = sign_in(browser, live_server, learner.user, viewport)
    page.goto(live_server.url + "/me/talk/")
    assert_accessible(page, "I want to talk to someone")
    # A name the page did not offer (as if it changed while the page was open).
    page.eval_on_selector("#id_contact_0", "radio => { radio.value = 'Someone else' }")
    tab_to(page, "#id_unsafe")
    page.keyboard.press("Space")
    tab_to(page, "#id_contact_0")
    page.keyboard.press("Space")
    press_enter_on(page, "main button[type=submit]")
    assert "Choose one from the list" in page.content()
    assert_accessible(page, "I want to talk to someone, a name not offered")
    # By keyboard alone: the choice kept, an about chosen with the arrow keys, a contact.
    assert page.is_checked("#id_unsafe")
    tab_to(page, "#id_about_0")
    page.keyboard.press("ArrowDown")
    tab_to(page, "#id_contact_0")
    page.keyboard.press("Space")
    press_enter_on(page, "main button[type=submit]")
    assert 'href="tel:999"' in page.content()
    assert_accessible(page, "the staff have been told: the pupil does not feel safe")
    page.goto(live_server.url + "/me/talk/")
    page.click("main button[type=submit]")
    page.wait_for_load_state()
    assert "We have told the staff" in page.content()
    assert_accessible(page, "the staff have been told")
    page.close()
    alert = Alert.objects.get(kind=Alert.Kind.ASKED)
    assert (alert.about, alert.wanted_contact, alert.urgent) == (
        "friends",
        "Mrs Khan, in room 12",
        True,
    )

    page = sign_in(browser, live_server, staff, viewport)
    page.goto(live_server.url + "/learners/")
    assert page.is_visible(".banner-alert")
    assert_accessible(page, "a lead's page with the alerts banner")
    page.goto(live_server.url + "/safeguarding/")
    assert "Urgent: the pupil said" in page.content()
    assert_accessible(page, "alerts waiting, an urgent request first")
    page.click("main table a")
    page.wait_for_load_state()
    assert "What the pupil said" in page.content()
    assert_accessible(page, "one alert, waiting")
    page.click("main form button[type=submit]")
    page.wait_for_load_state()
    assert page.is_visible(".error-summary") and page.url.endswith("/acknowledge/")
    assert_accessible(page, "one alert, taken on without saying what was done")
    page.select_option("#id_action", "Spoke with the pupil")
    page.select_option("#id_category", "wellbeing")
    page.click("main form button[type=submit]")
    page.wait_for_load_state()
    assert "Alert acknowledged" in page.content() and page.is_visible("#id_action")
    assert_accessible(page, "one alert, acknowledged, with its add-an-action form")
    page.click("main form button[type=submit]")
    page.wait_for_load_state()
    assert page.is_visible(".error-summary") and page.url.endswith("/actions/")
    assert_accessible(page, "one alert, a later action without saying what")
    page.click("main a[href^='/safeguarding/learners/']")
    page.wait_for_load_state()
    assert "Spoke with the pupil" in page.content()
    assert_accessible(page, "a child's safeguarding chronology")
    page.click("main form button[type=submit]")
    page.wait_for_load_state()
    assert page.is_visible(".error-summary") and page.url.endswith("/notes/")
    assert_accessible(page, "the chronology, an empty note")
    page.fill("#id_text", "Seen at break: settled.")
    page.click("main form button[type=submit]")
    page.wait_for_load_state()
    page.click("main a[href$='/amend/']")
    page.wait_for_load_state()
    assert_accessible(page, "amending one's own entry")
    page.fill("#id_text", "")
    page.click("main form button[type=submit]")
    page.wait_for_load_state()
    assert_accessible(page, "amending one's own entry, emptied")
    page.click("main a[href*='/safeguarding/learners/']")
    page.wait_for_load_state()
    page.click("main a[href$='/correct/']")
    page.wait_for_load_state()
    assert_accessible(page, "correcting an entry")
    page.click("main form button[type=submit]")
    page.wait_for_load_state()
    assert page.is_visible(".error-summary")
    assert_accessible(page, "correcting an entry, empty")
    page.click("main a[href*='/safeguarding/learners/']")
    page.wait_for_load_state()
    page.click("main a[href$='/print/']")
    page.wait_for_load_state()
    assert "Confidential: child protection record" in page.content()
    assert_accessible(page, "a child's safeguarding record to print")
    page.goto(live_server.url + "/safeguarding/?show=all")
    assert_accessible(page, "every alert")
    page.close()


@pytest.mark.no_dsl
def test_the_not_open_yet_pages_pass_axe(browser, live_server, staff, learner, viewport):
    page = sign_in(browser, live_server, learner.user, viewport)
    page.goto(live_server.url + "/me/")
    assert "Not open yet." in page.content()
    assert_accessible(page, "assessments not open yet")
    page.close()
    page = sign_in(browser, live_server, staff, viewport)
    page.goto(live_server.url + "/learners/")
    assert "Assessments are not open yet." in page.content()
    assert_accessible(page, "staff told why assessments are not open")
    page.close()


def tab_to(page, selector: str, presses: int = 60) -> None:
    """Press Tab until the element has the focus, as a keyboard user would move to it."""
    target = page.locator(selector)
    for _ in range(presses):
        page.keyboard.press("Tab")
        if target.evaluate("element => element === document.activeElement"):
            return
    raise AssertionError(f"Tab never reached {selector} on {page.url}")


def press_enter_on(page, selector: str) -> None:
    """Move to the element with Tab and press Enter on it; wait for the page it leads to."""
    tab_to(page, selector)
    with page.expect_navigation():
        page.keyboard.press("Enter")
    page.wait_for_load_state()


@pytest.mark.mfa
def test_second_factor_by_keyboard_app_and_passkey_passes_axe(
    browser, live_server, staff, settings, viewport
):
    """A member of staff sets up a second factor when first asked, by keyboard alone: an
    authenticator app (its codes computed by pyotp from the key on the page), then a passkey
    (Chromium's virtual authenticator), and steps up for the alerts with each."""
    import pyotp

    settings.MFA_WEBAUTHN_ALLOW_INSECURE_ORIGIN = True  # http://localhost, as on a laptop
    base = live_server.url
    context = browser.new_context(viewport=viewport)
    page = context.new_page()
    cdp = context.new_cdp_session(page)
    cdp.send("WebAuthn.enable")
    cdp.send(
        "WebAuthn.addVirtualAuthenticator",
        {
            "options": {
                "protocol": "ctap2",
                "transport": "internal",
                "hasResidentKey": True,
                "hasUserVerification": True,
                "isUserVerified": True,
            }
        },
    )

    def sign_in_by_keyboard() -> None:
        page.goto(base + "/accounts/login/")
        tab_to(page, "#id_username")
        page.keyboard.type(staff.username)
        page.keyboard.press("Tab")
        page.keyboard.type(PASSWORD)
        with page.expect_navigation():
            page.keyboard.press("Enter")
        page.wait_for_load_state()

    sign_in_by_keyboard()
    assert urlsplit(page.url).path == "/accounts/2fa/"
    assert "Every member of staff gives a second factor" in page.inner_text(".messages")
    assert_accessible(page, "second factor, none set up yet")
    page.goto(base + "/dashboard/")
    assert urlsplit(page.url).path == "/accounts/2fa/"  # nothing else first

    press_enter_on(page, "a[href='/accounts/2fa/totp/activate/']")
    assert page.locator(".totp-setup .qr svg").is_visible()
    assert_accessible(page, "authenticator app setup")
    key = "".join(page.inner_text("#authenticator_secret").split())
    tab_to(page, "#id_code")
    page.keyboard.type(pyotp.TOTP(key).now())
    with page.expect_navigation():
        page.keyboard.press("Enter")
    assert urlsplit(page.url).path == "/accounts/2fa/recovery-codes/"
    assert page.locator("#recovery_codes li").count() == 10
    assert_accessible(page, "recovery codes, shown once")
    press_enter_on(page, "main a[href='/']")
    assert urlsplit(page.url).path != "/accounts/2fa/"  # the portal opens

    page.goto(base + "/accounts/2fa/")
    assert_accessible(page, "second factor, an authenticator app set up")
    press_enter_on(page, "a[href='/accounts/2fa/webauthn/add/']")
    assert_accessible(page, "passkey setup")
    tab_to(page, "#mfa_webauthn_add")
    with page.expect_navigation():
        page.keyboard.press("Enter")  # the virtual authenticator makes the passkey
    assert urlsplit(page.url).path == "/accounts/2fa/"
    assert "You have 1 passkey or security key." in page.inner_text("main")
    for path, state in [
        ("/accounts/2fa/webauthn/", "passkeys list"),
        ("/accounts/2fa/recovery-codes/", "recovery codes, already shown"),
        ("/accounts/2fa/recovery-codes/generate/", "new recovery codes"),
        ("/accounts/2fa/totp/deactivate/", "removing the authenticator app"),
    ]:
        goto_and_check(page, base, path, state)
    page.goto(base + "/accounts/2fa/webauthn/")
    press_enter_on(page, "a[href$='/edit/']")
    assert_accessible(page, "renaming a passkey")
    page.goto(base + "/accounts/2fa/webauthn/")
    press_enter_on(page, "a[href$='/remove/']")
    assert_accessible(page, "removing a passkey")

    # Step-up: the alerts ask again once MFA_STEP_UP_MINUTES have passed; a code goes on.
    second_factor_given_minutes_ago(context, settings.MFA_STEP_UP_MINUTES + 1)
    page.goto(base + "/safeguarding/")
    assert urlsplit(page.url).path == "/accounts/2fa/reauthenticate/"
    assert_accessible(page, "step-up with a code")
    tab_to(page, "#id_code")
    page.keyboard.type(pyotp.TOTP(key).now())
    with page.expect_navigation():
        page.keyboard.press("Enter")
    assert urlsplit(page.url).path == "/safeguarding/"

    # ...or the passkey.
    second_factor_given_minutes_ago(context, settings.MFA_STEP_UP_MINUTES + 1)
    page.goto(base + "/safeguarding/")
    press_enter_on(page, "main a[href^='/accounts/2fa/webauthn/reauthenticate/']")
    assert_accessible(page, "step-up with a passkey")
    tab_to(page, "#mfa_webauthn_reauthenticate")
    with page.expect_navigation():
        page.keyboard.press("Enter")
    assert urlsplit(page.url).path == "/safeguarding/"

    # The next sign-in asks for the second factor before signing in: the passkey gives it.
    page.goto(base + "/accounts/logout/")
    press_enter_on(page, "main button[type=submit]")
    sign_in_by_keyboard()
    assert urlsplit(page.url).path == "/accounts/2fa/authenticate/"
    assert_accessible(page, "second factor at sign-in")
    tab_to(page, "#mfa_webauthn_authenticate")
    with page.expect_navigation():
        page.keyboard.press("Enter")
    page.goto(base + "/safeguarding/")
    assert urlsplit(page.url).path == "/safeguarding/"
    context.close()


def test_the_pages_a_school_account_may_meet_pass_axe(
    browser, live_server, staff, settings, viewport
):
    """allauth's pages around a school account: a provider's sign-in asked for by a typed
    address (it asks to confirm), its return without the state it set out with, a sign-in
    given up or failed, an inactive account, and the password asked again."""
    with running_identity_provider() as provider:
        use_identity_provider(settings, provider)
        # Google too, never contacted: these pages only name it.
        settings.SOCIALACCOUNT_PROVIDERS = {
            **settings.SOCIALACCOUNT_PROVIDERS,
            "google": {
                "APPS": [{"client_id": "portal-test", "secret": "never-sent"}],
                "SCOPE": ["openid", "email", "profile"],
            },
        }
        page = browser.new_page(viewport=viewport)
        base = live_server.url
        for path, state, status in [
            ("/accounts/oidc/oidc/login/", "a trust provider's sign-in, to confirm", 200),
            ("/accounts/oidc/oidc/login/callback/", "a trust provider's return, lost", 401),
            ("/accounts/google/login/", "Google's sign-in, to confirm", 200),
            ("/accounts/google/login/callback/", "Google's return, lost", 401),
            ("/accounts/3rdparty/login/cancelled/", "a school sign-in given up", 200),
            ("/accounts/3rdparty/login/error/", "a school sign-in failed", 401),
            ("/accounts/inactive/", "an inactive account", 200),
        ]:
            goto_and_check(page, base, path, state, status)
        browser_sign_in(page, base, staff.username)
        goto_and_check(page, base, "/accounts/reauthenticate/", "the password asked again")
        page.close()


NOT_A_PAGE = {
    "assessments:take": "redirects to the question page, check answers or results",
    "assessments:start": "POST only; redirects to the first question page",
    "assessments:save_answer": "JSON for the autosave script (its messages are checked)",
    "assessments:keep_alive": "JSON for the session-timeout script (its dialog is checked)",
    "assessments:status": "JSON for the waiting page's script (its news is checked)",
    "assessments:resend": "POST only; redirects to the results page (checked)",
    "assessments:refresh": "POST only; redirects to the question page (checked)",
    "pictures:picture": "an answer picture (PNG), shown inside the question page (checked)",
    "speech:recording": "read-aloud audio (WAV), played by the question page (checked)",
    "learners:csv_learners": "a CSV download",
    "dashboard:results_csv": "a CSV download",
    "imports:template": "a CSV download",
    "imports:results": "a CSV download",
    "imports:credentials": "a CSV download (POST); when gone, redirects to the job",
    "imports:progress": "JSON for the progress bar's script",
    "imports:confirm": "POST only; redirects to the job page (checked running)",
    "imports:discard": "POST only; redirects to the upload page (checked)",
    "roster:result": "a CSV download",
    "roster:approve": "POST only; redirects to the sync's page (checked held)",
    "roster:discard": "POST only; redirects to the sync's page (checked held)",
    "privacy:export": "a JSON download",
    "operations_retry": "POST only; redirects to the operations page (checked)",
    "classes:remove_learner": "POST only; redirects to the class page (checked)",
    "staff:sign_in_lock_lift": "POST only; redirects to the sign-in locks page (checked)",
    "lessons:sign_in_open": "POST only; redirects to the class page (checked in a lesson)",
    "lessons:sign_in_close": "POST only; redirects to the class page (checked closed)",
    "lessons:session_end": "POST only; redirects to the class page (checked in a lesson)",
    "lessons:roster": "the roster alone, fetched by the class page's script (checked in it)",
    "lessons:group_cards_reissue": "POST only; redirects to the cards page (checked)",
    "lessons:learner_card_reissue": "POST only; redirects to the learner's card (checked)",
    "school_choose": "POST only; redirects back (the switcher is checked on the pages it heads)",
    "mfa_download_recovery_codes": "a text download, and off: recovery codes are shown once",
    "account_login": "allauth's name for the sign-in page (checked as `login`)",
    "account_logout": "allauth's name for the sign-out page (checked as `logout`)",
}


def pages_axe_must_reach() -> set[str]:
    """Return the URL names of the portal that have a page of their own (admin apart)."""
    return {name for name, _params in portal_urls()} - set(NOT_A_PAGE)


def test_every_url_name_is_checked_by_axe_or_excluded_with_a_reason():
    """No page escapes axe: each URL name has a page to reach, or a reason it has none.

    That each page was reached is checked at the end of a session that ran this whole module
    and passed (tests/axe_coverage.py), over every xdist worker that ran a part of it.
    """
    names = {name for name, _params in portal_urls()}
    assert not set(NOT_A_PAGE) - names, f"excluded but gone: {set(NOT_A_PAGE) - names}"
    pages = pages_axe_must_reach()
    assert len(pages) >= 15, sorted(pages)
