"""Small-group protection: no figure on the dashboard lets a reader single out a learner.

Figures about how learners did (risk levels; needs help, overall or per class) are protected.
Operational figures (learners registered, learners assessed, assessments in progress,
assessments waiting to be delivered; per class, its learners and those assessed) say how the
work stands, not how anyone did: every member of staff who sees them also sees, learner by
learner, each counted learner's latest assessment (the learner list; a teacher's class page
lists each pupil's "Completed"), so withholding them hid nothing and only contradicted those
pages. They are shown exactly (`exact`). Since the total of the risk levels (learners assessed)
is then exact, while fewer learners than DASHBOARD_MIN_GROUP_SIZE are assessed no breakdown of
their results is shown at all (a lone "fewer than 5" row beside "3 assessed" says all 3), and a
class's count needing help is "not shown" while it or those not needing it are a small group,
or while subtracting other figures on the page would leave one (dashboard.overlaps,
dashboard.level_parts). (The trust's figures,
trust.py, keep learners assessed protected: a trust viewer sees no learner one by one.) Two
rules, applied to every protected count before it reaches a table, a chart or a file:

1. Primary: a count from 1 to DASHBOARD_MIN_GROUP_SIZE - 1 is shown as "fewer than N"
   (0 is shown as 0: an empty group names nobody).
2. Complementary: where parts are shown beside their total (the risk levels add up to the
   learners assessed), a single withheld part could be worked out by subtraction, and so
   could two small ones whose sum is small. So while the withheld parts number one, or add
   up to fewer than N, the smallest part still shown is withheld too, as "not shown". The
   reader then learns only that the withheld parts together hold at least N learners.
"""

from django.utils.translation import gettext, ngettext

from kit.charts import Figure
from kit.numbers import number_text


def fewer_than(min_size: int) -> str:
    # Translators: a count withheld so that no learner can be singled out, e.g. "fewer than 5".
    return ngettext("fewer than %(count)s", "fewer than %(count)s", min_size) % {
        "count": number_text(min_size)
    }


def not_shown() -> str:
    # Translators: a count withheld so that a small group cannot be worked out by subtraction.
    return gettext("not shown")


def _shown(count: int) -> str:
    return number_text(count)  # the locale's digit grouping: 1,234 in English


def exact(label: str, count: int, *, url: str = "") -> Figure:
    """Return an operational count as a Figure, shown exactly however small."""
    return Figure(label, count, _shown(count), url)


def protect(label: str, count: int, *, min_size: int, url: str = "") -> Figure:
    """Return one count as a Figure, withheld when it is a small group."""
    if 0 < count < min_size:
        return Figure(label, None, fewer_than(min_size), url)
    return Figure(label, count, _shown(count), url)


def withheld(label: str, *, url: str = "") -> Figure:
    """Return a count withheld whatever it is, as "not shown"."""
    return Figure(label, None, not_shown(), url)


def protect_parts(
    parts: list[tuple[str, int]], *, min_size: int, urls: dict[str, str] | None = None
) -> list[Figure]:
    """Return the parts of a shown total, withholding small ones and their complements."""
    urls = urls or {}
    small = {i for i, (_, count) in enumerate(parts) if 0 < count < min_size}
    withheld = set(small)

    def withheld_sum() -> int:
        return sum(parts[i][1] for i in withheld)

    while withheld and (len(withheld) == 1 or withheld_sum() < min_size):
        candidates = [i for i, (_, count) in enumerate(parts) if count > 0 and i not in withheld]
        if not candidates:
            break
        withheld.add(min(candidates, key=lambda i: (parts[i][1], i)))

    figures = []
    for i, (label, count) in enumerate(parts):
        if i in small:
            figures.append(Figure(label, None, fewer_than(min_size), urls.get(label, "")))
        elif i in withheld:
            figures.append(Figure(label, None, not_shown(), urls.get(label, "")))
        else:
            figures.append(Figure(label, count, _shown(count), urls.get(label, "")))
    return figures
