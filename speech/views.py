"""Serving read-aloud audio the portal made, where a browser has no voice of its own."""

from django.http import HttpRequest, HttpResponse
from django.views.decorators.http import require_GET

from kit.stored_files import DIGEST, blob_response
from speech.models import Recording


@require_GET
def recording(request: HttpRequest, digest: str) -> HttpResponse:
    """Return a ready recording by its content's SHA-256 (anyone may: it holds no one's data)."""
    found = None
    if DIGEST.fullmatch(digest):
        found = (
            Recording.objects.filter(digest=digest, state=Recording.State.READY)
            .values_list("audio", "content_type")
            .first()
        )
    return blob_response(request, digest, found)
