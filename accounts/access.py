"""Roles and access helpers: who may see which page, and lookups scoped to the signed-in user."""

from collections.abc import Callable
from functools import wraps

from django.contrib.auth import get_user_model
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db.models import QuerySet
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.functional import cached_property
from django.views.decorators.cache import never_cache

from accounts.models import TRUST_ROLES, StaffProfile, StaffRole
from schools.context import working_school_id
from schools.models import PartnerSettings, School, first_school_id, several_schools

STAFF_GROUP = "Partner staff"

# Roles that see every learner of the school; the others see the learners of their groups.
WHOLE_SCHOOL_ROLES = frozenset({StaffRole.ADMIN, StaffRole.DSL, StaffRole.DEPUTY_DSL})
# Roles that read results and follow-ups whatever the partner's settings say.
PASTORAL_ROLES = frozenset({StaffRole.HEAD_OF_YEAR, StaffRole.DSL, StaffRole.DEPUTY_DSL})
# The safeguarding leads: alerts are theirs to receive and acknowledge.
SAFEGUARDING_ROLES = frozenset({StaffRole.DSL, StaffRole.DEPUTY_DSL})
# What a trust role does inside each school: a trust admin is every school's admin, a trust
# safeguarding lead reads every school's alerts and follow-ups as its leads do (alerts reach
# them only by escalation: safeguarding_leads names a school's own). A trust viewer reads the
# trust's figures and never a learner: no role in any school.
TRUST_ROLE_IN_SCHOOLS = {
    StaffRole.TRUST_ADMIN: StaffRole.ADMIN,
    StaffRole.TRUST_SAFEGUARDING_LEAD: StaffRole.DSL,
}
# "All schools" (the session's choice of a trust role, on pages that support it).
ALL_SCHOOLS = "all"

View = Callable[..., HttpResponse]


def staff_name(user: AbstractBaseUser) -> str:
    """Name a member of staff the one way every page does: full name, else username."""
    full = user.get_full_name() if hasattr(user, "get_full_name") else ""
    return full or user.get_username()


def staff_role(user: AbstractBaseUser | AnonymousUser) -> str | None:
    """Return the role of a signed-in, active member of staff in the school worked in.

    None for anyone else; a trust viewer's role is their trust role (they hold none in a school).
    """
    if not user.is_authenticated or not user.is_active:
        return None
    # Asked by the view's decorator and again by every template: worked out once per request.
    if not hasattr(user, "_staff_role"):
        user._staff_role = assigned_role(user)
    return user._staff_role


def trust_role(user: AbstractBaseUser | AnonymousUser) -> str | None:
    """Return the user's trust role (a superuser counts as a trust admin), or None."""
    if not user.is_authenticated or not user.is_active or learner_account(user) is not None:
        return None
    if user.is_superuser:
        return StaffRole.TRUST_ADMIN
    try:
        role = user.staff_profile.role
    except StaffProfile.DoesNotExist:
        return None
    return role if role in TRUST_ROLES else None


def school_roles(user: AbstractBaseUser) -> dict[int, str]:
    """Return the user's roles by school id (read with the cached user: accounts.auth)."""
    if not user.is_authenticated or learner_account(user) is not None:
        return {}
    if not hasattr(user, "_school_roles"):
        user._school_roles = {held.school_id: held.role for held in user.school_roles.all()}
    return user._school_roles


def schools_of(user: AbstractBaseUser) -> list[School]:
    """Return the schools the user may work in, by name: every school for trust roles."""
    if trust_role(user) is not None:
        return School.everyone()
    held = school_roles(user)
    schools = [school for school in School.everyone() if school.pk in held]
    if not schools and assigned_role_anywhere(user):
        # Staff with no school named (the staff group alone): the partner's first school.
        schools = School.everyone()[:1]
    return schools


def assigned_role_anywhere(user: AbstractBaseUser) -> bool:
    """Return whether the account is staff at all (in the staff group, a role, a superuser)."""
    if learner_account(user) is not None:
        return False
    return (
        user.is_superuser
        or trust_role(user) is not None
        or bool(school_roles(user))
        or user.groups.filter(name=STAFF_GROUP).exists()
    )


def working_school(user: AbstractBaseUser) -> int | None:
    """Return the id of the school the user works in now; None for a trust role's all schools.

    The choice is the session's (accounts.school_choice sets `_working_school`); outside a
    request (a command, a task), the school set by schools.context or the user's first school.
    """
    chosen = getattr(user, "_working_school", None)
    if chosen == ALL_SCHOOLS:
        return None
    if chosen is not None:
        return chosen
    context = working_school_id()
    mine = schools_of(user)
    if context is not None and any(school.pk == context for school in mine):
        return context
    return mine[0].pk if mine else None


def working_school_ids(user: AbstractBaseUser) -> list[int] | None:
    """Return the ids of the schools whose rows the user sees now; None for every school.

    None also when the partner has one school, so its pages query exactly as before.
    """
    if not several_schools():
        return None
    school = working_school(user)
    if school is None:
        return None if trust_role(user) is not None else []
    return [school]


def in_working_schools(user: AbstractBaseUser, rows: QuerySet, field: str = "school_id"):
    """Return the rows (with a school field) of the schools the user works in now."""
    ids = working_school_ids(user)
    return rows if ids is None else rows.filter(**{f"{field}__in": ids})


def role_in_school(user: AbstractBaseUser, school_id: int | None) -> str | None:
    """Return the role an account holds in one school, active or not (staff pages list it)."""
    # A learner's account is never staff, whatever its groups or flags: a child's sign-in must
    # not open other children's records. The learner comes with the user
    # (accounts.auth.CaseInsensitiveModelBackend.get_user).
    if learner_account(user) is not None:
        return None
    if user.is_superuser:
        return StaffRole.ADMIN
    profile = getattr(user, "staff_profile", None)
    if profile is not None and profile.role in TRUST_ROLES:
        return TRUST_ROLE_IN_SCHOOLS.get(profile.role, profile.role)
    held = school_roles(user)
    if not held:
        # In the staff group without a role: a teacher, in whichever school.
        return StaffRole.TEACHER if user.groups.filter(name=STAFF_GROUP).exists() else None
    if school_id is None:
        return next(iter(held.values()))
    return held.get(school_id)


def assigned_role(user: AbstractBaseUser) -> str | None:
    """Return the role an account holds in the school worked in, whether or not it may sign in.

    None if not staff. A superuser counts as a partner admin everywhere; a trust role as its
    role in schools (TRUST_ROLE_IN_SCHOOLS). A member of the staff group never given a role
    counts as a teacher: they see the learners of their groups, none until given one.
    """
    if learner_account(user) is not None:
        return None  # before the school is worked out: a learner's pages read no school list
    return role_in_school(user, working_school(user))


def is_staff_member(user: AbstractBaseUser | AnonymousUser) -> bool:
    """Return whether the user works in a school of the partner (a trust viewer does not)."""
    role = staff_role(user)
    return role is not None and role != StaffRole.TRUST_VIEWER


def is_trust_staff(user: AbstractBaseUser | AnonymousUser) -> bool:
    """Return whether the user holds a trust role (a superuser does)."""
    return trust_role(user) is not None


def is_trust_admin(user: AbstractBaseUser | AnonymousUser) -> bool:
    """Return whether the user manages every school (schools, accounts, settings)."""
    return trust_role(user) == StaffRole.TRUST_ADMIN


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
    school = working_school(user)
    if school is None:
        # A trust admin under "All schools" reads results only where every school lets its
        # admins: the pages then show every school's learners at once.
        if not hasattr(user, "_all_schools_results"):
            user._all_schools_results = not PartnerSettings.objects.filter(
                **{
                    "teachers_see_results"
                    if role == StaffRole.TEACHER
                    else "admins_see_results": False
                }
            ).exists()
        return user._all_schools_results
    if not hasattr(user, "_partner_settings"):
        user._partner_settings = PartnerSettings.of(school)
    if role == StaffRole.TEACHER:
        return user._partner_settings.teachers_see_results
    return user._partner_settings.admins_see_results


def is_safeguarding_lead(user: AbstractBaseUser | AnonymousUser) -> bool:
    """Return whether the user is a designated safeguarding lead or a deputy."""
    return staff_role(user) in SAFEGUARDING_ROLES


def safeguarding_leads(roles=SAFEGUARDING_ROLES, *, school_id: int | None = None) -> QuerySet:
    """Return a school's active accounts holding one of `roles` that have an email address.

    The school worked in when none is named (else the partner's first school).
    """
    if school_id is None:
        school_id = working_school_id() or first_school_id()
    return (
        get_user_model()
        .objects.filter(
            is_active=True, school_roles__school_id=school_id, school_roles__role__in=roles
        )
        .exclude(email="")
        .order_by("pk")
    )


def trust_safeguarding_leads() -> QuerySet:
    """Return the active trust safeguarding leads with an email address (escalations)."""
    return (
        get_user_model()
        .objects.filter(is_active=True, staff_profile__role=StaffRole.TRUST_SAFEGUARDING_LEAD)
        .exclude(email="")
        .order_by("pk")
    )


def safeguarding_ready(school_id: int | None = None) -> bool:
    """Return whether a school has a DSL with an email address: its assessments start only then."""
    return safeguarding_leads([StaffRole.DSL], school_id=school_id).exists()


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

    @cached_property
    def trust(self) -> bool:
        """A trust role: the trust's figures, across every school."""
        return is_trust_staff(self.user)

    @cached_property
    def trust_admin(self) -> bool:
        """The trust's schools, and accounts and settings in every school."""
        return is_trust_admin(self.user)


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
# Anyone on staff, the trust's viewers too (pages about one's own account).
any_staff_required = _allowing(lambda user: staff_role(user) is not None)
# Pages about the whole school (bulk registration, personal data, operations).
whole_school_required = _allowing(sees_whole_school)
# Accounts, groups and the partner's settings.
admin_required = _allowing(is_partner_admin)
# The follow-up queue and the results download.
results_required = _allowing(sees_results)
# Safeguarding alerts.
safeguarding_required = _allowing(is_safeguarding_lead)
# The trust's pages (its dashboard): trust roles only.
trust_required = _allowing(is_trust_staff)
# A learner's whole data (results included) in one file, for a subject access request.
whole_school_results_required = _allowing(
    lambda user: sees_whole_school(user) and sees_results(user)
)


def one_school(view: View) -> View:
    """Show a page that makes or changes one school's things only once a school is chosen.

    Under a trust role's "All schools" the page asks which school first (the header's switcher).
    """

    @wraps(view)
    def wrapper(request: HttpRequest, *args, **kwargs) -> HttpResponse:
        if several_schools() and working_school(request.user) is None:
            return render(request, "portal/choose_school.html")
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
