"""The learner's whole journey with the keyboard alone: Tab, arrows, Space, Enter and typing.

No clicks and no filling: after the first visit to the sign-in page every step is a key press.
At every focus move the focused element must show a visible focus indicator and be on screen;
a page with errors must put focus on its error summary, whose links take focus to the field.
"""

from urllib.parse import urlsplit

import pytest

from accounts.models import StaffRole
from assessments.models import AssessmentAttempt
from assessments.taking import question_pages
from classes.models import SchoolGroup
from learners.models import Level
from lessons.services import group_cards_print
from safeguarding.asking import alert_raise_for_request
from schools.models import School
from tests.factories import (
    PASSWORD,
    cohort_learner,
    make_group,
    make_sign_in_lock,
    make_staff,
    put_in_group,
)
from tests.journeys import LEARNER_PASSWORD, register_pupil
from tests.keyboard_support import (
    assert_focus_shows,
    assert_on_error_summary,
    assert_visual_order,
    choose,
    describe,
    focus_is,
    focused,
    press,
    press_and_load,
    reach,
    settled,
    sign_in_with_keyboard,
    tab_round,
    tab_to_next,
    tab_until,
)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

WRONG_PASSWORD = "not-the-password"


def test_the_first_tab_on_the_sign_in_page_reaches_the_skip_link(
    browser, live_server, db, viewport
):
    """The journey's first page: the first Tab shows the skip link, which passes the header.

    Nothing takes focus as the page loads (autofocus), or Tab would pass the skip link by.
    """
    page = browser.new_page(viewport=viewport)
    page.goto(live_server.url + "/accounts/login/")
    where = "sign-in page"
    first = press(page, "Tab", where)
    assert focus_is(page, ".skip-link"), f"{where}: the first Tab reaches {describe(first)}"
    assert first["text"] == "Skip to main content"
    page.keyboard.press("Enter")
    assert focus_is(page, "main#main"), f"{where}: the skip link does not move focus to main"
    tab_to_next(page, "#id_username", f"{where}, after the skip link")
    page.close()


def test_a_learner_goes_from_sign_in_to_results_with_the_keyboard_alone(
    browser, live_server, upstream, staff, viewport
):
    pupil = register_pupil(staff)
    page = browser.new_page(viewport=viewport)
    page.goto(live_server.url + "/accounts/login/")

    # Signing in: a wrong password, then none, then the right one.
    sign_in_with_keyboard(page, pupil.username, WRONG_PASSWORD)
    where = "sign-in page after a wrong password"
    assert_on_error_summary(page, where, "There is a problem", "Enter a correct username")
    tab_to_next(page, "#id_username", where)
    assert page.input_value("#id_username") == pupil.username
    tab_to_next(page, "#id_password", where)
    press_and_load(page)  # with no password
    where = "sign-in page with no password"
    assert_on_error_summary(page, where, "Enter your password.")
    tab_to_next(page, ".error-summary a[href='#id_password']", where)
    press(page, "Enter", f"{where}, following the summary's link")
    assert focus_is(page, "#id_password"), f"{where}: the summary's link does not focus the field"
    page.keyboard.type(LEARNER_PASSWORD)
    press_and_load(page)
    assert page.url == live_server.url + "/me/"

    # My assessments: the skip link passes the header; the first stop after it is Start.
    where = "my assessments"
    press(page, "Tab", where)
    assert focus_is(page, ".skip-link"), f"{where}: the first Tab does not reach the skip link"
    page.keyboard.press("Enter")
    assert focus_is(page, "main#main"), f"{where}: the skip link does not move focus to main"
    start = tab_to_next(page, "main button[type=submit]", f"{where}, after the skip link")
    assert start["text"] == "Start my assessment"
    press_and_load(page)

    attempt = AssessmentAttempt.objects.get(learner=pupil)
    pages = question_pages(attempt)
    assert len(pages) >= 2
    choices: dict[int, int] = {}  # question position -> chosen answer (from 0)
    unanswered = pages[0].questions[-1]
    for section in pages:
        where = f"question page {section.number}"
        # (After the error summary's link, the address keeps its #fragment through redirects.)
        assert urlsplit(page.url).path.endswith(f"/page/{section.number}/"), page.url
        # All the way round the page: each question is one stop, in the order shown.
        stops = tab_round(page, where)
        groups = [stop["name"] for stop in stops if stop["type"] == "radio"]
        assert groups == [f"q{entry.position}" for entry in section.questions], where
        assert [stop["text"] for stop in stops if stop["tag"] == "button" and stop["inMain"]][
            :2
        ] == ["Save and continue", "Save and come back later"]
        assert_visual_order(stops, where)

        # Focus is on the skip link again: now answer, question by question.
        for index, entry in enumerate(section.questions):
            position = entry.position
            group = f"input[type=radio][name=q{position}]"
            if index == 0:
                tab_until(page, group, where)
            else:
                tab_to_next(page, group, where)
            assert focus_is(page, f"#id_q{position}_1"), f"{where}: q{position} starts elsewhere"
            if entry is unanswered:
                continue  # left unanswered on purpose
            choices[position] = (position + index) % len(entry.question.answers)
            choose(page, position, choices[position], f"{where}, q{position}")
        tab_to_next(page, "button[name=continue]", where)
        press_and_load(page)

        if section.number == 1:
            # One question left unanswered: focus goes to the error summary, whose link goes
            # to the question's first answer.
            where = "question page 1 with a question unanswered"
            position = unanswered.position
            assert page.url.endswith("/page/1/"), page.url
            assert_on_error_summary(page, where, "There is a problem", unanswered.question.text)
            tab_to_next(page, f".error-summary a[href='#id_q{position}_1']", where)
            press(page, "Enter", f"{where}, following the summary's link")
            assert focus_is(page, f"#id_q{position}_1"), (
                f"{where}: the summary's link does not take focus to the question"
            )
            choices[position] = 0
            choose(page, position, 0, where)
            tab_to_next(page, "button[name=continue]", where)
            press_and_load(page)

    # Check your answers: change one answer through its Change link, and come back.
    where = "check your answers"
    assert urlsplit(page.url).path.endswith(f"/assessments/{attempt.assessment_id}/check/")
    position = pages[0].questions[1].position
    changed = pages[0].questions[1].question
    stops = tab_round(page, where)
    changes = [stop for stop in stops if stop["inMain"] and stop["tag"] == "a"]
    assert [stop["text"].split(" ")[0] for stop in changes] == ["Change"] * len(attempt.questions)
    assert_visual_order(stops, where)
    link = tab_until(page, f"main a[href$='#id_q{position}']", where)
    assert link["text"].startswith("Change"), link
    press_and_load(page)
    where = "question page 1, changing an answer"
    assert "from=check" in page.url, page.url
    # The link goes to the question: the next Tab stop is its chosen answer.
    focus = press(page, "Tab", where)
    assert focus_is(page, f"input[name=q{position}]:checked"), (
        f"{where}: the first Tab after the Change link reaches {describe(focus)}, "
        f"not the question's chosen answer"
    )
    before = choices[position]
    after = before + 1 if before + 1 < len(changed.answers) else before - 1
    press(page, "ArrowDown" if after > before else "ArrowUp", where)
    assert focus_is(page, f"#id_q{position}_{after + 1}:checked"), where
    back = tab_until(page, "button[name=continue]", where)
    assert back["text"] == "Save and go back to check your answers"
    press_and_load(page)
    where = "check your answers, after the change"
    assert urlsplit(page.url).path.endswith("/check/"), page.url
    row = page.inner_text(f"#answer-{changed.id}")
    assert changed.answers[after].copy in row, row
    send = tab_until(page, "main form button[type=submit]", where)
    assert send["text"] == "Send my answers"
    press_and_load(page)

    # The results, straight away from the sandbox; Tab goes round them.
    where = "results"
    assert urlsplit(page.url).path.endswith(f"/assessments/{attempt.assessment_id}/results/")
    attempt.refresh_from_db()
    assert attempt.state == AssessmentAttempt.State.COMPLETED
    assert attempt.answers.get(question_id=changed.id).answer_id == changed.answers[after].id
    stops = tab_round(page, where)
    assert any(stop["text"] == "Back to my assessments" for stop in stops), stops
    assert_visual_order(stops, where)
    page.close()


def test_the_session_timeout_warning_works_with_the_keyboard(
    browser, live_server, learner, settings
):
    settings.LEARNER_IDLE_TIMEOUT = 121  # the warning comes 2 minutes before: after 1 s
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    kept_alive = []
    page.on(
        "response",
        lambda response: kept_alive.append(response) if "/me/session/" in response.url else None,
    )
    page.goto(live_server.url + "/accounts/login/")
    sign_in_with_keyboard(page, learner.username, PASSWORD)
    assert page.url == live_server.url + "/me/"
    dialog = page.get_by_role("alertdialog", name="You will be signed out soon")
    dialog.wait_for(timeout=10000)

    where = "the session-timeout warning"
    stay = assert_focus_shows(page, where)
    assert stay["inDialog"] and stay["text"] == "Stay signed in", describe(stay)
    # Tab stays in the dialog (or goes out to the browser's own controls and back): the page
    # behind it is out of reach, and the button is never a trap.
    for _ in range(3):
        page.keyboard.press("Tab")
        focus = focused(page)
        if focus is not None:
            assert_focus_shows(page, f"{where}, after Tab")
            assert focus["inDialog"], f"{where}: Tab reaches {describe(focus)} behind the dialog"
    if not focus_is(page, "dialog button"):
        press(page, "Tab", where)
    assert focus_is(page, "dialog button"), where

    with page.expect_response("**/me/session/") as keep_alive:
        page.keyboard.press("Enter")
    assert keep_alive.value.json() == {"seconds_left": 121}
    dialog.wait_for(state="hidden", timeout=5000)

    # Kept for 121 s again: the warning comes back after 1 s. Escape, the usual way to close a
    # dialog, must not leave the learner to be signed out without a warning: it either keeps
    # the session too or leaves the warning open.
    dialog.wait_for(timeout=10000)
    assert focus_is(page, "dialog button"), f"{where}, again: focus is not on Stay signed in"
    kept_alive.clear()
    page.keyboard.press("Escape")
    page.wait_for_timeout(1000)
    if dialog.is_visible():
        assert focus_is(page, "dialog button"), f"{where}: Escape moved focus out of the warning"
    else:
        assert [response.status for response in kept_alive] == [200], (
            f"{where}: Escape closed the warning without keeping the session; the learner "
            "will be signed out with no further warning"
        )
    page.close()


def test_an_admin_makes_a_class_and_puts_a_learner_in_it_with_the_keyboard_alone(
    browser, live_server, db, viewport
):
    """Tab, type, arrows, Space and Enter: make 7B, find a pupil, tick them, add them."""
    admin = make_staff("ada.admin", role=StaffRole.ADMIN)
    pupil = cohort_learner(name="pia.pupil")
    page = browser.new_page(viewport=viewport)
    page.goto(live_server.url + "/accounts/login/")
    sign_in_with_keyboard(page, admin.username, PASSWORD)
    page.goto(live_server.url + "/classes/")
    settled(page)

    tab_until(page, "main a[href='/classes/new/']", "classes page")
    press_and_load(page)
    where = "new class page"
    reach(page, "#id_name", where)
    page.keyboard.type("7B")
    tab_to_next(page, "#id_level", where)
    page.keyboard.press("ArrowDown")  # the first level after "Choose a level"
    tab_until(page, "main button[type=submit]", where)
    press_and_load(page)

    group = SchoolGroup.objects.get(name="7B")
    assert urlsplit(page.url).path == f"/classes/{group.pk}/"
    where = "class page"
    tab_until(page, "#learner-search", where)
    page.keyboard.type("pia")
    press_and_load(page)
    tab_until(page, "input[name=learners]", "class page with search results")
    page.keyboard.press("Space")
    tab_until(page, f"main form[action$='/classes/{group.pk}/learners/'] button", where)
    press_and_load(page)
    # The first level offered is further education and Pia is secondary: asked first.
    assert page.inner_text("h1") == "Add learners of another level to 7B?"
    assert not group.memberships.exists()
    tab_until(page, "main button[type=submit]", "asked about another level")
    press_and_load(page)

    assert list(group.memberships.values_list("learner_id", flat=True)) == [pupil.pk]
    assert "1 learner added to 7B." in page.inner_text(".messages")


def test_staff_lift_a_sign_in_lock_with_the_keyboard_alone(
    browser, live_server, staff, learner, viewport
):
    make_sign_in_lock(kind="account_address", user=learner.user, address="192.0.2.10")
    page = browser.new_page(viewport=viewport)
    page.goto(live_server.url + "/accounts/login/")
    sign_in_with_keyboard(page, staff.username, PASSWORD)

    tab_until(page, "header a[href='/sign-in-locks/']", "staff's first page")
    press_and_load(page)
    where = "sign-in locks"
    button = tab_until(page, "main form[action$='/lift/'] button", where)
    assert button["text"] == "Lift the lock on Lee Pupil", describe(button)
    press_and_load(page)  # Enter on the button sends its form

    where = "sign-in locks after a lift"
    assert "The lock on Lee Pupil from 192.0.2.10 is lifted." in page.inner_text(".messages")
    stops = tab_round(page, where)
    assert not any(stop["text"].startswith("Lift the lock") for stop in stops), stops
    assert_visual_order(stops, where)
    page.close()


def test_a_teacher_opens_sign_in_and_a_pupil_signs_in_by_typed_code_with_the_keyboard_alone(
    browser, live_server, db, viewport
):
    """The whole card journey without a mouse or a camera: open the lesson, type the code."""
    group = make_group("2C", level=Level.PRIMARY)
    teacher = make_staff("tess.teacher", role=StaffRole.TEACHER, groups=[group])
    pupil = cohort_learner(name="amy.pupil")
    put_in_group(group, pupil)
    card = group_cards_print(group=group, learners=[pupil], printed_by=teacher, address=None)[0]

    staff_page = browser.new_page(viewport=viewport)
    staff_page.goto(live_server.url + "/accounts/login/")
    sign_in_with_keyboard(staff_page, teacher.username, PASSWORD)
    staff_page.goto(live_server.url + f"/classes/{group.pk}/")
    settled(staff_page)
    where = "class page, sign-in closed"
    tab_until(staff_page, "#id_minutes", where)
    staff_page.keyboard.press("Control+A")
    staff_page.keyboard.type("20")
    tab_to_next(staff_page, "#lesson form button[type=submit]", where)
    press_and_load(staff_page)
    assert "Card sign-in is open until" in staff_page.inner_text("#lesson")

    pupil_page = browser.new_page(viewport=viewport)
    pupil_page.goto(live_server.url + "/card/")
    settled(pupil_page)
    where = "card page"
    tab_until(pupil_page, "#id_code", where)
    pupil_page.keyboard.type(card.code_display.lower())
    press_and_load(pupil_page)
    where = "That's me page"
    button = tab_until(pupil_page, "main button[type=submit]", where)
    assert button["text"] == f"That's me: {pupil.first_name}", describe(button)
    press_and_load(pupil_page)

    assert urlsplit(pupil_page.url).path == "/me/"
    assert f"This is {pupil.first_name}'s session." in pupil_page.inner_text("header")
    staff_page.close()
    pupil_page.close()


def test_a_trust_admin_switches_school_with_the_keyboard_alone(browser, live_server, db, viewport):
    """Tab to the switcher, choose with the arrows, Tab to "Switch school", Enter."""
    School.objects.create(code="BEECH", name="Beech Academy")
    rowan = School.objects.create(code="ROWAN", name="Rowan Primary")
    trust_admin = make_staff("tara.trust", role=StaffRole.TRUST_ADMIN)
    page = browser.new_page(viewport=viewport)
    page.goto(live_server.url + "/accounts/login/")
    sign_in_with_keyboard(page, trust_admin.username, PASSWORD)
    where = "dashboard with the school switcher"
    assert urlsplit(page.url).path == "/dashboard/"
    assert page.inner_text("#working-school") == "Working in: Beech Academy"

    tab_until(page, "#school-choice", where)
    # All schools, Beech Academy (chosen), Our school, Rowan Primary: two down, no click.
    press(page, "ArrowDown", where)
    press(page, "ArrowDown", where)
    assert page.input_value("#school-choice") == str(rowan.pk)
    assert urlsplit(page.url).path == "/dashboard/"  # choosing alone sends nothing
    tab_to_next(page, ".school-switcher button[type=submit]", where)
    press_and_load(page)

    assert urlsplit(page.url).path == "/dashboard/"
    assert page.inner_text("#working-school") == "Working in: Rowan Primary"
    assert page.input_value("#school-choice") == str(rowan.pk)
    page.close()


def test_a_lead_takes_a_concern_on_and_reads_the_chronology_with_the_keyboard_alone(
    browser, live_server, staff, learner, viewport
):
    """From the banner to the alert, past the error summary, to the child's chronology."""
    alert_raise_for_request(learner=learner)
    page = browser.new_page(viewport=viewport)
    page.goto(live_server.url + "/accounts/login/")
    sign_in_with_keyboard(page, staff.username, PASSWORD)
    tab_until(page, ".banner-alert a[href='/safeguarding/']", "a lead's first page")
    press_and_load(page)
    tab_until(page, "main table a[href^='/safeguarding/alerts/']", "the alerts")
    press_and_load(page)

    where = "one alert"
    tab_until(page, "main form button[type=submit]", where)
    press_and_load(page)  # nothing chosen
    assert_on_error_summary(page, "the alert, nothing chosen", "Choose what was done.")
    press(page, "Tab", where)  # the summary's first link
    press(page, "Enter", where)  # to the field it names
    assert focus_is(page, "#id_action"), describe(focused(page))
    press(page, "ArrowDown", where)  # the first action: taking it on, before doing anything
    assert page.input_value("#id_action") == "Will speak with the pupil"
    tab_to_next(page, "#id_category", where)
    press(page, "ArrowDown", where)
    tab_to_next(page, "#id_note", where)
    page.keyboard.type("Talked at break; settled.")
    tab_to_next(page, "main form button[type=submit]", where)
    press_and_load(page)

    assert "Alert acknowledged" in page.inner_text(".messages")
    tab_until(page, "main a[href^='/safeguarding/learners/']", "the alert, taken on")
    press_and_load(page)
    chronology = page.inner_text("main")
    assert "Will speak with the pupil" in chronology
    assert "Talked at break; settled." in chronology
    assert_visual_order(tab_round(page, "the chronology"), "the chronology")
    page.close()
