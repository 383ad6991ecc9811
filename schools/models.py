"""Schools of the partner, each with its own settings: who reads results, helplines, hours."""

import datetime
import time
from contextvars import ContextVar

from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.utils.translation import gettext_lazy

from kit.addresses import validate_networks
from kit.row_cache import cached_row
from schools.context import working_school_id

# Each school's settings are kept under this key and the school's id (schools.apps drops it).
PARTNER_SETTINGS_KEY = "portal.partner-settings"
# The list of the partner's schools, read on every staff page (the switcher, the scoping).
SCHOOLS_KEY = "portal.partner-settings.schools"
# The school a deployment that never named one has: made by schools migration 0002.
DEFAULT_SCHOOL_CODE = "SCHOOL"
DEFAULT_SCHOOL_NAME = "Our school"
# The list read once in a request is kept for it (and at most this long in a task's thread).
MEMO_SECONDS = 2.0
_everyone_memo: ContextVar[tuple[float, list] | None] = ContextVar("schools", default=None)


def settings_key(school_id: int) -> str:
    """Return the cache key of a school's settings."""
    return f"{PARTNER_SETTINGS_KEY}:{school_id}"


class School(models.Model):
    """A school of the partner (an academy of a trust, a district's school, a site)."""

    # The school's own reference, e.g. its DfE URN: what commands and roster files name.
    code = models.CharField(gettext_lazy("code"), max_length=32, unique=True)
    name = models.CharField(gettext_lazy("name"), max_length=200)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name", "code"]

    def __str__(self) -> str:
        return self.name

    @classmethod
    def everyone(cls) -> list["School"]:
        """Return every school of the partner by name, from the shared cache while unchanged.

        Asked many times a request (scoping, roles, the header): read once per request.
        """
        memo = _everyone_memo.get()
        now = time.monotonic()
        if memo is not None and memo[0] > now:
            return memo[1]
        schools = cached_row(
            SCHOOLS_KEY, lambda: list(cls.objects.order_by("name", "code")) or None
        ) or [cls.default()]
        _everyone_memo.set((now + MEMO_SECONDS, schools))
        return schools

    @classmethod
    def default(cls) -> "School":
        """Return the partner's first school, made the first time (a deployment has one)."""
        school = cls.objects.order_by("pk").first()
        if school is None:
            school, _ = cls.objects.get_or_create(
                code=DEFAULT_SCHOOL_CODE, defaults={"name": DEFAULT_SCHOOL_NAME}
            )
        return school


def forget_schools_memo(**kwargs) -> None:
    """Read the schools afresh: at each request's start and end, and when one changes."""
    _everyone_memo.set(None)


def first_school_id() -> int:
    """Return the partner's first school (the one a one-school deployment always had)."""
    return min(school.pk for school in School.everyone())


def several_schools() -> bool:
    """Return whether the partner has more than one school (only then are schools shown)."""
    return len(School.everyone()) > 1


def default_school_id() -> int:
    """Return the school a new row belongs to when its code names none: the one worked in."""
    return working_school_id() or first_school_id()


class PartnerSettings(models.Model):
    """A school's own choices about who sees what; one row per school, edited by its admins."""

    school = models.OneToOneField(School, on_delete=models.CASCADE, related_name="settings")

    # A class teacher usually needs to know who has finished, not what a child answered; an
    # admin keeps the records. Both see results only when the partner decides they should.
    teachers_see_results = models.BooleanField(
        gettext_lazy("Teachers see their groups' results"), default=False
    )
    admins_see_results = models.BooleanField(
        gettext_lazy("Partner admins see every learner's results"), default=False
    )
    # Sign-in cards (the lessons app) work only while a teacher has opened sign-in for a group,
    # for at most this long, and (if any ranges are listed) only from the school's network.
    card_window_max_minutes = models.PositiveSmallIntegerField(
        gettext_lazy("Longest time a class's card sign-in may stay open (minutes)"),
        default=90,
        validators=[MinValueValidator(5), MaxValueValidator(480)],
    )
    card_networks = models.TextField(
        gettext_lazy("Networks that may sign in with a card"),
        blank=True,
        help_text=gettext_lazy(
            "Address ranges, one per line, for example 203.0.113.0/24. "
            "Leave empty to allow cards from any network."
        ),
        validators=[validate_networks],
    )
    # Primary pupils (ages 4-11) mostly cannot type a strong password; a partner that gives
    # them cards may close the password route to them. Off by default, so that a form posted
    # without the box (an unticked box sends nothing) changes nothing.
    primary_cards_only = models.BooleanField(
        gettext_lazy("Primary pupils sign in only with their sign-in card"), default=False
    )
    # The school's records (roster sync): how its grades map to levels (roster.grades; blank:
    # England's and the US's defaults), a college whose every student is in further education,
    # and whether a pupil the roster brings gets a made password (printed on a slip) or signs
    # in only by card or school account.
    roster_grade_levels = models.TextField(gettext_lazy("Grades and levels"), blank=True)
    roster_further_education = models.BooleanField(
        gettext_lazy("Every student of this school is in further education"), default=False
    )
    roster_made_passwords = models.BooleanField(
        gettext_lazy("Make a password for each pupil the roster brings"), default=True
    )
    # Once the school's single sign-on is set up, its staff may be kept to it: a password
    # (often reused elsewhere) then no longer opens the portal. Only while a provider is
    # configured (accounts.password_sign_in); superusers keep theirs, for recovery.
    staff_passwords_off = models.BooleanField(
        gettext_lazy("Staff sign in only with their school account"), default=False
    )
    # Safeguarding alerts (the safeguarding app). The spec lists neither needs_help values nor
    # RiskLevel labels: each list is one value per line, matched ignoring case, spaces and
    # dashes; a value in neither list of its kind raises an alert too ("unrecognised: review").
    needs_help_routine = models.TextField(
        gettext_lazy("Routine needs-help values"),
        default="No\nYes",
        help_text=gettext_lazy("One per line. These open a follow-up but send no alert."),
    )
    needs_help_priority = models.TextField(
        gettext_lazy("Priority needs-help values"),
        default="Yes - priority",
        help_text=gettext_lazy("One per line. These alert the safeguarding leads at once."),
    )
    risk_levels_routine = models.TextField(
        gettext_lazy("Routine risk levels"), default="Low\nModerate\nMedium"
    )
    risk_levels_priority = models.TextField(gettext_lazy("Priority risk levels"), default="High")
    alert_escalate_minutes = models.PositiveSmallIntegerField(
        gettext_lazy("Escalate an alert not acknowledged within (school-hours minutes)"),
        default=30,
        validators=[MinValueValidator(5), MaxValueValidator(480)],
    )
    school_day_starts = models.TimeField(
        gettext_lazy("School day starts"), default=datetime.time(8, 30)
    )
    school_day_ends = models.TimeField(gettext_lazy("School day ends"), default=datetime.time(16))
    # Learners aged 18 or over are adults: a partner may decide their results alert no one.
    # Named so that the default (alerts for everyone) is the unticked box.
    adults_without_alerts = models.BooleanField(
        gettext_lazy("Results of learners aged 18 or over raise no alerts"), default=False
    )
    # What a learner sees of their own results.
    hide_results_from_learners = models.BooleanField(
        gettext_lazy("Learners do not see their own results"), default=False
    )
    show_scores_to_learners = models.BooleanField(
        gettext_lazy("Learners see their LOA score and risk level"), default=False
    )

    # The service's ResultDescription is its own prose: it may quote the score and risk level.
    # Who may read it besides staff (never a number or label while scores are kept from them).
    class DescriptionReaders(models.TextChoices):
        NOBODY = "nobody", gettext_lazy("No learners")
        OLDER = "older", gettext_lazy("Secondary and further education learners")
        EVERYONE = "everyone", gettext_lazy("Every learner, primary pupils too")

    description_to_learners = models.CharField(
        gettext_lazy("Learners who read the assessment service's own description"),
        max_length=10,
        choices=DescriptionReaders.choices,
        default=DescriptionReaders.OLDER,
    )
    # The youngest pupils (LOA_PARTNER_LEVEL3) answer one question per screen, with large
    # picture buttons, and hear each question read aloud as it appears, unless the school
    # turns these off. Named so that the default is the unticked box: a form posted without
    # them (a script changing one setting) changes nothing.
    primary_questions_grouped = models.BooleanField(
        gettext_lazy("Primary pupils see questions grouped by topic, as older learners do"),
        default=False,
    )
    primary_read_aloud_off = models.BooleanField(
        gettext_lazy("Primary pupils hear a question only when they press its speaker"),
        default=False,
    )
    # What a lead records when taking on a concern: the portal's short list of actions, and
    # the school's own, one per line (for example "Spoke with the pupil's form tutor").
    safeguarding_actions = models.TextField(
        gettext_lazy("Your school's own safeguarding actions"),
        blank=True,
        help_text=gettext_lazy(
            "One per line. Offered after the usual ones when an alert is taken on."
        ),
    )
    school_contact = models.CharField(
        gettext_lazy("Who a learner can talk to at school"),
        max_length=200,
        blank=True,
        help_text=gettext_lazy(
            "For example: Mrs Khan, our safeguarding lead, in room 12. A class may name its own."
        ),
    )
    helplines = models.TextField(
        gettext_lazy("Helplines for when school is closed"),
        default="Childline: call 0800 1111, free, any time\nShout: text SHOUT to 85258",
        help_text=gettext_lazy("One per line. Shown on every learner's results page."),
    )
    # Children's data: a learner's answers, results and attempts are erased this long after
    # their last activity, unless held for safeguarding (the privacy app's retention sweep).
    retention_years = models.PositiveSmallIntegerField(
        gettext_lazy("Keep learners' answers and results for (years after last activity)"),
        default=3,
        validators=[MinValueValidator(1), MaxValueValidator(25)],
    )
    # The school's head may keep its figures out of the trust's dashboard (audited).
    withhold_from_trust = models.BooleanField(
        gettext_lazy("Keep this school's figures out of the trust's dashboard"), default=False
    )
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        db_table = "portal_partnersettings"  # the table it had before it moved here
        verbose_name_plural = "partner settings"

    def __str__(self) -> str:
        return "Partner settings"

    @classmethod
    def current(cls) -> "PartnerSettings":
        """Return the settings of the school being worked in (else the first school's).

        Read on many pages: kept in the shared cache (ROW_CACHE_SECONDS), dropped when saved.
        """
        return cls.of(working_school_id() or first_school_id())

    @classmethod
    def of(cls, school_id: int) -> "PartnerSettings":
        """Return a school's settings, made with the defaults the first time."""
        return cached_row(settings_key(school_id), lambda: cls.load(school_id))

    @classmethod
    def load(cls, school_id: int | None = None) -> "PartnerSettings":
        """Read a school's settings from the database, made with the defaults if missing."""
        if school_id is None:
            school_id = working_school_id() or School.default().pk
        return cls.objects.get_or_create(school_id=school_id)[0]
