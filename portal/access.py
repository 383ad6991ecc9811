"""Roles and access helpers: who may see which page, and lookups scoped to the signed-in user."""

from collections.abc import Callable
from functools import wraps

from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.http import Http404, HttpRequest, HttpResponse
from django.views.decorators.cache import never_cache

STAFF_GROUP = "Partner staff"

View = Callable[..., HttpResponse]


def is_staff_member(user: AbstractBaseUser | AnonymousUser) -> bool:
    """Return whether the user works for the partner (staff group member or superuser)."""
    if not user.is_authenticated or not user.is_active:
        return False
    if user.is_superuser:
        return True
    # A learner's account is never staff, whatever its groups: a child's sign-in must not
    # open other children's records. The learner comes with the user
    # (portal.auth.CaseInsensitiveModelBackend.get_user).
    if learner_account(user) is not None:
        return False
    # Asked by the view's decorator and again by every template: one query per request.
    if not hasattr(user, "_is_partner_staff"):
        user._is_partner_staff = user.groups.filter(name=STAFF_GROUP).exists()
    return user._is_partner_staff


def learner_account(user: AbstractBaseUser):
    """Return the Learner record of the user's account in any status, or None."""
    return getattr(user, "learner", None)


def learner_for(user: AbstractBaseUser | AnonymousUser):
    """Return the active Learner linked to the user, or None."""
    if not user.is_authenticated:
        return None
    learner = learner_account(user)
    if learner is None or not learner.is_registered:
        return None
    return learner


def staff_required(view: View) -> View:
    """Let partner staff in; send anonymous users to sign in; 404 for everyone else."""

    # Personal data: never kept by the browser's cache (the back button after signing out
    # or sending answers shows a fresh page, not a stale copy).
    @never_cache
    @login_required
    @wraps(view)
    def wrapper(request: HttpRequest, *args, **kwargs) -> HttpResponse:
        if not is_staff_member(request.user):
            raise Http404
        return view(request, *args, **kwargs)

    return wrapper


def learner_required(view: View) -> View:
    """Let learners in with `request.learner` set; send anonymous users to sign in; 404 others."""

    @never_cache
    @login_required
    @wraps(view)
    def wrapper(request: HttpRequest, *args, **kwargs) -> HttpResponse:
        learner = learner_for(request.user)
        if learner is None:
            raise Http404
        request.learner = learner
        return view(request, *args, **kwargs)

    return wrapper
