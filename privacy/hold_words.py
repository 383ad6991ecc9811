"""The sentences that say why a learner's records are held, one for each case (hold_of)."""

from django.utils.formats import date_format
from django.utils.translation import gettext, ngettext

from privacy.selectors import Hold


def automatic_hold_sentence(hold: Hold, *, show_why: bool, years: int) -> str:
    """Return the one sentence saying until when an alert or open follow-up holds the records.

    Why (an alert, a follow-up) only if `show_why`: a partner admin who does not read results
    must not learn from it that a child worried someone, or that their results needed help.
    """
    if hold.safeguarding:
        if hold.birthday_25 is None:
            if show_why:
                return gettext(
                    "Held until their 25th birthday (their date of birth is not known), "
                    "because a safeguarding alert was raised about them."
                )
            return gettext(
                "Held until their 25th birthday (their date of birth is not known), "
                "because of a safeguarding matter."
            )
        until = date_format(hold.birthday_25, "DATE_FORMAT")
        if show_why:
            return gettext(
                "Held until %(until)s, their 25th birthday, because a safeguarding alert was "
                "raised about them."
            ) % {"until": until}
        return gettext(
            "Held until %(until)s, their 25th birthday, because of a safeguarding matter."
        ) % {"until": until}
    if show_why:
        return ngettext(
            "Held while a follow-up about them is open; then kept for %(years)s year after it "
            "is resolved.",
            "Held while a follow-up about them is open; then kept for %(years)s years after it "
            "is resolved.",
            years,
        ) % {"years": years}
    return ngettext(
        "Held while staff are following something up about them; then kept for %(years)s year "
        "after that.",
        "Held while staff are following something up about them; then kept for %(years)s "
        "years after that.",
        years,
    ) % {"years": years}


def under_placed_hold_sentence(hold: Hold) -> str:
    """Return what would hold the records without staff's hold (shown to who reads results)."""
    if hold.safeguarding:
        if hold.birthday_25 is None:
            return gettext(
                "Without it, a safeguarding alert would hold them until their 25th birthday "
                "(their date of birth is not known)."
            )
        return gettext(
            "Without it, a safeguarding alert would hold them until %(until)s, their 25th birthday."
        ) % {"until": date_format(hold.birthday_25, "DATE_FORMAT")}
    if hold.open_follow_up:
        return gettext("Without it, a follow-up would hold them while it is open.")
    return ""
