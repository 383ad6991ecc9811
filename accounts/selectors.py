"""Reads of staff accounts that several pages share."""

from django.contrib.auth import get_user_model
from django.db.models import Q, QuerySet

from accounts.access import STAFF_GROUP
from accounts.models import TRUST_ROLES


def staff_accounts(
    *, include_inactive: bool = False, school_ids: list[int] | None = None
) -> QuerySet:
    """Return the staff accounts (never a learner's) by name; only those who can sign in.

    With `school_ids`, only those holding a role in one of those schools, and the trust's.
    """
    accounts = get_user_model().objects.filter(
        Q(staff_profile__isnull=False) | Q(groups__name=STAFF_GROUP) | Q(is_superuser=True),
        learner__isnull=True,
    )
    if school_ids is not None:
        accounts = accounts.filter(
            Q(school_roles__school_id__in=school_ids)
            | Q(staff_profile__role__in=TRUST_ROLES)
            | Q(is_superuser=True)
        )
    if not include_inactive:
        accounts = accounts.filter(is_active=True)
    return accounts.distinct().order_by("last_name", "first_name", "username")
