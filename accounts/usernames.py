"""The one normal form of a username, and the look-alike usernames the portal refuses.

A username is stored, sent upstream and looked up in its normal form: "ＪＯＨＮ", "John" and
"john" are one name, on SQLite and PostgreSQL alike (neither database folds case or width the
same way, so the comparison is never left to them). Registration, bulk registration and sign-in
all go through `username_normal_form`.
"""

import unicodedata

from django.utils.text import get_text_list
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

# The longest username Django's User and the Learner record hold.
USERNAME_MAX_LENGTH = 150

# Scripts whose letters look alike ("а" Cyrillic, "a" Latin, "α" Greek): a name mixing them is
# a name made to pass for another.
LOOK_ALIKE_SCRIPTS = {
    "LATIN": gettext_lazy("Latin"),
    "CYRILLIC": gettext_lazy("Cyrillic"),
    "GREEK": gettext_lazy("Greek"),
}


def username_normal_form(raw: str) -> str:
    """Return the username as stored and compared: NFKC, case-folded, NFKC again, stripped."""
    # Case folding can leave a name decomposed ("ΐ" folds to three code points, which NFKC
    # composes back into one), hence the second pass; a full-width space becomes a space only
    # in NFKC, hence the strip last.
    folded = unicodedata.normalize("NFKC", raw).casefold()
    return unicodedata.normalize("NFKC", folded).strip()


def username_problem(normal: str) -> str | None:
    """Say why a username in normal form is refused (letters of look-alike scripts), or None."""
    found = {
        unicodedata.name(character, "").split(" ", 1)[0]
        for character in normal
        if character.isalpha()
    }
    # Named in a fixed order, so one name always gets the same message.
    names = [str(name) for script, name in LOOK_ALIKE_SCRIPTS.items() if script in found]
    if len(names) < 2:
        return None
    # Translators: %(scripts)s names two or three alphabets, e.g. "Latin and Cyrillic".
    return _(
        "Use letters from one alphabet only: this username mixes %(scripts)s letters that look "
        "alike."
    ) % {"scripts": get_text_list(names, _("and"))}
