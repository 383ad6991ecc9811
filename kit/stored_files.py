"""Serving a stored blob (a picture, a recording) from the portal's own origin."""

import re

from django.http import Http404, HttpRequest, HttpResponse, HttpResponseNotModified

DIGEST = re.compile(r"[0-9a-f]{64}")
# The address is the content's own SHA-256: it never changes, so a browser keeps it a year.
FOREVER = "public, max-age=31536000, immutable"


def blob_response(
    request: HttpRequest, digest: str, found: tuple[bytes, str] | None
) -> HttpResponse:
    """Return the stored bytes under their content type, cached for good, or 404."""
    if found is None:
        raise Http404
    etag = f'"{digest}"'
    if request.headers.get("If-None-Match") == etag:
        response = HttpResponseNotModified()
    else:
        data, content_type = found
        response = HttpResponse(bytes(data), content_type=content_type)
        response["Content-Length"] = str(len(data))
    response["ETag"] = etag
    response["Cache-Control"] = FOREVER
    response["X-Content-Type-Options"] = "nosniff"
    return response
