"""Names people read on pages: none that reorders the text around it or shows nothing at all.

A bidirectional control (U+202A-U+202E, U+2066-U+2069, the marks U+200E, U+200F and U+061C)
makes a name show reversed, or reverses what follows it on a staff page; a name made only of
zero-width characters, fillers and spaces looks like no name at all. The zero-width joiners
stay allowed inside a real name: Persian, the Indic scripts and emoji need them.
"""

import unicodedata

from django.core.exceptions import ValidationError
from django.utils.translation import gettext_lazy

BIDI_CONTROLS = frozenset(
    "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c"
)
# Letters that draw nothing: Hangul fillers and the blank Braille pattern.
BLANK_LETTERS = frozenset("\u115f\u1160\u3164\uffa0\u2800")

BIDI_MESSAGE = gettext_lazy(
    "This name holds a hidden character that changes the direction of the text, so it could "
    "show reversed. Type the name again without it."
)
INVISIBLE_MESSAGE = gettext_lazy(
    "This name is made only of invisible characters. Type it in letters."
)


def validate_name(name: str) -> None:
    """Refuse a name with a bidi control, or made only of invisible characters."""
    if any(char in BIDI_CONTROLS for char in name):
        raise ValidationError(BIDI_MESSAGE, code="bidi_control")
    if name and all(_invisible(char) for char in name):
        raise ValidationError(INVISIBLE_MESSAGE, code="invisible")


def _invisible(char: str) -> bool:
    # Format characters (Cf: zero-width space and joiners, word joiner, BOM, soft hyphen),
    # controls and every kind of space.
    return (
        char.isspace()
        or char in BLANK_LETTERS
        or unicodedata.category(char) in ("Cf", "Cc", "Zs", "Zl", "Zp")
    )
