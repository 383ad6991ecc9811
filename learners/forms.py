"""Forms for staff work with learners: they validate and convert, never call the upstream."""

from datetime import date

from django import forms
from django.contrib.auth import get_user_model
from django.contrib.auth.validators import UnicodeUsernameValidator
from django.core.exceptions import ValidationError
from django.db.models import QuerySet
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, ngettext

from accounts.forms import new_password_check, new_password_field
from accounts.usernames import USERNAME_MAX_LENGTH, username_normal_form, username_problem
from classes.fields import GroupChoiceField
from classes.models import SchoolGroup
from kit.date_fields import DatePartsField, DatePartsWidget
from kit.forms import ClearRequiredMessages
from kit.names import validate_name
from learners.models import AGE_AND_LEVEL, Learner, Level
from learners.passwords import password_generate
from learners.selectors import username_taken

# Learners range from primary pupils to adults: an age outside these is a typing mistake.
YOUNGEST_AGE_YEARS = 4
OLDEST_AGE_YEARS = 100
EMAIL_MAX_LENGTH = Learner._meta.get_field("email").max_length

TYPED_AND_MADE = gettext_lazy(
    'Either type a password or tick "Make a password for me", not both: empty the password '
    "boxes to have one made."
)


def make_password_field(help_text: str) -> forms.BooleanField:
    """Return the tick box that leaves making the password to the portal."""
    return forms.BooleanField(
        required=False, label=gettext_lazy("Make a password for me"), help_text=help_text
    )


def password_left_to_the_portal(form: forms.Form, *typed: str) -> None:
    """Make the typed password fields optional when the form asks for a password to be made."""
    if form.is_bound and form["make_password"].value():
        for name in typed:
            form.fields[name].required = False


def dob_plausible(dob: date) -> None:
    """Refuse a date of birth in the future, or one making the learner too young or too old."""
    today = date.today()
    if dob >= today:
        raise ValidationError(_("Date of birth must be in the past."))
    age = today.year - dob.year - ((today.month, today.day) < (dob.month, dob.day))
    if age < YOUNGEST_AGE_YEARS:
        raise ValidationError(
            ngettext(
                "With this date of birth the learner would be under %(age)s year old. "
                "Check the year.",
                "With this date of birth the learner would be under %(age)s years old. "
                "Check the year.",
                YOUNGEST_AGE_YEARS,
            )
            % {"age": YOUNGEST_AGE_YEARS}
        )
    if age > OLDEST_AGE_YEARS:
        raise ValidationError(
            ngettext(
                "With this date of birth the learner would be over %(age)s year old. "
                "Check the year.",
                "With this date of birth the learner would be over %(age)s years old. "
                "Check the year.",
                OLDEST_AGE_YEARS,
            )
            % {"age": OLDEST_AGE_YEARS}
        )


def dob_field() -> DatePartsField:
    """Return the learner's date of birth field: every form that asks for it uses this one."""
    return DatePartsField(
        label=gettext_lazy("Date of birth"),
        # Sent whole (scripts, checks, the bulk import's `dob` column): the spec's ISO date.
        input_formats=["%Y-%m-%d"],
        # Staff type someone else's date: "bday" would have the browser offer their own.
        widget=DatePartsWidget(attrs={"autocomplete": "off"}),
        help_text=gettext_lazy("For example, 27 3 2009"),
        error_messages={
            "required": gettext_lazy("Enter the date of birth."),
            "invalid": gettext_lazy("Enter the date of birth as a real date, like 2009-03-27."),
        },
        validators=[dob_plausible],
    )


class LearnerRegistrationForm(ClearRequiredMessages, forms.Form):
    """Register a learner; field names are the spec's."""

    required_messages = {
        "username": gettext_lazy("Enter the username."),
        "password": gettext_lazy(
            'Enter the password. To have one made, tick "Make a password for me".'
        ),
        "dob": gettext_lazy("Enter the date of birth."),
    }

    username = forms.CharField(
        label=gettext_lazy("Username"),
        max_length=USERNAME_MAX_LENGTH,
        validators=[UnicodeUsernameValidator()],
        help_text=gettext_lazy("Letters, digits and @ . + - _ only. The learner signs in with it."),
    )
    password = new_password_field(gettext_lazy("Password"), with_rules=True)
    make_password = make_password_field(
        gettext_lazy(
            "Leave the password empty: the portal makes one that is easy to read aloud and "
            "shows it to you once, after registering."
        )
    )
    dob = dob_field()
    # The column's own limit: a longer address would pass Django's 320 and fail on saving.
    email = forms.EmailField(
        required=False, max_length=EMAIL_MAX_LENGTH, label=gettext_lazy("Email (optional)")
    )
    # Checked by a bulk-registration file's rows too (imports.checks copies these fields).
    first_name = forms.CharField(
        max_length=150,
        required=False,
        label=gettext_lazy("First name (optional)"),
        validators=[validate_name],
    )
    last_name = forms.CharField(
        max_length=150,
        required=False,
        label=gettext_lazy("Last name (optional)"),
        validators=[validate_name],
    )
    level = forms.ChoiceField(
        label=gettext_lazy("Level"),
        choices=[("", gettext_lazy("Not set (the assessment service decides)")), *Level.choices],
        required=False,
        help_text=gettext_lazy("Further education, secondary or primary."),
    )
    school_class = GroupChoiceField(
        queryset=SchoolGroup.objects.none(),
        required=False,
        label=gettext_lazy("Class or group (optional)"),
        empty_label=gettext_lazy("No group"),
        help_text=gettext_lazy(
            "Its staff see the learner. A learner in no group is seen by partner admins and "
            "safeguarding leads only."
        ),
    )

    def __init__(
        self, *args, groups: QuerySet[SchoolGroup] | None = None, group_required=False, **kwargs
    ):
        super().__init__(*args, **kwargs)
        self.password_made = False
        password_left_to_the_portal(self, "password")
        field = self.fields["school_class"]
        field.queryset = groups if groups is not None else SchoolGroup.objects.current()
        if group_required:
            # Staff who see only their groups' learners would lose sight of a learner they
            # registered into no group.
            field.required = True
            field.label = _("Class or group")
            field.empty_label = None
            field.help_text = _("One of your groups: its staff see the learner.")
            field.error_messages["required"] = _("Choose the class or group.")

    def clean_username(self) -> str:
        username = username_in_normal_form(self.cleaned_data["username"])
        if username_taken(username):
            raise ValidationError(_("That username is already taken. Choose another."))
        return username

    def clean(self) -> dict:
        cleaned = super().clean()
        # A throwaway user, so that the similarity check sees the names.
        person = get_user_model()(
            username=cleaned.get("username", ""),
            first_name=cleaned.get("first_name", ""),
            last_name=cleaned.get("last_name", ""),
            email=cleaned.get("email", ""),
        )
        # Not a detail of the learner: what the password field holds says it all from here on.
        if not cleaned.pop("make_password", False):
            new_password_check(self, first="password", person=person)
        elif cleaned.get("password"):
            self.add_error("password", TYPED_AND_MADE)
        elif not self.errors:
            cleaned["password"] = password_generate(
                username=person.username,
                first_name=person.first_name,
                last_name=person.last_name,
                email=person.email,
            )
            self.password_made = True
        return cleaned


class LearnerDetailsForm(ClearRequiredMessages, forms.Form):
    """Correct a learner's names, email, date of birth or level, by registration's rules."""

    required_messages = {"dob": gettext_lazy("Enter the date of birth.")}

    first_name = LearnerRegistrationForm.base_fields["first_name"]
    last_name = LearnerRegistrationForm.base_fields["last_name"]
    email = LearnerRegistrationForm.base_fields["email"]
    # Registration's date of birth: the same boxes and the same checks.
    dob = dob_field()
    level = forms.ChoiceField(
        label=gettext_lazy("Level"),
        choices=[("", gettext_lazy("Not set")), *Level.choices],
        required=False,
    )

    def __init__(self, *args, learner, may_change_age_and_level: bool = True, **kwargs):
        initial = {name: getattr(learner, name) for name in self.base_fields}
        super().__init__(*args, initial=initial, **kwargs)
        self.learner = learner
        if not may_change_age_and_level:
            # Shown, not changed: a disabled field keeps its initial value whatever is posted.
            for name in AGE_AND_LEVEL:
                self.fields[name].disabled = True
                self.fields[name].help_text = _(
                    "Only staff who see the whole school can change this: it decides how long "
                    "records are kept and which results raise a safeguarding alert."
                )

    def clean(self) -> dict:
        cleaned = super().clean()
        if not self.errors and all(
            cleaned[name] == getattr(self.learner, name) for name in self.fields
        ):
            raise ValidationError(_("Nothing was changed: correct a detail, then save."))
        return cleaned


def username_in_normal_form(typed: str) -> str:
    """Return a typed username in its normal form, or raise ValidationError saying what to fix."""
    username = username_normal_form(typed)
    # Written out in full a few characters become several ("ﬁ" is "fi"): check again.
    if len(username) > USERNAME_MAX_LENGTH:
        raise ValidationError(
            _("Use at most %(limit)d characters: this username has %(length)d.")
            % {"limit": USERNAME_MAX_LENGTH, "length": len(username)}
        )
    UnicodeUsernameValidator()(username)
    problem = username_problem(username)
    if problem:
        raise ValidationError(problem)
    return username


class LearnerPasswordResetForm(ClearRequiredMessages, forms.Form):
    """Choose a new password for a learner, typed twice and checked by the validators, or made."""

    required_messages = {
        "new_password1": gettext_lazy(
            'Enter the new password. To have one made, tick "Make a password for me".'
        ),
        "new_password2": gettext_lazy("Enter the new password again."),
    }

    new_password1 = new_password_field(gettext_lazy("New password"), with_rules=True)
    new_password2 = new_password_field(gettext_lazy("New password again"))
    make_password = make_password_field(
        gettext_lazy(
            "Leave both password boxes empty: the portal makes one that is easy to read aloud "
            "and shows it to you once, after the reset."
        )
    )

    def __init__(self, *args, learner, **kwargs):
        super().__init__(*args, **kwargs)
        self.learner = learner
        self.password_made = False
        password_left_to_the_portal(self, "new_password1", "new_password2")

    def clean(self) -> dict:
        cleaned = super().clean()
        # The learner's names live on the Learner, not the User: give them to the similarity
        # check, as registration does.
        person = get_user_model()(
            username=self.learner.username,
            first_name=self.learner.first_name,
            last_name=self.learner.last_name,
            email=self.learner.email,
        )
        if not cleaned.pop("make_password", False):
            new_password_check(self, first="new_password1", again="new_password2", person=person)
        elif cleaned.get("new_password1") or cleaned.get("new_password2"):
            self.add_error("new_password1", TYPED_AND_MADE)
        elif not self.errors:
            made = password_generate(
                username=person.username,
                first_name=person.first_name,
                last_name=person.last_name,
                email=person.email,
            )
            cleaned["new_password1"] = cleaned["new_password2"] = made
            self.password_made = True
        return cleaned
