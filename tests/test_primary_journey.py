"""A primary pupil answers a whole assessment in Chromium by the speaker buttons and pictures.

Against a live portal, the sandbox over HTTP (its primary bank gives every answer a picture
at an address) and a real task worker, which fetches the pictures and makes the audio in the
background. The page's speech engine is replaced by a recorder: the test reads what the page
asked it to say. Every request the browser makes is watched: none may leave the portal.
"""

import re
from datetime import date

import pytest
from playwright.sync_api import Page, expect

from assessments.models import AssessmentAttempt
from learners.models import Level
from learners.services import learner_register
from pictures.models import Picture
from speech.models import Recording
from tests.browsing import browser_sign_in
from tests.journeys import LEARNER_PASSWORD
from tests.shared_redis import wait_until
from tests.workers import db_worker_running

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

QUEUES = ["default", "imports", "media"]
DATABASE_TASKS = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend", "QUEUES": QUEUES}}
WORKER_SETTINGS = {
    "DELIVERY_RETRY_BASE": "1",
    "DELIVERY_RETRY_CAP": "2",
    "SUBMISSION_QUIET_PERIOD": "0",
    "PARTNER_API_TIMEOUT": "2,5",
}
BACKGROUND_WORK_TIMEOUT = 120  # seconds: generous, the worker polls and espeak-ng runs per text

# Stands in for the browser's speech engine: one English voice, and every utterance the page
# asks for is handed to the test (exposed as `recordSpeech`), across page loads.
SPEECH_RECORDER = """
(() => {
  const voice = { name: "Test voice", lang: "en-GB", default: true, localService: true,
                  voiceURI: "test-voice" };
  const engine = {
    speaking: false, pending: false, paused: false, onvoiceschanged: null,
    getVoices: () => [voice],
    speak: (utterance) => {
      window.recordSpeech(utterance.text);
      setTimeout(() => utterance.onend && utterance.onend(new Event("end")), 0);
    },
    cancel: () => {}, pause: () => {}, resume: () => {},
    addEventListener: () => {}, removeEventListener: () => {},
  };
  Object.defineProperty(window, "speechSynthesis", { value: engine, configurable: true });
})();
"""


@pytest.fixture
def worker(settings, live_server, upstream):
    """The delivery and media `db_worker`s on the database queue, as in production."""
    settings.TASKS = DATABASE_TASKS
    with (
        db_worker_running(upstream.base_url, "default", env=WORKER_SETTINGS) as delivery,
        db_worker_running(upstream.base_url, "media", env=WORKER_SETTINGS),
    ):
        yield delivery


def speak(page: Page, button) -> None:
    expect(button).to_be_visible()
    button.click()


def test_a_primary_pupil_answers_everything_by_sound_and_pictures(
    browser, live_server, upstream, staff, worker
):
    pupil = learner_register(
        username="poppy.primary",
        password=LEARNER_PASSWORD,
        dob=date(2018, 5, 5),
        registered_by=staff,
        level=Level.PRIMARY,
    )
    context = browser.new_context()
    context.set_default_timeout(20_000)
    spoken: list[str] = []
    context.expose_function("recordSpeech", lambda text: spoken.append(text))
    context.add_init_script(SPEECH_RECORDER)
    requests: list[str] = []
    context.on("request", lambda request: requests.append(request.url))
    server_errors: list[str] = []
    context.on(
        "response",
        lambda response: server_errors.append(response.url) if response.status >= 500 else None,
    )
    page = context.new_page()
    try:
        browser_sign_in(page, live_server.url, pupil.username, LEARNER_PASSWORD)
        expect(page).to_have_url(live_server.url + "/me/")
        page.locator("main form button[type=submit]").first.click()
        page.wait_for_url("**/page/1/")
        attempt = AssessmentAttempt.objects.get(learner=pupil)
        questions = attempt.questions
        assert len(questions) >= 10 and all(
            answer.icon.startswith("http") for q in questions for answer in q.answers
        )
        # The worker fetches every picture and makes every text's audio; the page then shows
        # them (a first rendering without them is kept only briefly).
        icons = {answer.icon for q in questions for answer in q.answers}
        wait_until(
            lambda: Picture.objects.filter(state="ready").count() == len(icons),
            timeout=BACKGROUND_WORK_TIMEOUT,
            what="every answer picture fetched by the worker",
        )
        wait_until(
            lambda: not Recording.objects.filter(state="pending").exists(),
            timeout=BACKGROUND_WORK_TIMEOUT,
            what="every text's audio made (or given up) by the worker",
        )

        # The first page was drawn before the pictures came: it is drawn again within seconds.
        first_page = f"{live_server.url}/me/assessments/{attempt.assessment_id}/page/1/"

        def pictures_shown() -> bool:
            page.goto(first_page)
            return page.locator("form.question-form label img").count() > 0

        wait_until(pictures_shown, timeout=60, what="the pictures on the question page")

        chosen: dict[str, str] = {}
        for number, question in enumerate(questions, start=1):
            page.goto(f"{live_server.url}/me/assessments/{attempt.assessment_id}/page/{number}/")
            expect(page.locator("legend")).to_contain_text(question.text)
            expect(page.get_by_text(f"Question {number} of {len(questions)}")).to_be_visible()
            form = page.locator("form.question-form")
            assert form.locator("fieldset").count() == 1
            speak(page, form.locator(f'button.speak[data-speak="{question.text}"]'))
            for answer in question.answers:
                speak(page, form.locator(f'.radio button.speak[data-speak="{answer.copy}"]'))
            # The pupil picks by the picture: the answer's button holds it, from the portal.
            pick = question.answers[number % len(question.answers)]
            radio = form.locator(f'input[type=radio][value="{pick.id}"]')
            label = form.locator(f'label[for="{radio.get_attribute("id")}"]')
            expect(label).to_contain_text(pick.copy)
            picture = label.locator("img")
            expect(picture).to_have_attribute("src", re.compile(r"^/pictures/[0-9a-f]{64}$"))
            assert picture.evaluate("(img) => img.complete && img.naturalWidth > 0")
            box = label.bounding_box()
            assert box["height"] >= 48, f"answer button {box['height']} px high"
            picture.click()
            expect(radio).to_be_checked()
            chosen[question.id] = pick.id
            form.locator("button[name=continue]").click()
            page.wait_for_load_state()

        expect(page).to_have_url(re.compile(r"/check/$"))
        page.locator("form[action$='/submit/'] button[type=submit]").click()
        wait_until(
            lambda: upstream.state.offers[attempt.assessment_id].answers is not None,
            timeout=BACKGROUND_WORK_TIMEOUT,
            what="the answers delivered upstream",
        )
    finally:
        context.close()

    texts = [q.text for q in questions] + [a.copy for q in questions for a in q.answers]
    assert set(texts) <= set(spoken), sorted(set(texts) - set(spoken))
    assert upstream.state.submissions.count(attempt.assessment_id) == 1
    assert upstream.state.offers[attempt.assessment_id].answers == chosen
    outside = [url for url in requests if not url.startswith(live_server.url)]
    assert requests and not outside, outside
    assert server_errors == []
