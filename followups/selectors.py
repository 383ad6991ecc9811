"""Reads of follow-ups shared by the queue, the item page and the learner's page."""

from datetime import date

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.db import connection
from django.db.models import Prefetch, Q, QuerySet
from django.utils import timezone

from accounts.access import PASTORAL_ROLES, STAFF_GROUP
from accounts.models import StaffRole
from assessments.models import risk_rank
from classes.filters import group_learner_ids, prefetch_current_groups
from classes.models import SchoolGroup
from followups.models import OPEN as OPEN_ITEMS
from followups.models import FollowUp, FollowUpArea
from learners.models import Learner
from schools.context import working_school_id
from schools.models import PartnerSettings, first_school_id

ASSIGNED_TO_ME = "me"
UNASSIGNED = "none"
OPEN = "open"
ALL = "all"

# Priority items (a safeguarding alert went out) come first whatever the sort.
SORTS = {
    "due": ["-priority", "due_date", "id"],
    "newest": ["-priority", "-created_at", "-id"],
    "risk": ["-priority", "-risk_rank", "risk_level", "due_date", "id"],
}


def staff_users(school_id: int | None = None) -> QuerySet:
    """Return the active staff who may be assigned an item: those whose role reads results.

    Those of the item's school (else the school worked in), and the trust's safeguarding leads.
    """
    school = school_id or working_school_id() or first_school_id()
    settings = PartnerSettings.of(school)
    roles = set(PASTORAL_ROLES)
    if settings.teachers_see_results:
        roles.add(StaffRole.TEACHER)
    if settings.admins_see_results:
        roles.add(StaffRole.ADMIN)
    reads_results = Q(school_roles__school_id=school, school_roles__role__in=roles) | Q(
        staff_profile__role=StaffRole.TRUST_SAFEGUARDING_LEAD
    )
    if settings.teachers_see_results:
        # A member of the staff group without a role counts as a teacher (accounts.access).
        reads_results |= Q(
            staff_profile__role="", school_roles__isnull=True, groups__name=STAFF_GROUP
        ) | Q(staff_profile__isnull=True, groups__name=STAFF_GROUP)
    if settings.admins_see_results:
        reads_results |= Q(staff_profile__role=StaffRole.TRUST_ADMIN) | Q(is_superuser=True)
    return (
        get_user_model()
        .objects.filter(reads_results, is_active=True, learner__isnull=True)
        .distinct()
        .order_by("username")
    )


def followup_queue(
    *,
    viewer: AbstractBaseUser,
    scope: QuerySet | None = None,
    school_ids: list[int] | None = None,
    status: str = OPEN,
    assignee: str = "",
    area: str = "",
    risk_level: str = "",
    level: str = "",
    overdue: bool = False,
    sort: str = "due",
    group: SchoolGroup | None = None,
    today: date | None = None,
) -> QuerySet[FollowUp]:
    """Return the items matching the queue's filters, with what each row shows loaded.

    `scope` (ids of learners) and `school_ids` (None: every school) limit the items to the
    learners the viewer sees (learners.access.group_scope).
    """
    today = today or timezone.localdate()
    # Erasing a learner deletes their items, so the queue need not join learners to filter.
    items = FollowUp.objects.all()
    if scope is not None:
        items = items.filter(learner_id__in=scope)
    if school_ids is not None:
        items = items.filter(school_id__in=school_ids)
    if status == OPEN:
        items = items.filter(OPEN_ITEMS)  # the very condition of the partial indexes
    elif status != ALL:
        items = items.filter(status=status)
    if assignee == ASSIGNED_TO_ME:
        items = items.filter(assignee=viewer)
    elif assignee == UNASSIGNED:
        items = items.filter(assignee__isnull=True)
    elif assignee:
        items = items.filter(assignee_id=assignee)
    if area:
        # One row per (item, area name): the join cannot duplicate an item.
        items = items.filter(areas__name=area)
    if risk_level:
        items = items.filter(risk_level=risk_level)
    if level:
        items = items.filter(learner__level=level)
    if overdue:
        items = items.filter(OPEN_ITEMS, due_date__lt=today)
    if group is not None:
        items = items.filter(learner_id__in=group_learner_ids(group))
    return (
        items.select_related("learner", "assignee")
        .prefetch_related(
            Prefetch("areas", queryset=FollowUpArea.objects.order_by("name")),
            prefetch_current_groups(through="learner__"),
        )
        .order_by(*SORTS.get(sort, SORTS["due"]))
    )


def followup_area_names() -> list[str]:
    """Return every focus area name that items carry, for the queue's filter."""
    return _distinct_values(FollowUpArea, "name")


def followup_risk_levels() -> list[str]:
    """Return every risk level that items carry, most severe first, for the queue's filter."""
    # A learner's own request carries no risk level: no empty choice for it.
    levels = [level for level in _distinct_values(FollowUp, "risk_level") if level]
    return sorted(levels, key=lambda r: (-risk_rank(r), r))


def _distinct_values(model, column: str) -> list[str]:
    """Return a column's distinct values by hopping along the index that leads with it."""
    # SELECT DISTINCT reads every row (70,000 items, 200,000 areas at scale); this reads one
    # index entry per distinct value, and there are a handful.
    table = connection.ops.quote_name(model._meta.db_table)
    name = connection.ops.quote_name(model._meta.get_field(column).column)
    sql = f"""
        WITH RECURSIVE found(value) AS (
            SELECT MIN({name}) FROM {table}
            UNION ALL
            SELECT (SELECT MIN({name}) FROM {table} WHERE {name} > found.value)
            FROM found WHERE found.value IS NOT NULL
        )
        SELECT value FROM found WHERE value IS NOT NULL
    """  # noqa: S608 (table and column names come from the model, never from input)
    with connection.cursor() as cursor:
        cursor.execute(sql)
        return [row[0] for row in cursor.fetchall()]


def followup_detail(pk: int, *, scope: QuerySet | None = None) -> FollowUp | None:
    """Return one item of an active learner in scope with its areas, notes and people, or None."""
    items = FollowUp.objects.filter(pk=pk, learner__status=Learner.Status.ACTIVE)
    if scope is not None:
        items = items.filter(learner_id__in=scope)
    return (
        items.select_related("learner", "attempt", "assignee")
        .defer("attempt__content")  # the questions: tens of kilobytes the page never shows
        .prefetch_related("areas", "notes")
        .first()
    )


def learner_open_followups(learner: Learner) -> list[FollowUp]:
    """Return a learner's open items, soonest due first, with their areas."""
    return list(
        learner.follow_ups.filter(OPEN_ITEMS)
        .select_related("assignee")
        .prefetch_related("areas")
        .order_by("-priority", "due_date", "id")
    )
