"""Serving a kept answer picture: the learner's browser fetches it here, never upstream."""

from django.http import HttpRequest, HttpResponse
from django.views.decorators.http import require_GET

from kit.stored_files import DIGEST, blob_response
from pictures.models import Picture


@require_GET
def picture(request: HttpRequest, digest: str) -> HttpResponse:
    """Return a ready picture by its content's SHA-256 (anyone may: it holds no one's data)."""
    found = None
    if DIGEST.fullmatch(digest):
        found = (
            Picture.objects.filter(digest=digest, state=Picture.State.READY)
            .values_list("image", "content_type")
            .first()
        )
    return blob_response(request, digest, found)
