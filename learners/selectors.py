"""Reads of learners shared by staff pages."""

from datetime import datetime, timedelta

from django.contrib.auth import get_user_model
from django.db.models import Q, QuerySet, Value
from django.db.models.functions import Concat
from django.utils import timezone

from assessments.selectors import with_latest_attempt
from learners.models import Learner
from portal.models import SignInLock
from portal.usernames import username_normal_form

# Matches the partial indexes on Learner (learner_active_name_idx and its level variant).
LEARNER_LIST_ORDER = ("last_name", "first_name", "username")
# The shortest word the trigram indexes of the search can find (learners migration 0004).
TRIGRAM = 3


def learner_list(*, query: str = "", level: str = "") -> QuerySet[Learner]:
    """Return registered learners matching a search and level, with their latest attempt."""
    return with_latest_attempt(learner_matching(query=query, level=level))


def learner_matching(*, query: str = "", level: str = "") -> QuerySet[Learner]:
    """Return registered learners matching a search and level, in list order, nothing joined."""
    learners = Learner.objects.filter(status=Learner.Status.ACTIVE)
    for word in query.split()[:5]:
        # Every word must match somewhere, so "Amira Khan" finds Amira Khan.
        learners = learners.filter(
            Q(username__icontains=word)
            | Q(first_name__icontains=word)
            | Q(last_name__icontains=word)
            | Q(email__icontains=word)
        )
    if level:
        learners = learners.filter(level=level)
    if any(len(word) >= TRIGRAM for word in query.split()[:5]):
        # PostgreSQL would walk the name index and filter, expecting matches spread evenly;
        # "Khan" sits mid-alphabet, so it read 40,000 rows first (107 ms). An order the index
        # cannot give makes it take the matches from the trigram indexes and sort them. Words
        # too short for a trigram match densely: walking the index finds a page at once.
        return learners.order_by(Concat("last_name", Value("")), *LEARNER_LIST_ORDER[1:])
    return learners.order_by(*LEARNER_LIST_ORDER)


def learner_rows(learners: QuerySet[Learner]) -> QuerySet[Learner]:
    """Return a slice of `learner_matching` (a page) with each learner's latest attempt."""
    # The latest-attempt subqueries run for the page's rows only: over the whole list, a deep
    # page would run them for every row it skips (page 2000 took 900 ms at 100,000 learners).
    page = Learner.objects.filter(pk__in=learners.values("pk"))
    return with_latest_attempt(page).order_by(*LEARNER_LIST_ORDER)


# A registration still pending after this long was cut off (the process died mid-call).
PENDING_REGISTRATION_STALE_AFTER = timedelta(minutes=10)


def stale_pending_registrations(username: str) -> QuerySet[Learner]:
    """Return pending registrations of this username left behind by a dead process."""
    cutoff = timezone.now() - PENDING_REGISTRATION_STALE_AFTER
    return Learner.objects.filter(
        username=username_normal_form(username),
        status=Learner.Status.PENDING,
        registered_at__lt=cutoff,
    )


def username_taken(username: str) -> bool:
    """Return whether a sign-in account already uses this username's normal form."""
    # Stored usernames are in normal form (learners migration 0008), so an exact match finds
    # "ÉMILE" beside "émile" on every database, where iexact folds only ASCII on SQLite.
    stale = stale_pending_registrations(username).values("user_id")
    return (
        get_user_model()
        .objects.filter(username=username_normal_form(username))
        .exclude(pk__in=stale)
        .exists()
    )


def sign_in_locked_until(learner: Learner) -> datetime | None:
    """Return when the last lock on the learner's sign-in ends, if one is in force."""
    locks = SignInLock.objects.current().filter(user_id=learner.user_id)
    return locks.order_by("-locked_until").values_list("locked_until", flat=True).first()
