"""Making read-aloud audio with Debian's espeak-ng, once per text and language."""

import logging
import os
import selectors
import shutil
import subprocess
import time
from datetime import datetime, timedelta
from hashlib import sha256

from django.conf import settings
from django.db.models import Q
from django.utils import timezone

from kit.retries import DAILY, retry_delay
from speech import tasks
from speech.models import Recording

logger = logging.getLogger(__name__)

# espeak-ng's voice for each of the portal's languages (settings.LANGUAGES).
VOICES = {"en-gb": "en-gb"}
# Words a minute: a little slower than espeak-ng's 175 suits children.
RATE = 150
TIMEOUT_SECONDS = 20
# About 47 s of espeak-ng's 22 kHz mono WAV: far more than a question or an answer needs.
MAX_AUDIO_BYTES = 2_000_000
# Longer than anything a child is asked: not spoken at all rather than cut off.
MAX_TEXT_CHARS = 2000
# Long enough for one making (the timeout) to finish before another process may take it.
LEASE = timedelta(minutes=2)


class SpeechUnavailable(Exception):
    """espeak-ng is not installed here: nothing can be made until someone installs it."""


class SpeechFailed(Exception):
    """This try failed; another may work."""


class SpeechRefused(Exception):
    """This text can never be made (too long): no try again."""


def recording_make(recording_id: int, *, now: datetime | None = None) -> None:
    """Make a recording's audio if it is due, and keep it, or say why not and when to retry."""
    now = now or timezone.now()
    due = Q(next_try_at__isnull=True) | Q(next_try_at__lte=now)
    # Claimed for the lease: a second task for the same row (a sweep's, a racing store's)
    # finds it taken and does nothing.
    claimed = (
        Recording.objects.filter(due, pk=recording_id)
        .exclude(state=Recording.State.READY)
        .update(next_try_at=now + LEASE)
    )
    if not claimed:
        return
    recording = Recording.objects.get(pk=recording_id)
    try:
        audio = spoken_wav(recording.text, recording.language)
    except SpeechRefused as error:
        _failed(recording, str(error), retry_after=None)
    except SpeechUnavailable as error:
        # Installing it takes a person: try once a day, not every minute.
        _failed(recording, str(error), retry_after=DAILY)
    except SpeechFailed as error:
        _failed(recording, str(error), retry_after=retry_delay(recording.tries + 1))
    else:
        Recording.objects.filter(pk=recording.pk).update(
            state=Recording.State.READY,
            audio=audio,
            content_type="audio/wav",
            digest=sha256(audio).hexdigest(),
            made_at=timezone.now(),
            next_try_at=None,
            last_error="",
        )


def _failed(recording: Recording, error: str, *, retry_after: timedelta | None) -> None:
    """Record a failed try and queue the next, if there is to be one."""
    next_try_at = timezone.now() + retry_after if retry_after else None
    Recording.objects.filter(pk=recording.pk).update(
        state=Recording.State.FAILED,
        tries=recording.tries + 1,
        last_error=error[:500],
        next_try_at=next_try_at,
    )
    logger.warning("Read-aloud audio %s not made: %s", recording.pk, error)
    if next_try_at:
        tasks.enqueue_making(recording.pk, run_after=next_try_at)


def spoken_wav(text: str, language: str) -> bytes:
    """Return a WAV of espeak-ng speaking text in the language's voice."""
    if len(text) > MAX_TEXT_CHARS:
        raise SpeechRefused(
            f"Too long to read aloud: {len(text)} characters (at most {MAX_TEXT_CHARS})."
        )
    # Looked up at each try, not once: espeak-ng may have been installed since the worker began.
    espeak = shutil.which(settings.SPEECH_ESPEAK) if settings.SPEECH_ESPEAK else None
    if espeak is None:
        raise SpeechUnavailable(
            f"espeak-ng is not installed ({settings.SPEECH_ESPEAK or 'no path set'}), so no "
            "read-aloud audio is made: apt-get install espeak-ng"
        )
    voice = VOICES.get(language, language)
    # The text goes on stdin, never on a command line or through a shell; -b 1: it is UTF-8.
    command = [espeak, "-v", voice, "-s", str(RATE), "-b", "1", "--stdout", "--stdin"]
    try:
        process = subprocess.Popen(  # noqa: S603 (the configured espeak-ng, no shell)
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
    except OSError as error:
        raise SpeechUnavailable(f"espeak-ng could not be started ({espeak}): {error}") from error
    try:
        audio, stderr = _read_capped(process, text.encode())
    except (OSError, subprocess.TimeoutExpired) as error:
        raise SpeechFailed(f"espeak-ng stopped early: {error}") from error
    finally:
        if process.poll() is None:
            process.kill()
        process.wait()
    if process.returncode != 0 or not audio.startswith(b"RIFF"):
        raise SpeechFailed(
            f"espeak-ng failed (exit {process.returncode}): {stderr.decode(errors='replace')[:200]}"
        )
    return _with_true_sizes(audio)


def _read_capped(process: subprocess.Popen, text: bytes) -> tuple[bytes, bytes]:
    """Feed text to the process and read its output, within the time and size limits."""
    # At most MAX_TEXT_CHARS characters: smaller than a pipe's buffer, so this never blocks.
    process.stdin.write(text)
    process.stdin.close()
    deadline = time.monotonic() + TIMEOUT_SECONDS
    outputs = {process.stdout: bytearray(), process.stderr: bytearray()}
    with selectors.DefaultSelector() as selector:
        for pipe in outputs:
            selector.register(pipe, selectors.EVENT_READ)
        while selector.get_map():
            left = deadline - time.monotonic()
            if left <= 0:
                raise SpeechFailed(f"espeak-ng took longer than {TIMEOUT_SECONDS} s.")
            for key, _events in selector.select(timeout=left):
                chunk = os.read(key.fd, 65536)
                if not chunk:
                    selector.unregister(key.fileobj)
                    continue
                outputs[key.fileobj] += chunk
            if len(outputs[process.stdout]) > MAX_AUDIO_BYTES:
                raise SpeechRefused(f"The audio came to more than {MAX_AUDIO_BYTES} bytes.")
    process.wait(timeout=max(deadline - time.monotonic(), 0.1))
    return bytes(outputs[process.stdout]), bytes(outputs[process.stderr])


def _with_true_sizes(audio: bytes) -> bytes:
    """Return the WAV with its lengths filled in (streamed, espeak-ng writes placeholders)."""
    data_at = audio.find(b"data", 12)
    if data_at < 0:
        raise SpeechFailed("espeak-ng wrote no audio data.")
    fixed = bytearray(audio)
    fixed[4:8] = (len(audio) - 8).to_bytes(4, "little")
    fixed[data_at + 4 : data_at + 8] = (len(audio) - data_at - 8).to_bytes(4, "little")
    return bytes(fixed)
