"""The youngest pupils' question pages: one question a screen, big picture tiles, read aloud."""

import re
import time

import pytest
from django.test.signals import template_rendered

from assessments import page_markup
from assessments.models import AssessmentAttempt
from assessments.taking import PRIMARY_LEVEL, question_pages
from schools.models import PartnerSettings
from speech.models import Recording
from speech.selectors import text_hash
from tests.factories import MOON, SUN, make_attempt, pictured_content, ready_picture
from tests.journeys import attempt_url, page_showing, page_url, register_pupil

pytestmark = pytest.mark.backend

SECONDARY_LEVEL = "LOA_PARTNER_LEVEL2"
# Words a child should not meet on their question page (issue 31).
ADULT_WORDS = ("assessment service", "upstream", "portal", "session")


def school_settings(learner, **changes) -> PartnerSettings:
    """Change the learner's school's settings (saving drops the cached row)."""
    settings = PartnerSettings.load(learner.school_id)
    for name, value in changes.items():
        setattr(settings, name, value)
    settings.save()
    return settings


@pytest.fixture
def pupil(learner):
    """A primary pupil of a school with the default settings."""
    learner.level = PRIMARY_LEVEL
    learner.save(update_fields=["level"])
    return learner


@pytest.fixture
def attempt(pupil):
    """Three questions: two in "Sleep", one in "Study" (two pages grouped)."""
    return make_attempt(pupil)


def main_of(html: str) -> str:
    return html[html.index("<main") : html.index("</main>")]


def label_of(html: str, input_id: str) -> str:
    """Return the markup of one answer's label."""
    match = re.search(f'<label for="{input_id}">(.*?)</label>', html, re.S)
    assert match, f"no label for {input_id}"
    return match.group(1)


def forget_rendered_pages() -> None:
    page_markup.cache.clear()
    page_markup.RECENT_PAGES.clear()


# One question per screen -------------------------------------------------------------------


def test_a_primary_pupil_sees_one_question_a_page_with_dots_and_big_tiles(client, pupil, attempt):
    client.force_login(pupil.user)

    html = page_showing(client, page_url(attempt, 1), "Question 1 of 3")

    assert "<h1>Sleep</h1>" in html and "<legend>I sleep well</legend>" in html
    assert html.count("<fieldset") == 1 and "I wake up rested" not in html
    assert 'class="question-form primary-questions one-question"' in html
    assert '<ol class="dots" aria-hidden="true">' in html
    assert re.findall(r'<li class="dot (\w+)">', html) == ["current", "todo", "todo"]
    main = main_of(html)
    assert ">Next</button>" in main and ">Stop for now</button>" in main
    assert ">Back</button>" not in main  # the first question
    assert not [word for word in ADULT_WORDS if word in main.lower()]

    third = page_showing(client, page_url(attempt, 3), "Question 3 of 3")
    assert "<h1>Study</h1>" in third and "<legend>I keep notes</legend>" in third
    assert ">Back</button>" in third
    assert client.get(page_url(attempt, 4)).status_code == 404


def test_each_page_saves_its_question_and_the_dots_show_what_is_answered(client, pupil, attempt):
    client.force_login(pupil.user)

    response = client.post(page_url(attempt, 1), {"q1": "q-sleep-a2", "continue": ""})
    assert response.url == page_url(attempt, 2)
    response = client.post(page_url(attempt, 2), {"q2": "q-wake-a1", "previous": ""})
    assert response.url == page_url(attempt, 1)
    html = page_showing(client, page_url(attempt, 3), "Question 3 of 3")

    assert re.findall(r'<li class="dot (\w+)">', html) == ["answered", "answered", "current"]
    saved = dict(attempt.answers.values_list("question_id", "answer_id"))
    assert saved == {"q-sleep": "q-sleep-a2", "q-wake": "q-wake-a1"}
    # Resuming goes to the first unanswered question's own page.
    assert client.get(attempt_url(attempt)).url == page_url(attempt, 3)


def test_autosave_and_check_answers_number_pages_one_question_each(client, pupil, attempt):
    client.force_login(pupil.user)
    save = attempt_url(attempt, "answers/")

    assert client.post(save, {"page": "3", "q3": "q-notes-a1"}).json()["saved"] is True
    assert client.post(save, {"page": "1", "q2": "q-wake-a1"}).status_code == 400
    client.post(page_url(attempt, 1), {"q1": "q-sleep-a1", "continue": ""})
    client.post(page_url(attempt, 2), {"q2": "q-wake-a1", "continue": ""})

    html = page_showing(client, attempt_url(attempt, "check/"), "I keep notes")
    assert html.count("<h2>Sleep</h2>") == 1 and html.count("<h2>Study</h2>") == 1
    for position in (1, 2, 3):
        change = attempt_url(attempt, f"page/{position}/?from=check")
        assert f'href="{change}&amp;q={position}#id_q{position}"' in html


def test_with_the_setting_off_a_primary_pupil_sees_the_groups(client, pupil, attempt):
    school_settings(pupil, primary_questions_grouped=True)
    client.force_login(pupil.user)

    html = page_showing(client, page_url(attempt, 1), "Step 1 of 2")

    assert html.count("<fieldset") == 2 and "Question 1 of" not in html
    assert "primary-questions" in html and 'class="dots"' not in html
    assert client.get(page_url(attempt, 3)).status_code == 404


def test_older_learners_see_the_groups_and_the_assessments_level_decides(learner_client, learner):
    grouped = make_attempt(learner)
    html = page_showing(learner_client, page_url(grouped), "Step 1 of 2")
    assert "primary-questions" not in html and "Save and continue" in html

    # The assessment's own level comes first: a primary assessment, a primary screen.
    primary = make_attempt(learner, assessment_id=43)
    AssessmentAttempt.objects.filter(pk=primary.pk).update(level=PRIMARY_LEVEL)
    assert "Question 1 of 3" in learner_client.get(page_url(primary)).content.decode()


# Submission ---------------------------------------------------------------------------------


def answer_and_send(client, learner) -> AssessmentAttempt:
    """Start, answer every page with each question's first answer by id, send; return them."""
    client.force_login(learner.user)
    client.post("/me/start/")
    attempt = AssessmentAttempt.objects.get(learner=learner)
    for page in question_pages(attempt):
        data = {f"q{e.position}": min(a.id for a in e.question.answers) for e in page.questions}
        response = client.post(page_url(attempt, page.number), {**data, "continue": ""})
        assert response.status_code == 302
    client.post(attempt_url(attempt, "submit/"))
    attempt.refresh_from_db()
    assert attempt.state == AssessmentAttempt.State.COMPLETED
    return attempt


def test_the_upstream_receives_the_same_responses_either_way(client, staff, upstream):
    one_each = register_pupil(staff, "pia.primary", level=PRIMARY_LEVEL)
    attempt = answer_and_send(client, one_each)
    assert len(question_pages(attempt)) == len(attempt.questions) > 1
    school_settings(one_each, primary_questions_grouped=True)
    grouped = register_pupil(staff, "gus.grouped", level=PRIMARY_LEVEL)
    other = answer_and_send(client, grouped)
    assert len(question_pages(other)) < len(other.questions)

    sent = upstream.state.offers[attempt.assessment_id].answers
    expected = {q.id: min(a.id for a in q.answers) for q in attempt.questions}
    assert sent == expected
    assert upstream.state.offers[other.assessment_id].answers == sent
    assert upstream.state.submissions_count() == 2


# Pictures -----------------------------------------------------------------------------------


def test_a_ready_picture_is_shown_from_here_inside_its_answers_label(client, pupil):
    attempt = make_attempt(pupil, content=pictured_content())
    sun = ready_picture(SUN)
    client.force_login(pupil.user)

    html = page_showing(client, page_url(attempt), "How do you feel at school?")

    happy = label_of(html, "id_q1_1")
    assert happy.startswith(f'<img src="/pictures/{sun.digest}" alt=""')
    assert "<img" not in label_of(html, "id_q1_2")  # its picture is not fetched yet
    assert 'class="answer-icon"' in label_of(html, "id_q1_3")  # a known name's symbol
    assert "upstream.example" not in html
    assert re.findall(r'<img src="([^"]*)"', html) == [f"/pictures/{sun.digest}"]


def test_a_picture_that_becomes_ready_appears_once_the_unsettled_markup_expires(
    client, pupil, monkeypatch
):
    attempt = make_attempt(pupil, content=pictured_content())
    client.force_login(pupil.user)
    before = page_showing(client, page_url(attempt), "How do you feel at school?")
    assert "<img" not in before

    sun = ready_picture(SUN)
    # Within its short life the markup already rendered is served.
    assert "<img" not in page_showing(client, page_url(attempt), "How do you feel at school?")
    later = time.time() + page_markup.UNSETTLED_SECONDS + 1
    monkeypatch.setattr(page_markup.time, "time", lambda: later)

    html = page_showing(client, page_url(attempt), "How do you feel at school?")
    assert f'<img src="/pictures/{sun.digest}"' in label_of(html, "id_q1_1")


@pytest.fixture
def rendered():
    """The question fieldsets rendered from their template, counted."""
    seen: list[str] = []

    def note(sender, template, context, **kwargs):
        if template.name == page_markup.QUESTION_TEMPLATE:
            seen.append(context["fields"][0]["label"])

    template_rendered.connect(note)
    yield seen
    template_rendered.disconnect(note)


def test_markup_with_every_picture_and_recording_ready_is_kept_as_long_as_before(
    client, pupil, monkeypatch, rendered
):
    attempt = make_attempt(pupil, content=pictured_content())
    client.force_login(pupil.user)
    html = page_showing(client, page_url(attempt), "How do you feel at school?")
    language = re.search(r'data-lang="([^"]+)"', html).group(1)
    ready_picture(SUN)
    ready_picture(MOON)
    texts = {q.text for q in attempt.questions} | {
        a.copy for q in attempt.questions for a in q.answers
    }
    for number, text in enumerate(sorted(texts)):
        make_recording(text, language, number)
    forget_rendered_pages()
    page_showing(client, page_url(attempt), "How do you feel at school?")
    rendered.clear()

    later = time.time() + page_markup.UNSETTLED_SECONDS + 1
    monkeypatch.setattr(page_markup.time, "time", lambda: later)
    html = page_showing(client, page_url(attempt, 2), "Do you have friends to play with?")

    assert rendered == []  # settled: not rendered again
    assert html.count("data-audio=") == 3  # the question and its two answers


# Read aloud ---------------------------------------------------------------------------------


def make_recording(text: str, language: str, number: int = 0) -> Recording:
    return Recording.objects.create(
        text=text, language=language, text_hash=text_hash(text, language),
        state=Recording.State.READY, audio=b"RIFF", content_type="audio/wav",
        digest=f"{number:064x}",
    )  # fmt: skip


def speak_buttons(html: str) -> list[tuple[str, str | None]]:
    """Return each speak button's text and its audio address (None without one)."""
    buttons = re.findall(r'<button type="button" class="speak" ([^>]*)>', html)
    found = []
    for number, attributes in enumerate(buttons):
        speak = re.search(r'data-speak="([^"]*)"', attributes).group(1)
        audio = re.search(r'data-audio="([^"]*)"', attributes)
        # The question's name leaves out its text (its legend says it); an answer's says which.
        name = "Read the question aloud" if number == 0 else f"Read aloud: {speak}"
        assert f'aria-label="{name}"' in attributes and " hidden" in attributes
        found.append((speak, audio.group(1) if audio else None))
    return found


def test_speak_buttons_read_the_question_and_every_answer_with_audio_only_when_made(
    client, pupil, attempt
):
    client.force_login(pupil.user)
    html = page_showing(client, page_url(attempt), "I sleep well")
    language = re.search(r'data-lang="([^"]+)"', html).group(1)
    assert speak_buttons(html) == [("I sleep well", None), ("Never", None), ("Often", None)]

    recording = make_recording("Often", language, 7)
    forget_rendered_pages()
    html = page_showing(client, page_url(attempt), "I sleep well")

    assert speak_buttons(html) == [
        ("I sleep well", None),
        ("Never", None),
        ("Often", f"/speech/{recording.digest}"),
    ]
    assert 'type="radio" data-speak="Never" name="q1"' in html
    labels = re.findall(r"<label for=[^>]*>.*?</label>", html, re.S)
    assert labels and not [label for label in labels if "<button" in label]
    assert '<script src="/static/js/read_aloud.js" defer></script>' in html


@pytest.mark.parametrize(
    ("level", "read_aloud", "auto"),
    [
        (PRIMARY_LEVEL, True, "true"),
        (PRIMARY_LEVEL, False, "false"),
        (SECONDARY_LEVEL, True, "false"),
    ],
)
def test_questions_are_read_as_they_appear_only_for_primary_with_the_setting_on(
    client, learner, level, read_aloud, auto
):
    learner.level = level
    learner.save(update_fields=["level"])
    school_settings(learner, primary_read_aloud_off=not read_aloud)
    attempt = make_attempt(learner)
    client.force_login(learner.user)

    html = page_showing(client, page_url(attempt), 'class="read-aloud')

    assert f'data-auto="{auto}"' in html
    assert '<button type="button" class="read-aloud-toggle" aria-pressed="true" hidden>' in html
