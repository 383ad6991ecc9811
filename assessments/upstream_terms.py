"""Staff words for the upstream's codes (an offer's status, its target group)."""

import re

from django.utils.translation import gettext_lazy as _

# The values the spec's examples and the sandbox send. The spec lists no allowed values, so any
# other is shown as it came: humanised when it is a code, word for word when it is already text.
KNOWN_TERMS = {
    "AVAILABLE": _("Available"),
    "NO_ASSESSMENT_AVAILABLE": _("None available"),
    "SUBMITTED": _("Sent"),
    "PRIMARY": _("Primary"),
    "SECONDARY": _("Secondary"),
    "FURTHER_EDUCATION": _("Further education"),
}

CODE = re.compile(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*")


def upstream_term(value: str) -> str:
    """Return the staff word for an upstream code; an unknown code in sentence case."""
    known = KNOWN_TERMS.get(value.strip().upper())
    if known is not None:
        return str(known)
    if CODE.fullmatch(value):
        words = value.replace("_", " ").lower()
        return words[:1].upper() + words[1:]
    return value
