"""Forms of the staff pages: a new account, a changed one, and the partner's settings."""

from django import forms
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from accounts.access import role_in_school
from accounts.forms import new_password_check, new_password_field
from accounts.models import SCHOOL_ROLE_CHOICES
from classes.models import SchoolGroup
from kit.forms import ClearRequiredMessages
from kit.names import validate_name
from learners.forms import username_in_normal_form
from schools.context import working_school_id
from schools.models import PartnerSettings, several_schools
from signin.providers import offered_providers


class GroupsField(forms.ModelMultipleChoiceField):
    """Groups as checkboxes, named with their year."""

    widget = forms.CheckboxSelectMultiple

    def label_from_instance(self, group: SchoolGroup) -> str:
        return f"{group.name} ({group.academic_year})"


class StaffAccountForm(ClearRequiredMessages, forms.Form):
    """The role, groups and email of a staff account."""

    required_messages = {
        "email": gettext_lazy("Enter the email address."),
        "role": gettext_lazy("Choose the role."),
    }

    email = forms.EmailField(label=gettext_lazy("Email"))
    role = forms.ChoiceField(
        label=gettext_lazy("Role"),
        choices=[("", gettext_lazy("Choose a role")), *SCHOOL_ROLE_CHOICES],
        help_text=gettext_lazy(
            "Partner admin: accounts, groups and settings. Teacher: their groups' learners and "
            "progress. Head of Year: their groups' results and follow-ups. Safeguarding leads: "
            "every result and follow-up."
        ),
    )
    groups = GroupsField(
        queryset=SchoolGroup.objects.none(),
        required=False,
        label=gettext_lazy("Groups they work with"),
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # The groups of the school worked in: a role is held, and groups taught, per school.
        # Last year's archived classes are history: nobody starts working with one.
        groups = SchoolGroup.objects.current().order_by("-academic_year", "name")
        school = working_school_id()
        self.fields["groups"].queryset = groups if school is None else groups.filter(school=school)


class StaffNewForm(StaffAccountForm):
    """A new staff account: who it is, its role and groups, and a first password."""

    required_messages = {
        **StaffAccountForm.required_messages,
        "username": gettext_lazy("Enter the username."),
        "password1": gettext_lazy("Enter a password."),
        "password2": gettext_lazy("Enter the password again."),
    }

    username = forms.CharField(label=gettext_lazy("Username"), max_length=150)
    first_name = forms.CharField(
        label=gettext_lazy("First name"), max_length=150, required=False, validators=[validate_name]
    )
    last_name = forms.CharField(
        label=gettext_lazy("Last name"), max_length=150, required=False, validators=[validate_name]
    )
    password1 = new_password_field(gettext_lazy("Password"), with_rules=True)
    password2 = new_password_field(gettext_lazy("Password again"))

    field_order = ["username", "first_name", "last_name", "email", "role", "groups"]

    def clean_username(self) -> str:
        # The same normal form as learners' usernames, so sign-in finds the account however
        # its name is typed ("Tara.Teacher", full-width letters).
        username = username_in_normal_form(self.cleaned_data["username"])
        if get_user_model().objects.filter(username=username).exists():
            raise ValidationError(_("That username is already taken. Choose another."))
        return username

    def clean(self) -> dict:
        cleaned = super().clean()
        person = get_user_model()(
            username=cleaned.get("username", ""),
            email=cleaned.get("email", ""),
            first_name=cleaned.get("first_name", ""),
            last_name=cleaned.get("last_name", ""),
        )
        new_password_check(self, first="password1", again="password2", person=person)
        return cleaned


class StaffChangeForm(StaffAccountForm):
    """A staff account's role, groups, email, and whether it may sign in."""

    is_active = forms.BooleanField(
        label=gettext_lazy("Can sign in"),
        required=False,
        help_text=gettext_lazy("Untick when someone leaves: their account and its history stay."),
    )

    @classmethod
    def for_account(cls, data, *, account) -> "StaffChangeForm":
        """Return the form filled with the account's current values (or the posted ones)."""
        initial = {
            "email": account.email,
            "role": role_in_school(account, working_school_id()) or "",
            "groups": list(account.group_links.values_list("group_id", flat=True)),
            "is_active": account.is_active,
        }
        return cls(data, initial=initial)


# Fields a POST may leave out without changing them (scripts post only what they change).
KEPT_WHEN_LEFT_OUT = (
    "description_to_learners",
    "card_window_max_minutes",
    "card_networks",
    "school_contact",
    "needs_help_priority",
    "needs_help_routine",
    "risk_levels_priority",
    "risk_levels_routine",
    "alert_escalate_minutes",
    "school_day_starts",
    "school_day_ends",
    "retention_years",
    "helplines",
    "safeguarding_actions",
)


class PartnerSettingsForm(forms.ModelForm):
    """Who sees results (besides pastoral staff and safeguarding leads); how cards work."""

    class Meta:
        model = PartnerSettings
        fields = [
            "teachers_see_results",
            "admins_see_results",
            "needs_help_priority",
            "needs_help_routine",
            "risk_levels_priority",
            "risk_levels_routine",
            "alert_escalate_minutes",
            "school_day_starts",
            "school_day_ends",
            "adults_without_alerts",
            "safeguarding_actions",
            "staff_passwords_off",
            "primary_cards_only",
            "card_window_max_minutes",
            "card_networks",
            "hide_results_from_learners",
            "show_scores_to_learners",
            "description_to_learners",
            "primary_questions_grouped",
            "primary_read_aloud_off",
            "school_contact",
            "helplines",
            "retention_years",
            "withhold_from_trust",
        ]
        widgets = {
            "card_networks": forms.Textarea(attrs={"rows": 3, "spellcheck": "false"}),
            "needs_help_priority": forms.Textarea(attrs={"rows": 3}),
            "needs_help_routine": forms.Textarea(attrs={"rows": 3}),
            "risk_levels_priority": forms.Textarea(attrs={"rows": 3}),
            "risk_levels_routine": forms.Textarea(attrs={"rows": 3}),
            "safeguarding_actions": forms.Textarea(attrs={"rows": 4}),
            "school_day_starts": forms.TimeInput(format="%H:%M"),
            "school_day_ends": forms.TimeInput(format="%H:%M"),
        }
        help_texts = {
            "teachers_see_results": gettext_lazy(
                "Off: teachers see who has started and finished, not what a learner answered "
                "or their results."
            ),
            "admins_see_results": gettext_lazy(
                "Off: partner admins keep learners' records without reading their results."
            ),
            "staff_passwords_off": gettext_lazy(
                "On: staff of this school (and trust staff) can no longer sign in with a "
                "password, only with the school account button. Link everyone first: the staff "
                "page shows who still uses a password. Superusers keep theirs."
            ),
            "primary_cards_only": gettext_lazy(
                "On: primary pupils cannot use a password, only their card, while their teacher "
                "has opened sign-in for the class. Off: both work."
            ),
            "risk_levels_priority": gettext_lazy(
                "One per line. A result with one of these alerts the safeguarding leads."
            ),
            "risk_levels_routine": gettext_lazy(
                "One per line. A risk level in neither list alerts too, as an unrecognised "
                "value to review."
            ),
            "alert_escalate_minutes": gettext_lazy(
                "Counted in school hours only (5 to 480). Then the deputies are emailed and "
                "every lead's pages show the alert as overdue."
            ),
            "school_day_starts": gettext_lazy("Monday to Friday, as 08:30."),
            "school_day_ends": gettext_lazy("As 16:00."),
            "adults_without_alerts": gettext_lazy(
                "Off: every learner's results can raise an alert, adults' too."
            ),
            "card_window_max_minutes": gettext_lazy(
                "A teacher opens card sign-in for a lesson; it closes by itself after this "
                "long at most (5 to 480)."
            ),
            "hide_results_from_learners": gettext_lazy(
                "On: after sending their answers, learners read only that they arrived and a "
                "member of staff will look at them, with who to talk to and the helplines."
            ),
            "show_scores_to_learners": gettext_lazy(
                "Off: learners read their results in words, without the LOA score and risk "
                "level, which only staff see."
            ),
            "description_to_learners": gettext_lazy(
                "The service writes a paragraph about each result. It is never shown to a "
                "learner while it mentions their score or risk level and scores are kept from "
                "learners."
            ),
            "primary_questions_grouped": gettext_lazy(
                "Off: primary pupils answer one question per screen with large picture "
                "buttons and a row of dots for their progress. An assessment keeps the way "
                "it started."
            ),
            "primary_read_aloud_off": gettext_lazy(
                "Off: each question is spoken as it appears and each answer as a pupil taps "
                "it. A speaker button beside every question and answer works either way; a "
                "pupil can turn reading by itself off on their own device."
            ),
            "school_contact": gettext_lazy(
                "For example: Mrs Khan, our safeguarding lead, in room 12. A class may name its "
                "own. Left empty, learners are told to talk to their teacher or any adult at "
                "school they trust."
            ),
            "helplines": gettext_lazy(
                "One per line, shown on every learner's results page. Phone numbers become "
                "links a phone can call (or text, after the word “text”)."
            ),
            "retention_years": gettext_lazy(
                "1 to 25. Answers, results and personal details are then erased, unless a "
                "safeguarding alert or follow-up holds them until the learner is 25."
            ),
            "withhold_from_trust": gettext_lazy(
                "On: the trust's dashboard shows this school as withheld, and its figures are "
                "left out of the trust's totals. Off: the trust sees the school's counts, "
                "never a learner."
            ),
        }

    def __init__(self, *args, by_trust: bool = False, **kwargs):
        super().__init__(*args, **kwargs)
        if not offered_providers():
            # Without single sign-on a password is the only way in: nothing to turn off.
            del self.fields["staff_passwords_off"]
        if not several_schools():
            del self.fields["withhold_from_trust"]  # one school: nothing about schools shows
        elif by_trust:
            # The school's own choice, as a head teacher's consent is: the trust sees it.
            field = self.fields["withhold_from_trust"]
            field.disabled = True
            field.help_text = _("Only the school's own admins can change this.")
        # Left out, these stay as they were (a script may post only the field it changes;
        # an empty list of priority values must be typed as a blank line, not left out).
        for name in KEPT_WHEN_LEFT_OUT:
            self.fields[name].required = False

    def clean(self) -> dict:
        cleaned = super().clean()
        for name in KEPT_WHEN_LEFT_OUT:
            left_out = name not in self.data or cleaned.get(name) is None
            if name in cleaned and left_out:
                cleaned[name] = getattr(self.instance, name)
        if "helplines" in self.data and not cleaned.get("helplines", "").strip():
            # Pupils must always be told where to turn when school is closed.
            self.add_error("helplines", _("Enter at least one helpline."))
        starts, ends = cleaned.get("school_day_starts"), cleaned.get("school_day_ends")
        if starts and ends and ends <= starts:
            self.add_error("school_day_ends", _("The school day must end after it starts."))
        return cleaned
