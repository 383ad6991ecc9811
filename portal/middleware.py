"""Last-resort handling of upstream failures that a view did not catch itself."""

import logging

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from portal.partner_api import PartnerApiError
from portal.upstream import failure_message

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
            {"message": failure_message(exception)},
            status=503,
        )
