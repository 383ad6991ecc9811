"""Rows of figures over overlapping groups: no difference of shown rows singles a learner out.

A class's "needing help" is shown beside its exact count assessed, so where one shown row's
learners lie inside another's (a form class inside its year group, a class inside the school),
the difference of the two rows is a group of its own whose figures anyone can work out. That
group, like any row, must show no small count: neither needing help nor not needing it may
be 1 to DASHBOARD_MIN_GROUP_SIZE - 1. The same holds for the learners left over once several
non-overlapping rows inside one row are taken away (7A and 7B out of Y7).
"""

from collections.abc import Hashable, Iterator
from typing import TypeVar

K = TypeVar("K", bound=Hashable)

# Families of non-overlapping rows tried inside each row; classes inside one another rarely
# number more than a dozen, for which this is every family.
MOST_FAMILIES = 2000


def pair_passes(needing: int, not_needing: int, *, min_size: int) -> bool:
    """Return whether neither count singles a learner out (each is 0 or at least min_size)."""
    return all(n == 0 or n >= min_size for n in (needing, not_needing))


def group_passes(learners: frozenset[int], helped: frozenset[int], *, min_size: int) -> bool:
    """Return whether a group's needing help and not needing help may both be known."""
    needing = len(learners & helped)
    return pair_passes(needing, len(learners) - needing, min_size=min_size)


def withhold_overlaps(
    assessed: dict[K, frozenset[int]],
    helped: frozenset[int],
    *,
    shown: set[K],
    fixed: frozenset[K] = frozenset(),
    min_size: int,
) -> set[K]:
    """Return the shown rows to withhold as well, so no difference gives a small group away.

    `assessed` holds each row's learners assessed; `fixed` rows (the page's own total) are
    shown whatever happens, so a difference they make withholds a row inside them instead.
    Rows are withheld one at a time until no difference of shown rows is a small group.
    """
    still = set(shown)
    counts = {key: (len(learners), len(learners & helped)) for key, learners in assessed.items()}
    keys = [key for key, learners in assessed.items() if learners]
    apart = {(a, b) for a in keys for b in keys if a != b and not assessed[a] & assessed[b]}
    while (found := _revealing(assessed, counts, apart, still, fixed, min_size)) is not None:
        still.discard(found)
    return set(shown) - still


def _revealing(
    assessed: dict[K, frozenset[int]],
    counts: dict[K, tuple[int, int]],
    apart: set[tuple[K, K]],
    shown: set[K],
    fixed: frozenset[K],
    min_size: int,
) -> K | None:
    """Return a row whose withholding removes one small difference, or None if there is none."""
    # The fixed rows first: a row withheld inside them may leave a larger one free to show.
    outers = [key for key in assessed if key in fixed] + [key for key in assessed if key in shown]
    for outer in outers:
        whole = assessed[outer]
        inside = [key for key in assessed if key in shown and key != outer and assessed[key]]
        inside = [key for key in inside if assessed[key] < whole]
        size, needing = counts[outer]
        for family, taken, taken_needing in _families(inside, apart, counts):
            # Rows with no learner in common: the learners left are counted by subtraction.
            left, left_needing = size - taken, needing - taken_needing
            if not pair_passes(left_needing, left - left_needing, min_size=min_size):
                if outer not in fixed:
                    return outer
                # The total stays: withhold the smallest row taken from it instead.
                return min(family, key=lambda key: counts[key][0])
    return None


def _families(
    keys: list[K], apart: set[tuple[K, K]], counts: dict[K, tuple[int, int]]
) -> Iterator[tuple[list[K], int, int]]:
    """Yield families of rows with no learner in common, with their learners and needing help.

    At most MOST_FAMILIES of them, tried depth first.
    """
    tried = 0

    def walk(start: int, family: list[K], size: int, needing: int):
        nonlocal tried
        for index in range(start, len(keys)):
            if tried >= MOST_FAMILIES:
                return
            key = keys[index]
            if any((key, member) not in apart for member in family):
                continue
            tried += 1
            grown = [*family, key]
            grown_size, grown_needing = size + counts[key][0], needing + counts[key][1]
            yield grown, grown_size, grown_needing
            yield from walk(index + 1, grown, grown_size, grown_needing)

    yield from walk(0, [], 0, 0)
