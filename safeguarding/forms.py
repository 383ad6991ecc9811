"""Safeguarding forms: a learner's request to talk, and the leads' record of what was done."""

from django import forms
from django.utils.translation import gettext, gettext_lazy

from assessments.child_words import PRIMARY, wording_for
from safeguarding.models import Alert, ChronologyEntry
from schools.models import PartnerSettings

About = Alert.About

# What a request can be about, as the pupil reads it: (a primary pupil's, an older learner's).
# Staff read the model's own labels (Alert.About).
ABOUT_WORDS = {
    About.FEELINGS: (gettext_lazy("How I feel"), gettext_lazy("How I'm feeling")),
    About.FRIENDS: (gettext_lazy("Friends"), gettext_lazy("Friends or other people")),
    About.HOME: (gettext_lazy("Home"), gettext_lazy("Home or family")),
    About.SCHOOL: (gettext_lazy("School work"), gettext_lazy("School work or lessons")),
    About.ONLINE: (gettext_lazy("Being online"), gettext_lazy("Something online")),
    About.HEALTH: (gettext_lazy("My body"), gettext_lazy("My health or body")),
    About.IN_PERSON: (
        gettext_lazy("I'd rather say it to a grown-up"),
        gettext_lazy("I'd rather say in person"),
    ),
}
ANYONE = (gettext_lazy("Any grown-up at school"), gettext_lazy("Any adult at school"))


class TalkForm(forms.Form):
    """What a pupil may say when they ask: what about, whom they want, and if they feel unsafe."""

    about = forms.ChoiceField(required=False, widget=forms.RadioSelect)
    contact = forms.ChoiceField(required=False, widget=forms.RadioSelect)
    unsafe = forms.BooleanField(
        required=False, widget=forms.CheckboxInput(attrs={"aria-describedby": "unsafe-hint"})
    )

    def __init__(self, *args, level: str | None, contacts: tuple[str, ...], **kwargs) -> None:
        super().__init__(*args, **kwargs)
        young = wording_for(level) == PRIMARY
        pick = 0 if young else 1
        self.primary = young
        about = [(value, words[pick]) for value, words in ABOUT_WORDS.items()]
        self.fields["about"].choices = about
        # The value is the name as shown: that is what the lead reads (Alert.wanted_contact).
        offered = [*contacts, str(ANYONE[pick])]
        self.fields["contact"].choices = [(name, name) for name in dict.fromkeys(offered)]
        # A name no longer offered (a class's contact changed while the page was open) or a
        # forged one: said plainly, and the other choices stay as they were.
        for name in ("about", "contact"):
            self.fields[name].error_messages["invalid_choice"] = (
                gettext_lazy("Please pick one from the list, or leave it empty.")
                if young
                else gettext_lazy("Choose one from the list, or leave it empty.")
            )


# What a lead most often did about a concern (the demo's acknowledgements say it too).
SPOKE_WITH_THE_PUPIL = gettext_lazy("Spoke with the pupil")
# The portal's usual actions, offered before the school's own (PartnerSettings). The first is
# for a lead taking a concern on before anything could be done yet.
DEFAULT_ACTIONS = (
    gettext_lazy("Will speak with the pupil"),
    SPOKE_WITH_THE_PUPIL,
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

    A test alert only checks that emails reach a new lead, about no child: it asks nothing;
    nor does a concern whose learner was erased (no chronology is left to write in).
    """

    category = forms.ChoiceField(
        label=gettext_lazy("Category of concern"),
        choices=[("", gettext_lazy("Choose a category")), *Alert.Category.choices],
        error_messages={"required": gettext_lazy("Choose the category of concern.")},
    )
    field_order = ["action", "category", "note"]

    def __init__(self, *args, alert: Alert, **kwargs):
        super().__init__(*args, school_id=alert.school_id, **kwargs)
        if alert.kind == Alert.Kind.TEST or alert.learner_id is None:
            self.fields.clear()


class NoteForm(forms.Form):
    """A lead's own note on the chronology, or the amended words of their entry."""

    text = _note_field(gettext_lazy("Note"), required=True)
    text.error_messages["required"] = gettext_lazy("Write the note.")


class CorrectionForm(forms.Form):
    """A correction: a new entry that says what was wrong in an earlier one."""

    text = _note_field(gettext_lazy("The correction"), required=True)
    text.error_messages["required"] = gettext_lazy("Write what the correction is.")
