"""Roles and access helpers: who may see which page, and lookups scoped to the signed-in user."""

from collections.abc import Callable
from functools import wraps

from django.contrib.auth import get_user_model
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db.models import QuerySet
from django.http import Http404, HttpRequest, HttpResponse
from django.utils.functional import cached_property
from django.views.decorators.cache import never_cache

from accounts.models import StaffProfile, StaffRole
from schools.models import PartnerSettings

STAFF_GROUP = "Partner staff"

# Roles that see every learner of the school; the others see the learners of their groups.
WHOLE_SCHOOL_ROLES = frozenset({StaffRole.ADMIN, StaffRole.DSL, StaffRole.DEPUTY_DSL})
# Roles that read results and follow-ups whatever the partner's settings say.
PASTORAL_ROLES = frozenset({StaffRole.HEAD_OF_YEAR, StaffRole.DSL, StaffRole.DEPUTY_DSL})
# The safeguarding leads: alerts are theirs to receive and acknowledge.
SAFEGUARDING_ROLES = frozenset({StaffRole.DSL, StaffRole.DEPUTY_DSL})

View = Callable[..., HttpResponse]


def staff_name(user: AbstractBaseUser) -> str:
    """Name a member of staff the one way every page does: full name, else username."""
    full = user.get_full_name() if hasattr(user, "get_full_name") else ""
    return full or user.get_username()


def staff_role(user: AbstractBaseUser | AnonymousUser) -> str | None:
    """Return the role of a signed-in, active member of staff; None for anyone else."""
    if not user.is_authenticated or not user.is_active:
        return None
    # Asked by the view's decorator and again by every template: worked out once per request.
    if not hasattr(user, "_staff_role"):
        user._staff_role = assigned_role(user)
    return user._staff_role


def assigned_role(user: AbstractBaseUser) -> str | None:
    """Return the role an account holds, whether or not it may sign in now; None if not staff.

    A superuser counts as a partner admin. A member of the staff group who was never given a
    role counts as a teacher: they see the learners of their groups, none until given one.
    """
    # A learner's account is never staff, whatever its groups or flags: a child's sign-in must
    # not open other children's records. The learner comes with the user
    # (accounts.auth.CaseInsensitiveModelBackend.get_user).
    if learner_account(user) is not None:
        return None
    if user.is_superuser:
        return StaffRole.ADMIN
    try:
        return user.staff_profile.role
    except StaffProfile.DoesNotExist:
        pass
    if user.groups.filter(name=STAFF_GROUP).exists():
        return StaffRole.TEACHER
    return None


def is_staff_member(user: AbstractBaseUser | AnonymousUser) -> bool:
    """Return whether the user works for the partner, in any role."""
    return staff_role(user) is not None


def is_partner_admin(user: AbstractBaseUser | AnonymousUser) -> bool:
    """Return whether the user manages accounts, groups and settings."""
    return staff_role(user) == StaffRole.ADMIN


def sees_whole_school(user: AbstractBaseUser | AnonymousUser) -> bool:
    """Return whether the user sees every learner's record, not only their groups'."""
    return staff_role(user) in WHOLE_SCHOOL_ROLES


def sees_results(user: AbstractBaseUser | AnonymousUser) -> bool:
    """Return whether the user may read results and follow-ups of the learners they see."""
    role = staff_role(user)
    if role in PASTORAL_ROLES:
        return True
    if role not in (StaffRole.TEACHER, StaffRole.ADMIN):
        return False
    if not hasattr(user, "_partner_settings"):
        user._partner_settings = PartnerSettings.current()
    if role == StaffRole.TEACHER:
        return user._partner_settings.teachers_see_results
    return user._partner_settings.admins_see_results


def is_safeguarding_lead(user: AbstractBaseUser | AnonymousUser) -> bool:
    """Return whether the user is a designated safeguarding lead or a deputy."""
    return staff_role(user) in SAFEGUARDING_ROLES


def safeguarding_leads(roles=SAFEGUARDING_ROLES) -> QuerySet:
    """Return the active accounts holding one of `roles` that have an email address."""
    return (
        get_user_model()
        .objects.filter(is_active=True, staff_profile__role__in=roles)
        .exclude(email="")
        .order_by("pk")
    )


def safeguarding_ready() -> bool:
    """Return whether a DSL with an email address exists: assessments may start only then."""
    return safeguarding_leads([StaffRole.DSL]).exists()


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


class StaffPermissions:
    """What the signed-in member of staff may do, asked by templates (worked out when asked)."""

    def __init__(self, user: AbstractBaseUser | AnonymousUser):
        self.user = user

    @cached_property
    def role(self) -> str | None:
        return staff_role(self.user)

    @cached_property
    def manage(self) -> bool:
        """Accounts, groups and the partner's settings."""
        return is_partner_admin(self.user)

    @cached_property
    def whole_school(self) -> bool:
        return sees_whole_school(self.user)

    @cached_property
    def results(self) -> bool:
        return sees_results(self.user)

    @cached_property
    def safeguarding(self) -> bool:
        """Safeguarding alerts: receiving and acknowledging them."""
        return is_safeguarding_lead(self.user)


def _allowing(allowed: Callable[[AbstractBaseUser], bool]) -> Callable[[View], View]:
    """Return a decorator that lets in whom `allowed` accepts; anonymous users sign in; 404."""

    def decorator(view: View) -> View:
        # Personal data: never kept by the browser's cache (the back button after signing out
        # or sending answers shows a fresh page, not a stale copy).
        @never_cache
        @login_required
        @wraps(view)
        def wrapper(request: HttpRequest, *args, **kwargs) -> HttpResponse:
            # A 404, not a 403: a page someone may not see is one that is not there for them,
            # exactly as another learner's page is for a learner.
            if not allowed(request.user):
                raise Http404
            return view(request, *args, **kwargs)

        return wrapper

    return decorator


# Let partner staff in, in any role.
staff_required = _allowing(is_staff_member)
# Pages about the whole school (bulk registration, personal data, operations).
whole_school_required = _allowing(sees_whole_school)
# Accounts, groups and the partner's settings.
admin_required = _allowing(is_partner_admin)
# The follow-up queue and the results download.
results_required = _allowing(sees_results)
# Safeguarding alerts.
safeguarding_required = _allowing(is_safeguarding_lead)
# A learner's whole data (results included) in one file, for a subject access request.
whole_school_results_required = _allowing(
    lambda user: sees_whole_school(user) and sees_results(user)
)


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
