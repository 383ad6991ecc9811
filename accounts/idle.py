"""Idle sessions ending: staff after hours, learners after minutes on a shared computer."""

import time
from collections.abc import Callable
from functools import wraps

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import logout
from django.http import HttpRequest, HttpResponse
from django.utils.translation import gettext as _

from accounts.access import is_staff_member, learner_for
from accounts.sign_in_throttle import duration_text

# When the signed-in user last made a request (seconds since the epoch).
LAST_ACTIVITY_SESSION_KEY = "portal_last_activity"

# Sent by a page's script asking by itself (a board refreshing on the classroom projector):
# the request keeps no session alive, as a view marked @not_activity. A script can only end
# its own session sooner this way, never keep it longer.
NOT_ACTIVITY_HEADER = "X-Not-Activity"


def _activity_is_stale(last_activity: int | None, now: int, timeout: int) -> bool:
    # Saving the session is a database write (a commit) on every page view, several
    # times the cost of the page itself: the time is kept to within a minute (a tenth
    # of a shorter timeout), so the session is saved at most about once a minute.
    return last_activity is None or now - last_activity >= min(60, timeout // 10)


def learner_seconds_left(request: HttpRequest) -> int:
    """Return how long a learner's session lasts without another request, counting this one."""
    now = int(time.time())
    last_activity = request.session.get(LAST_ACTIVITY_SESSION_KEY)
    timeout = settings.LEARNER_IDLE_TIMEOUT
    # The middleware records this request's time after the view only when the recorded one
    # is stale: predict what it will keep, so a page's countdown matches the server's.
    if _activity_is_stale(last_activity, now, timeout):
        return timeout
    return max(0, timeout - (now - last_activity))


def not_activity(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """Mark a view that pages' scripts call by themselves: its requests keep no session alive.

    A page that checks for news every few seconds would otherwise keep a learner signed in for
    as long as it stays open on a shared classroom computer, results and all.
    """

    @wraps(view)
    def wrapper(request: HttpRequest, *args, **kwargs) -> HttpResponse:
        request.not_activity = True
        return view(request, *args, **kwargs)

    return wrapper


def learner_keep_alive(request: HttpRequest) -> int:
    """Record activity now, past the once-a-minute throttle; return the seconds left."""
    request.session[LAST_ACTIVITY_SESSION_KEY] = int(time.time())
    return settings.LEARNER_IDLE_TIMEOUT


class IdleSessionMiddleware:
    """Sign out after a quiet spell: everyone but staff soon (shared classroom computers).

    Learners (and anyone who is not staff) get a browser-session cookie, and their session
    ends LEARNER_IDLE_TIMEOUT seconds after their last request, checked here against a time
    kept in the session: the session itself lives on, so the next request finds it and can
    say why it was signed out. Staff keep a cookie that expires STAFF_IDLE_TIMEOUT seconds
    after their last request. A request from a view marked @not_activity, or carrying the
    NOT_ACTIVITY_HEADER, records nothing. Placed after the auth and message middleware.
    """

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if request.user.is_authenticated:
            self._sign_out_if_idle(request)
        response = self.get_response(request)
        # After the view: it may have just signed someone in (or out).
        if request.headers.get(NOT_ACTIVITY_HEADER) == "1":
            request.not_activity = True
        if request.user.is_authenticated and not getattr(request, "not_activity", False):
            staff = is_staff_member(request.user)
            timeout = settings.STAFF_IDLE_TIMEOUT if staff else settings.LEARNER_IDLE_TIMEOUT
            expiry = settings.STAFF_IDLE_TIMEOUT if staff else 0
            now = int(time.time())
            last_activity = request.session.get(LAST_ACTIVITY_SESSION_KEY)
            if _activity_is_stale(last_activity, now, timeout) or (
                request.session.get("_session_expiry") != expiry
            ):
                request.session[LAST_ACTIVITY_SESSION_KEY] = now
                request.session.set_expiry(expiry)
        return response

    def _sign_out_if_idle(self, request: HttpRequest) -> None:
        last_activity = request.session.get(LAST_ACTIVITY_SESSION_KEY)
        if last_activity is None:
            return  # signed in by other means than a request through here (tests, shell)
        staff = is_staff_member(request.user)
        timeout = settings.STAFF_IDLE_TIMEOUT if staff else settings.LEARNER_IDLE_TIMEOUT
        if time.time() - last_activity <= timeout:
            return
        learner = learner_for(request.user)
        logout(request)
        if learner is not None:
            # Translators: %(duration)s is a duration such as "15 minutes" or "8 hours".
            message = _(
                "You were signed out after %(duration)s without activity. Your answers are saved."
            )
        else:
            # Translators: %(duration)s is a duration such as "15 minutes" or "8 hours".
            message = _("You were signed out after %(duration)s without activity.")
        messages.info(request, message % {"duration": duration_text(timeout)})
