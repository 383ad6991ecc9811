"""Forms of a child's safeguarding record: what was done, its category, notes and corrections."""

from django import forms
from django.utils.translation import gettext, gettext_lazy

from safeguarding.models import Alert, ChronologyEntry
from schools.models import PartnerSettings

# The portal's usual actions, offered before the school's own (PartnerSettings).
DEFAULT_ACTIONS = (
    gettext_lazy("Spoke with the pupil"),
    gettext_lazy("Contacted home"),
    gettext_lazy("Referred to early help"),
    gettext_lazy("Referred to children's services (MASH)"),
    gettext_lazy("Informed the police"),
    gettext_lazy("Monitoring in school"),
    gettext_lazy("No further action"),
)
TEXT_MAX_LENGTH = ChronologyEntry._meta.get_field("text").max_length
ACTION_MAX_LENGTH = ChronologyEntry._meta.get_field("action").max_length


def actions_offered(school_id: int) -> list[str]:
    """Return the actions a lead chooses from: the usual ones, then the school's own lines."""
    own = PartnerSettings.of(school_id).safeguarding_actions.splitlines()
    usual = [str(action) for action in DEFAULT_ACTIONS]
    extra = [line.strip()[:ACTION_MAX_LENGTH] for line in own if line.strip()]
    return list(dict.fromkeys([*usual, *extra]))


def _note_field(label: str, *, required: bool = False) -> forms.CharField:
    return forms.CharField(
        label=label,
        required=required,
        max_length=TEXT_MAX_LENGTH,
        widget=forms.Textarea(attrs={"rows": 4}),
    )


class ActionForm(forms.Form):
    """An action taken on a concern, with an optional note (a later action on the same alert)."""

    action = forms.ChoiceField(
        label=gettext_lazy("What was done"),
        error_messages={"required": gettext_lazy("Choose what was done.")},
    )
    note = _note_field(gettext_lazy("Note (optional)"))

    def __init__(self, *args, school_id: int, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["action"].choices = [
            ("", gettext("Choose an action")),
            *[(action, action) for action in actions_offered(school_id)],
        ]


class AcknowledgeForm(ActionForm):
    """Taking an alert on: what was done, the concern's category, a note.

    A test alert only checks that emails reach a new lead, about no child: it asks nothing.
    """

    category = forms.ChoiceField(
        label=gettext_lazy("Category of concern"),
        choices=[("", gettext_lazy("Choose a category")), *Alert.Category.choices],
        error_messages={"required": gettext_lazy("Choose the category of concern.")},
    )
    field_order = ["action", "category", "note"]

    def __init__(self, *args, alert: Alert, **kwargs):
        super().__init__(*args, school_id=alert.school_id, **kwargs)
        if alert.kind == Alert.Kind.TEST:
            self.fields.clear()


class NoteForm(forms.Form):
    """A lead's own note on the chronology, or the amended words of their entry."""

    text = _note_field(gettext_lazy("Note"), required=True)
    text.error_messages["required"] = gettext_lazy("Write the note.")


class CorrectionForm(forms.Form):
    """A correction: a new entry that says what was wrong in an earlier one."""

    text = _note_field(gettext_lazy("The correction"), required=True)
    text.error_messages["required"] = gettext_lazy("Write what the correction is.")
