"""Request-wide rules: last-resort handling of upstream failures, the portal's own "page not
found" page in development too, and idle sessions ending."""

import logging

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from partner_api import PartnerApiError
from partner_api.upstream import failure_message

logger = logging.getLogger(__name__)


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
