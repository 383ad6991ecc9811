"""Which texts have audio of the portal's own, and where it is served."""

from collections.abc import Iterable
from hashlib import sha256

from django.urls import reverse

from speech.models import Recording


def text_hash(text: str, language: str) -> str:
    """Return the key a recording is kept under: the SHA-256 of its language and text."""
    return sha256(f"{language}\n{text}".encode()).hexdigest()


def recording_urls(texts: Iterable[str], language: str) -> dict[str, str]:
    """Return the portal's own address of each text's ready recording in this language."""
    by_hash = {text_hash(text, language): text for text in texts}
    if not by_hash:
        return {}
    ready = Recording.objects.filter(
        text_hash__in=by_hash, state=Recording.State.READY
    ).values_list("text_hash", "digest")
    return {
        by_hash[key]: reverse("speech:recording", kwargs={"digest": digest})
        for key, digest in ready
    }


def recordings_waiting(texts: Iterable[str], language: str) -> bool:
    """Return whether any of these texts' audio may still arrive soon (not kept, or pending)."""
    keys = {text_hash(text, language) for text in texts}
    if not keys:
        return False
    settled = Recording.objects.filter(text_hash__in=keys).exclude(state=Recording.State.PENDING)
    return settled.count() < len(keys)


def recordings_unasked(texts: Iterable[str], language: str) -> bool:
    """Return whether any of these texts has no row in this language: never asked for."""
    keys = {text_hash(text, language) for text in texts if text.strip()}
    if not keys:
        return False
    return Recording.objects.filter(text_hash__in=keys).count() < len(keys)
