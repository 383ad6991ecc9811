"""Staff identity: roles, and the sign-in locks the throttle sets."""

from django.conf import settings
from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy


class StaffRole(models.TextChoices):
    """What a member of staff may see and do (accounts.access says exactly what)."""

    ADMIN = "admin", gettext_lazy("Partner admin")
    TEACHER = "teacher", gettext_lazy("Teacher")
    HEAD_OF_YEAR = "head_of_year", gettext_lazy("Head of Year (pastoral lead)")
    DSL = "dsl", gettext_lazy("Designated safeguarding lead")
    DEPUTY_DSL = "deputy_dsl", gettext_lazy("Deputy safeguarding lead")
    # Above the schools: a trust's (a district's, an authority's) own people.
    TRUST_ADMIN = "trust_admin", gettext_lazy("Trust admin")
    TRUST_SAFEGUARDING_LEAD = (
        "trust_safeguarding_lead",
        gettext_lazy("Trust safeguarding lead"),
    )
    TRUST_VIEWER = "trust_viewer", gettext_lazy("Trust viewer (figures only)")


# The roles held in one school (SchoolRole) and the roles held above every school.
TRUST_ROLES = (StaffRole.TRUST_ADMIN, StaffRole.TRUST_SAFEGUARDING_LEAD, StaffRole.TRUST_VIEWER)
SCHOOL_ROLE_CHOICES = [
    (value, label) for value, label in StaffRole.choices if value not in TRUST_ROLES
]
TRUST_ROLE_CHOICES = [(value, label) for value, label in StaffRole.choices if value in TRUST_ROLES]


class StaffProfile(models.Model):
    """A member of staff: their trust role if any; their roles in schools are SchoolRoles."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="staff_profile"
    )
    # A trust role, or empty: a school's member of staff holds their roles in SchoolRole.
    role = models.CharField(max_length=30, choices=TRUST_ROLE_CHOICES, blank=True, default="")

    class Meta:
        db_table = "portal_staffprofile"  # the table it had before it moved here

    def __str__(self) -> str:
        return f"{self.user}: {self.get_role_display() or 'school staff'}"


class SchoolRole(models.Model):
    """A member of staff's role in one school (a teacher in one, a head of year in another)."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="school_roles"
    )
    school = models.ForeignKey("schools.School", on_delete=models.CASCADE, related_name="+")
    role = models.CharField(max_length=20, choices=SCHOOL_ROLE_CHOICES)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["user", "school"], name="one_role_per_school"),
        ]
        indexes = [models.Index(fields=["school", "role"], name="school_role_school_idx")]

    def __str__(self) -> str:
        return f"{self.user}: {self.get_role_display()} at {self.school_id}"


class SignInLockQuerySet(models.QuerySet):
    def current(self) -> "SignInLockQuerySet":
        """Return the locks still in force: not lifted, and not yet ended."""
        return self.filter(lifted_at__isnull=True, locked_until__gt=timezone.now())


class SignInLock(models.Model):
    """A sign-in lock a throttle set, kept for staff to see and lift.

    Passwords' locks come from accounts.sign_in_throttle, sign-in cards' from
    lessons.card_throttle. The cache decides who is refused; this row says what was locked and
    until when. Locks on usernames no account has get no row: the throttle treats them alike,
    and staff have no one to let back in.
    """

    class Kind(models.TextChoices):
        ACCOUNT = "account", gettext_lazy("The account, from every address")
        ACCOUNT_ADDRESS = "account_address", gettext_lazy("The account, from one address")
        ADDRESS = "address", gettext_lazy("Every account, from one address")
        CARD = "card", gettext_lazy("A sign-in card, on every device")
        CARD_DEVICE = "card_device", gettext_lazy("Sign-in cards, on one device")
        CARD_ADDRESS = (
            "card_address",
            gettext_lazy("Sign-in cards from one address, without a device cookie"),
        )

    kind = models.CharField(max_length=16, choices=Kind.choices)
    # The school of the locked account or card; none for a lock on an address alone.
    school = models.ForeignKey(
        "schools.School", on_delete=models.CASCADE, null=True, blank=True, related_name="+"
    )
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        null=True,
        blank=True,
        related_name="sign_in_locks",
    )
    address = models.GenericIPAddressField(null=True, blank=True)
    # A card device lock's device as the teacher's roster names it ("Safari on an iPad").
    device = models.CharField(max_length=80, blank=True, default="")
    # The throttle's cache key of the locked scope (keyed hashes only): lifting deletes it.
    scope_ref = models.CharField(max_length=120, editable=False)
    locked_until = models.DateTimeField()
    created_at = models.DateTimeField(auto_now_add=True)
    lifted_at = models.DateTimeField(null=True, blank=True)
    lifted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
    )

    objects = SignInLockQuerySet.as_manager()

    class Meta:
        db_table = "portal_signinlock"  # the table it had before it moved here
        ordering = ["locked_until", "id"]
        indexes = [
            models.Index(
                fields=["locked_until"],
                condition=models.Q(lifted_at__isnull=True),
                name="sign_in_lock_current_idx",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.get_kind_display()}: {self.user or self.address} until {self.locked_until}"
