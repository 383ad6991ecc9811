"""Request-wide rules: form bodies the portal cannot read, last-resort handling of upstream
failures and of a database that does not answer, the portal's own "page not found" page in
development too."""

import codecs
import logging
from contextlib import suppress

from django.conf import settings
from django.db import connection
from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest
from django.shortcuts import render
from django.template import loader
from django.urls import Resolver404, resolve

from accounts.access import learner_for
from assessments.child_words import learner_failure_message, school_name, wording_for
from ops.database import DATABASE_TROUBLE, database_unavailable_response, outage
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
                words = standalone_words(request)
                page = loader.render_to_string("400.html", {"unreadable_form": True, **words})
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
            {"message": _failure_message(request, exception), "failure_page": True},
            status=503,
        )


def standalone_words(request: HttpRequest, *, ask_database: bool = True) -> dict:
    """Return the words of an error page drawn without context processors, for its reader.

    A learner's (their age, their school) where the request knows it is one; else nothing,
    and the page keeps the general words. The page may be drawn because something failed:
    finding out must not fail it again.
    """
    learner = getattr(request, "learner", None)
    if learner is None and ask_database:
        try:
            learner = learner_for(request.user)
        except Exception:  # the error page must still be drawn
            learner = None
    if learner is None:
        return {}
    words = {"learner_wording": wording_for(learner.level)}
    if ask_database:
        with suppress(Exception):
            words["site_name"] = school_name(learner.school_id)
    return words


def _failure_message(request: HttpRequest, error: PartnerApiError) -> str:
    """Say what failed in words for the reader: a learner's for their age, else the general."""
    learner = getattr(request, "learner", None)
    if learner is None:
        return failure_message(error)
    return learner_failure_message(error, wording_for(learner.level))


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


class DatabaseUnavailableMiddleware:
    """While the database does not answer, answer 503 with Retry-After in plain words.

    A view's database error comes here (process_exception); one raised by another middleware
    (reading the session, say) reaches handler500, portal.views.server_error, which answers
    the same. Django closes a connection that failed when the request ends, and checks a kept
    one before the next request uses it (CONN_HEALTH_CHECKS), so one broken connection never
    fails a later request. The process logs the outage once, and its end.
    """

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if outage.since is not None and database_answered(response):
            outage.ended()
        return response

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if not isinstance(exception, DATABASE_TROUBLE):
            return None
        return database_unavailable_page(request, exception)


def database_unavailable_page(request: HttpRequest, error: BaseException) -> HttpResponse:
    """Return the 503 page for a request the database failed; note the outage once."""
    outage.began(error, "pages answer 503 until it is back")
    retry_url = request.get_full_path() if request.method in ("GET", "HEAD") else ""
    # Only what the request already holds: the database is what failed.
    words = standalone_words(request, ask_database=False)
    return database_unavailable_response(retry_url=retry_url, words=words)


def database_answered(response: HttpResponse) -> bool:
    """Whether this request's thread reached the database without error."""
    return (
        response.status_code != 503
        and connection.connection is not None
        and not connection.errors_occurred
    )
