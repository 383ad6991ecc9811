"""The school's own settings: who reads results, helplines, hours, cards, retention."""

import datetime

from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.utils.translation import gettext_lazy

from kit.addresses import validate_networks
from kit.row_cache import cached_row

PARTNER_SETTINGS_KEY = "portal.partner-settings"


class PartnerSettings(models.Model):
    """The partner's own choices about who sees what; one row, edited by partner admins."""

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
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        db_table = "portal_partnersettings"  # the table it had before it moved here
        verbose_name_plural = "partner settings"

    def __str__(self) -> str:
        return "Partner settings"

    @classmethod
    def current(cls) -> "PartnerSettings":
        """Return the partner's settings, made with the defaults the first time.

        Read on many pages: kept in the shared cache (ROW_CACHE_SECONDS), dropped when saved.
        """
        return cached_row(PARTNER_SETTINGS_KEY, cls.load)

    @classmethod
    def load(cls) -> "PartnerSettings":
        """Read the partner's settings from the database, made with the defaults if missing."""
        return cls.objects.get_or_create(pk=1)[0]
