"""Request-wide rules: form bodies the portal cannot read, last-resort handling of upstream
failures, the portal's own "page not found" page in development too."""

import codecs
import logging
from contextlib import suppress

from django.conf import settings
from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest
from django.shortcuts import render
from django.template import loader
from django.urls import Resolver404, resolve

from partner_api import PartnerApiError
from partner_api.upstream import failure_message

logger = logging.getLogger(__name__)


FORM_CONTENT_TYPE = "application/x-www-form-urlencoded"


class UnreadableFormMiddleware:
    """Refuse with a plain 400 page a form body in a charset the portal cannot read.

    Django reads such a body as UTF-8 only: `request.POST` raises BadRequest for any other
    charset, and raises again in its own error views (they check the CSRF token, which reads
    `request.POST`), so the request ended as the server's bare 500, missing from the request
    log. Checked here, before anything reads the body; "utf8" and other names of UTF-8 are
    read as UTF-8.
    """

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        charset = request.content_params.get("charset")
        if request.method == "POST" and request.content_type == FORM_CONTENT_TYPE and charset:
            if not _names_utf8(charset):
                logger.info("Refused a form body in charset %r", charset[:40])
                # Answered before URL resolution: the request log names the page all the same.
                with suppress(Resolver404):
                    request.resolver_match = resolve(request.path_info)
                page = loader.render_to_string("400.html", {"unreadable_form": True})
                return HttpResponseBadRequest(page)
            request.encoding = "utf-8"
        return self.get_response(request)


def _names_utf8(charset: str) -> bool:
    """Return whether a charset's name is one of UTF-8's ("utf-8", "UTF8", "utf_8")."""
    try:
        return codecs.lookup(charset).name == "utf-8"
    except LookupError:
        return False


class UpstreamErrorMiddleware:
    """Turn an uncaught PartnerApiError into a clear 503 page instead of a traceback."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if not isinstance(exception, PartnerApiError):
            return None
        logger.warning("Upstream failure reached a page: %s", exception)
        return render(
            request,
            "portal/upstream_error.html",
            # The page says it all: no banner above it saying the same (base.html).
            {"message": failure_message(exception), "failure_page": True},
            status=503,
        )


class NotFoundPageMiddleware:
    """With DEBUG on (`make run`), answer a missing page with the portal's own 404 page.

    Django's debug 404 page lists every URL pattern and is not made for phones or screen
    readers; a learner who tries a staff address, or another learner's, should meet the same
    page in development as in production (where handler404 renders the same template).
    """

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if (
            settings.DEBUG
            and response.status_code == 404
            and response.get("Content-Type", "").startswith("text/html")
        ):
            return render(request, "404.html", status=404)
        return response
