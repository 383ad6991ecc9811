"""The learner's "I want to talk to someone" form: every choice optional, worded for their age."""

from django import forms
from django.utils.translation import gettext_lazy

from assessments.child_words import PRIMARY, wording_for
from safeguarding.models import Alert

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
