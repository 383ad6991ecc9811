"""Read-aloud audio the portal makes itself with espeak-ng, keeps, and serves from its origin."""

import shutil
import wave
from datetime import timedelta
from io import BytesIO, StringIO

import pytest
from django.core.management import call_command
from django.urls import reverse
from django.utils import timezone

from speech import making
from speech.models import Recording
from speech.selectors import recording_urls
from speech.services import recordings_retry_due, recordings_wanted

QUESTION = "How often do you find it hard to get to sleep?"
State = Recording.State

needs_espeak = pytest.mark.skipif(
    shutil.which("espeak-ng") is None, reason="espeak-ng not installed: apt-get install espeak-ng"
)


def seconds_of(audio: bytes) -> float:
    with wave.open(BytesIO(audio)) as played:
        return played.getnframes() / played.getframerate()


@needs_espeak
@pytest.mark.django_db
def test_a_text_is_spoken_once_into_a_wav_served_from_the_portal_for_good(client):
    recordings_wanted([QUESTION, "Never", QUESTION, "", "   "])

    assert Recording.objects.count() == 2  # one a text, the blanks none
    made = Recording.objects.get(text=QUESTION)
    assert made.state == State.READY and made.language == "en-gb"
    assert made.content_type == "audio/wav" and made.made_at is not None
    audio = bytes(made.audio)
    assert audio.startswith(b"RIFF") and audio[8:12] == b"WAVE"
    assert seconds_of(audio) > 0.3
    url = recording_urls([QUESTION], "en-gb")[QUESTION]
    assert url == reverse("speech:recording", kwargs={"digest": made.digest})

    response = client.get(url)

    assert response.status_code == 200
    assert response["Content-Type"] == "audio/wav"
    assert (
        "immutable" in response["Cache-Control"] and "max-age=31536000" in response["Cache-Control"]
    )
    assert response.content == audio
    # Stored again (another attempt of the same content): nothing more is made.
    recordings_wanted([QUESTION])
    assert Recording.objects.filter(text=QUESTION).count() == 1


@pytest.mark.django_db
def test_the_same_text_wanted_twice_is_queued_and_kept_once(queued_tasks):
    recordings_wanted([QUESTION, QUESTION])
    recordings_wanted([QUESTION])

    (recording,) = Recording.objects.all()
    assert recording.state == State.PENDING
    (queued,) = queued_tasks.results
    assert queued.task.name == "make_recording" and queued.args == [recording.pk]


@needs_espeak
@pytest.mark.django_db
def test_a_task_taken_twice_makes_the_audio_once(queued_tasks):
    recordings_wanted([QUESTION])
    (queued,) = queued_tasks.results
    queued.task.call(*queued.args, **queued.kwargs)  # the worker takes it up
    made = Recording.objects.get()
    assert made.state == State.READY

    queued.task.call(*queued.args, **queued.kwargs)  # a retried task

    again = Recording.objects.get()
    assert again.made_at == made.made_at and again.digest == made.digest


@pytest.mark.django_db
def test_without_espeak_nothing_is_served_and_it_is_tried_again_a_day_later(client, settings):
    settings.SPEECH_ESPEAK = "/nonexistent/espeak-ng"
    before = timezone.now()

    recordings_wanted([QUESTION])

    failed = Recording.objects.get()
    assert failed.state == State.FAILED and failed.tries == 1
    assert "espeak-ng is not installed" in failed.last_error
    assert failed.next_try_at >= before + timedelta(hours=23)  # not every minute
    assert recording_urls([QUESTION], "en-gb") == {}
    # Not due yet: the sweep leaves it alone.
    assert recordings_retry_due() == 0
    # A day on (the clock moved past its next try), espeak-ng still missing: the sweep queues
    # it, the immediate backend runs it, and it is put off another day.
    Recording.objects.update(next_try_at=timezone.now() - timedelta(seconds=1))
    assert recordings_retry_due() == 1
    again = Recording.objects.get()
    assert again.state == State.FAILED and again.tries == 2
    assert again.next_try_at >= timezone.now() + timedelta(hours=23)


@pytest.mark.django_db
def test_a_failed_try_backs_off_one_minute_then_five_then_half_an_hour(monkeypatch, settings):
    def fail(text, language):
        raise making.SpeechFailed("espeak-ng failed (exit 1): no voice")

    monkeypatch.setattr(making, "spoken_wav", fail)
    recordings_wanted([QUESTION])
    waits = []
    for _ in range(5):
        recording = Recording.objects.get()
        waits.append(recording.next_try_at - timezone.now())
        making.recording_make(recording.pk, now=recording.next_try_at)

    rounded = [round(wait.total_seconds() / 60) for wait in waits]
    assert rounded == [1, 5, 30, 120, 1440]
    recording = Recording.objects.get()
    assert recording.state == State.FAILED and recording.tries == 6
    assert recording.last_error == "espeak-ng failed (exit 1): no voice"


@needs_espeak
@pytest.mark.django_db
def test_a_failed_recording_is_made_once_espeak_is_back(settings):
    settings.SPEECH_ESPEAK = "/nonexistent/espeak-ng"
    recordings_wanted([QUESTION])
    failed = Recording.objects.get()
    assert failed.state == State.FAILED
    settings.SPEECH_ESPEAK = shutil.which("espeak-ng")

    recordings_retry_due(now=failed.next_try_at)
    making.recording_make(failed.pk, now=failed.next_try_at)

    made = Recording.objects.get()
    assert made.state == State.READY and made.last_error == "" and made.next_try_at is None
    assert QUESTION in recording_urls([QUESTION], "en-gb")


@needs_espeak
@pytest.mark.django_db
def test_a_very_long_text_is_refused_at_once_and_never_tried_again():
    long_text = "Tell me about your day at school. " * 2000

    recordings_wanted([long_text, QUESTION])

    refused = Recording.objects.get(text=long_text)
    assert refused.state == State.FAILED and "Too long to read aloud" in refused.last_error
    assert refused.next_try_at is None  # it would fail the same way every time
    assert recordings_retry_due(now=timezone.now() + timedelta(days=30)) == 0
    assert Recording.objects.get(text=QUESTION).state == State.READY


@needs_espeak
@pytest.mark.django_db
def test_audio_past_the_size_cap_is_refused_not_kept(monkeypatch):
    monkeypatch.setattr(making, "MAX_AUDIO_BYTES", 20_000)

    recordings_wanted(["A sentence long enough to make more than twenty thousand bytes."])

    refused = Recording.objects.get()
    assert refused.state == State.FAILED and "more than 20000 bytes" in refused.last_error
    assert bytes(refused.audio) == b""


@needs_espeak
@pytest.mark.django_db
def test_text_that_looks_like_options_or_markup_is_only_spoken():
    recordings_wanted(["--help; rm -rf / <speak>$(ls)</speak>"])

    made = Recording.objects.get()
    assert made.state == State.READY and bytes(made.audio).startswith(b"RIFF")


@pytest.mark.django_db
def test_a_recording_whose_task_was_lost_is_queued_again_by_the_sweep(queued_tasks):
    recordings_wanted([QUESTION])
    queued_tasks.clear()

    assert recordings_retry_due() == 0  # its task may still be waiting for a worker
    assert recordings_retry_due(now=timezone.now() + timedelta(minutes=11)) == 1
    (queued,) = queued_tasks.results
    assert queued.args == [Recording.objects.get().pk]


@pytest.mark.django_db
def test_an_unknown_or_malformed_digest_is_not_found(client):
    assert client.get(reverse("speech:recording", kwargs={"digest": "0" * 64})).status_code == 404
    assert client.get(reverse("speech:recording", kwargs={"digest": "nope"})).status_code == 404


@pytest.mark.django_db
def test_the_attempts_sweep_queues_recordings_due_another_try(queued_tasks):
    recordings_wanted([QUESTION])
    # Its retry was queued for its time; that task was lost (overdue past the grace).
    Recording.objects.update(
        state=State.FAILED, tries=1, next_try_at=timezone.now() - timedelta(minutes=11)
    )
    queued_tasks.clear()
    out = StringIO()

    call_command("sweep_attempts", stdout=out)

    assert "1 read-aloud recordings queued" in out.getvalue()
    (queued,) = queued_tasks.results
    assert queued.task.name == "make_recording"


@pytest.mark.django_db
def test_a_retry_queued_for_its_time_is_not_queued_again_as_soon_as_it_is_due(queued_tasks):
    recordings_wanted([QUESTION])
    due = timezone.now() - timedelta(seconds=1)
    Recording.objects.update(state=State.FAILED, tries=1, next_try_at=due)
    queued_tasks.clear()

    # The failed try queued its retry for this time: a worker is about to run it.
    assert recordings_retry_due() == 0
    assert queued_tasks.results == []
    # Long overdue, the task was lost: queued once, and not again by the next sweep.
    later = due + timedelta(minutes=11)
    assert recordings_retry_due(now=later) == 1
    assert recordings_retry_due(now=later + timedelta(minutes=1)) == 0
    assert [list(result.args) for result in queued_tasks.results] == [[Recording.objects.get().pk]]
