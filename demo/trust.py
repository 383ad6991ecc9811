"""The demo trust of `make run`: a primary and a secondary school, their leads, the trust's people.

Made (or mended) by `demo_staff` before the portal starts and again by `seed_demo`, so both
schools have a safeguarding lead with an email address before any demo learner is assessed.
"""

from dataclasses import dataclass

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser, Group

from accounts.access import STAFF_GROUP
from accounts.models import StaffRole
from accounts.services import staff_role_set
from learners.models import Level
from schools.models import DEFAULT_SCHOOL_CODE, DEFAULT_SCHOOL_NAME, School
from schools.services import school_add

PRIMARY = ("100001", "Oak Primary")
SECONDARY = ("100002", "Ash Academy")
# Every demo account (the demo staff command's) and its role; a school's own lead holds it
# only in that school, the others in both (or above them).
DEMO_USERNAME = "demo-staff"  # the safeguarding lead in both schools
DEMO_ADMIN_USERNAME = "demo-admin"  # the partner admin in both schools
PRIMARY_LEAD_USERNAME = "demo-oak-dsl"  # Oak Primary's own safeguarding lead
TRUST_ADMIN_USERNAME = "demo-trust-admin"
TRUST_LEAD_USERNAME = "demo-trust-lead"
# Under `make run` alert emails are printed by the delivery worker: these receive nothing real.
DEMO_DSL_EMAIL = "demo-staff@dsl.example"
PRIMARY_LEAD_EMAIL = "demo-oak-dsl@dsl.example"
TRUST_LEAD_EMAIL = "demo-trust-lead@trust.example"


@dataclass(frozen=True)
class DemoTrust:
    primary: School
    secondary: School

    def school_for(self, level: str) -> School:
        """Return the school a demo learner of this level goes to: primary pupils to the primary."""
        return self.primary if level == Level.PRIMARY else self.secondary


def demo_schools() -> DemoTrust:
    """Make the trust's two schools (idempotent).

    A portal that still has only the migration's untouched school (a fresh clone, or a demo
    seeded before schools existed) turns it into the secondary, so what it holds stays there.
    """
    code, name = SECONDARY
    if not School.objects.filter(code__iexact=code).exists():
        only = list(School.objects.all()[:2])
        if len(only) == 1 and (only[0].code, only[0].name) == (
            DEFAULT_SCHOOL_CODE,
            DEFAULT_SCHOOL_NAME,
        ):
            only[0].code, only[0].name = code, name
            only[0].save(update_fields=["code", "name"])  # the signal drops the cached list
    secondary = school_add(code=code, name=name).school
    primary = school_add(code=PRIMARY[0], name=PRIMARY[1]).school
    return DemoTrust(primary=primary, secondary=secondary)


def demo_account(username: str, *, password: str | None = None, email: str = "", **names):
    """Make (or mend) a demo staff account: active, in the staff group, with the password given.

    Without a password a new account cannot sign in until `demo_staff` gives it one.
    """
    user, created = get_user_model().objects.get_or_create(username=username, defaults=names)
    if password is not None and not user.check_password(password):
        user.set_password(password)
    elif created:
        user.set_unusable_password()
    if email and user.email != email:
        user.email = email
    # A demo seeded before its staff had names gets them: pages name staff as schools do.
    for field, value in names.items():
        if not getattr(user, field):
            setattr(user, field, value)
    user.is_active = True
    user.save()
    user.groups.add(Group.objects.get_or_create(name=STAFF_GROUP)[0])
    return user


def demo_trust_staff(trust: DemoTrust, *, password: str | None = None) -> dict[str, object]:
    """Give every demo account its roles in the trust; return them by username.

    Each school has a safeguarding lead with an email address, so assessments open in both.
    """
    both = (trust.secondary, trust.primary)
    accounts = {
        DEMO_USERNAME: (StaffRole.DSL, both, DEMO_DSL_EMAIL, ("Alex", "Morgan")),
        DEMO_ADMIN_USERNAME: (StaffRole.ADMIN, both, "", ("Priya", "Shah")),
        PRIMARY_LEAD_USERNAME: (
            StaffRole.DSL,
            (trust.primary,),
            PRIMARY_LEAD_EMAIL,
            ("Helen", "Okafor"),
        ),
        TRUST_ADMIN_USERNAME: (StaffRole.TRUST_ADMIN, (), "", ("Chris", "Lee")),
        TRUST_LEAD_USERNAME: (
            StaffRole.TRUST_SAFEGUARDING_LEAD,
            (),
            TRUST_LEAD_EMAIL,
            ("Jo", "Bennett"),
        ),
    }
    users = {}
    for username, (role, schools, email, (first, last)) in accounts.items():
        user = demo_account(
            username, password=password, email=email, first_name=first, last_name=last
        )
        _roles_give(user, role, schools)
        users[username] = user
    return users


def demo_colleague_roles(colleague: AbstractBaseUser, trust: DemoTrust) -> None:
    """Make the demo's colleague a deputy lead in both schools: follow-ups go to them in each."""
    _roles_give(colleague, StaffRole.DEPUTY_DSL, (trust.secondary, trust.primary))


def _roles_give(user: AbstractBaseUser, role: str, schools) -> None:
    for school in schools or [None]:
        staff_role_set(user=user, role=role, school_id=school.pk if school else None)
