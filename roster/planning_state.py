"""What the portal holds that a sync's plan compares against, read in a few set-wise queries.

Nothing here writes: a school without a settings row gets the defaults, unsaved.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import date, datetime

from django.contrib.auth import get_user_model
from django.db.models import Q

from accounts.models import TRUST_ROLES
from accounts.selectors import staff_accounts
from classes.models import GroupMembership, GroupStaff, SchoolGroup
from imports.models import ImportRow
from learners.models import Learner
from roster.models import RosterClass, RosterPerson
from schools.models import PartnerSettings

# Ids per `__in` query: within SQLite's oldest limit of 999 variables.
CHUNK = 900

LEARNER_FIELDS = (
    "id",
    "username",
    "first_name",
    "last_name",
    "email",
    "dob",
    "level",
    "status",
    "left_at",
    "school_id",
)


def chunked(values: Iterable, size: int = CHUNK) -> Iterator[list]:
    """Yield the values in lists of at most `size`."""
    batch = []
    for value in values:
        batch.append(value)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


@dataclass(slots=True)
class LearnerNow:
    id: int
    username: str
    first_name: str
    last_name: str
    email: str
    dob: date | None
    level: str
    status: str
    left_at: datetime | None
    school_id: int

    @property
    def name(self) -> str:
        return f"{self.first_name} {self.last_name}".strip() or self.username

    @property
    def current(self) -> bool:
        """Return whether the learner is registered and has not left."""
        return self.status == Learner.Status.ACTIVE and self.left_at is None


@dataclass(slots=True)
class LinkNow:
    """A RosterPerson: which learner or staff account a roster person is."""

    sourced_id: str
    school_id: int
    role: str
    learner_id: int | None
    user_id: int | None
    import_state: str  # "" without an import row
    import_learner_id: int | None
    last_modified: datetime | None


@dataclass(slots=True)
class GroupNow:
    """A roster group (RosterClass) not archived."""

    id: int
    sourced_id: str
    school_id: int
    name: str
    kind: str
    level: str
    academic_year: str
    last_modified: datetime | None


@dataclass(slots=True)
class AccountNow:
    """A sign-in account with a username a pupil of the files wants."""

    user_id: int
    learner: LearnerNow | None
    linked_sourced_id: str  # the learner's RosterPerson, if any


@dataclass
class PortalState:
    settings: dict[int, PartnerSettings] = field(default_factory=dict)
    # By (school id, sourcedId): a sourcedId is unique in its school only.
    links: dict[tuple[int, str], LinkNow] = field(default_factory=dict)
    learners: dict[int, LearnerNow] = field(default_factory=dict)
    groups: dict[tuple[int, str], GroupNow] = field(default_factory=dict)  # (school, sourcedId)
    # Current memberships of roster groups (not archived): learner id -> group ids.
    members: dict[int, set[int]] = field(default_factory=lambda: defaultdict(set))
    teaching: dict[int, set[int]] = field(default_factory=lambda: defaultdict(set))
    # Groups staff made by hand: (school id, academic year) -> case-folded names.
    hand_names: dict[tuple[int, str], set[str]] = field(default_factory=lambda: defaultdict(set))
    # Active staff accounts by case-folded email, and every active staff account's id.
    staff_by_email: dict[str, list[int]] = field(default_factory=lambda: defaultdict(list))
    active_staff: set[int] = field(default_factory=set)
    # Who may see a school's classes: (user id, school id) of a role there, (user id, None)
    # of a trust role or superuser (every school).
    roles: set[tuple[int, int | None]] = field(default_factory=set)
    # The files' schools (id -> name), those the sync leaves out too: one upstream, so a
    # sourcedId linked in one of them is the same pupil.
    file_schools: dict[int, str] = field(default_factory=dict)

    def has_role(self, user_id: int, school_id: int) -> bool:
        """Return whether the account holds a role in the school, or one above every school."""
        return (user_id, school_id) in self.roles or (user_id, None) in self.roles

    def group_sourced_ids(self) -> dict[int, str]:
        return {group.id: group.sourced_id for group in self.groups.values()}


def portal_state_load(
    school_ids: list[int], *, others: dict[int, str] | None = None, pupils: Iterable[str] = ()
) -> PortalState:
    """Read the schools' settings, roster links, learners, roster groups and their members.

    `others`: the files' schools the sync leaves out; the links of `pupils` there are read too.
    """
    state = PortalState()
    found = {row.school_id: row for row in PartnerSettings.objects.filter(school_id__in=school_ids)}
    state.settings = {pk: found.get(pk) or PartnerSettings(school_id=pk) for pk in school_ids}
    _links_load(state, school_ids, sorted(others or {}), pupils)
    groups = RosterClass.objects.filter(school_id__in=school_ids, group__archived_at__isnull=True)
    for row in groups.values_list(
        "group_id",
        "sourced_id",
        "school_id",
        "group__name",
        "group__kind",
        "group__level",
        "group__academic_year",
        "last_modified",
    ):
        state.groups[(row[2], row[1])] = GroupNow(*row)
    managed = {
        "group__roster_class__school_id__in": school_ids,
        "group__archived_at__isnull": True,
    }
    memberships = GroupMembership.objects.filter(left_at__isnull=True, **managed)
    for learner_id, group_id in memberships.values_list("learner_id", "group_id"):
        state.members[learner_id].add(group_id)
    for user_id, group_id in GroupStaff.objects.filter(**managed).values_list(
        "user_id", "group_id"
    ):
        state.teaching[user_id].add(group_id)
    hand = SchoolGroup.objects.filter(school_id__in=school_ids, roster_class__isnull=True)
    for school_id, year, name in hand.values_list("school_id", "academic_year", "name"):
        state.hand_names[(school_id, year)].add(name.casefold())
    for user_id, email in staff_accounts().values_list("id", "email"):
        state.active_staff.add(user_id)
        if email:
            state.staff_by_email[email.casefold()].append(user_id)
    roles = get_user_model().objects.filter(
        Q(school_roles__school_id__in=school_ids)
        | Q(staff_profile__role__in=TRUST_ROLES)
        | Q(is_superuser=True)
    )
    for user_id, school_id, trust_role, superuser in roles.values_list(
        "id", "school_roles__school_id", "staff_profile__role", "is_superuser"
    ):
        above = superuser or trust_role in TRUST_ROLES
        state.roles.add((user_id, None if above else school_id))
    return state


def _links_load(
    state: PortalState, school_ids: list[int], others: list[int], pupils: Iterable[str]
) -> None:
    """Read the schools' RosterPeople, and the pupils' in the files' other schools.

    A school outside the files has sourcedIds of its own: its links are never read.
    """
    columns = (
        "sourced_id",
        "school_id",
        "role",
        "learner_id",
        "user_id",
        "import_row__state",
        "import_row__learner_id",
        "last_modified",
        *(f"learner__{name}" for name in LEARNER_FIELDS[1:]),
    )

    def take(rows) -> None:
        for row in rows:
            link = LinkNow(*row[:5], row[5] or "", *row[6:8])
            state.links[(link.school_id, link.sourced_id)] = link
            if link.learner_id is not None:
                state.learners[link.learner_id] = LearnerNow(link.learner_id, *row[8:])

    take(RosterPerson.objects.filter(school_id__in=school_ids).values_list(*columns))
    if others:
        elsewhere = RosterPerson.objects.filter(
            school_id__in=others, role=RosterPerson.Role.STUDENT
        )
        for batch in chunked(sorted(set(pupils))):
            take(elsewhere.filter(sourced_id__in=batch).values_list(*columns))
    registered = {
        link.import_learner_id
        for link in state.links.values()
        if link.learner_id is None and link.import_state == ImportRow.State.REGISTERED
    } - {None}
    for batch in chunked(registered):
        for row in Learner.objects.filter(pk__in=batch).values_list(*LEARNER_FIELDS):
            state.learners[row[0]] = LearnerNow(*row)


def accounts_by_username(usernames: Iterable[str]) -> dict[str, AccountNow]:
    """Return the sign-in accounts holding these usernames (stored in normal form)."""
    found = {}
    columns = (
        "id",
        "username",
        "learner__roster_person__sourced_id",
        *(f"learner__{name}" for name in LEARNER_FIELDS),
    )
    for batch in chunked(sorted(set(usernames))):
        rows = get_user_model().objects.filter(username__in=batch).values_list(*columns)
        for user_id, username, linked, *learner in rows:
            now = LearnerNow(*learner) if learner[0] is not None else None
            found[username] = AccountNow(user_id, now, linked or "")
    return found


def usernames_taken(usernames: Iterable[str]) -> set[str]:
    """Return which of the usernames a sign-in account already has."""
    taken = set()
    for batch in chunked(sorted(set(usernames))):
        rows = get_user_model().objects.filter(username__in=batch).values_list("username")
        taken.update(name for (name,) in rows)
    return taken
