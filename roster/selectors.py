"""Reads for the roster pages: which syncs an admin sees, and a sync's preview as lists."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Q, QuerySet
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from accounts.access import is_trust_admin, working_school
from classes.models import SchoolGroup
from imports.models import ImportJob
from learners.models import Level
from roster.models import RosterClass, RosterPerson, RosterSync
from roster.plan import SchoolPlan, StaffMember, SyncPlan
from schools.models import several_schools

# A preview's list shows this many names; the result file has every one.
NAMES_SHOWN = 50
PROBLEMS_SHOWN = 100


def roster_syncs_visible(user: AbstractBaseUser) -> QuerySet[RosterSync]:
    """Return the syncs the admin sees: their school's, and those of several touching it.

    A trust admin also sees every sync of several schools (planned or not). With one school
    in the deployment every sync is the school's.
    """
    syncs = RosterSync.objects.select_related("school", "created_by")
    if not several_schools():
        return syncs
    school = working_school(user)
    trust_admin = is_trust_admin(user)
    if school is None:  # a trust admin's "All schools"
        return syncs if trust_admin else syncs.none()
    mine = Q(school_id=school) | Q(
        school__isnull=True, pk__in=RosterSync.schools.through.objects.filter(school_id=school)
        .values("rostersync_id")
    )  # fmt: skip
    if trust_admin:
        mine |= Q(school__isnull=True)
    return syncs.filter(mine)


def sync_part_school(sync: RosterSync, user: AbstractBaseUser) -> int | None:
    """Return the school whose part of a sync of several the admin is limited to; None: all.

    A school admin reads only their school's part of a sync that touches other schools too.
    """
    if sync.school_id is not None or not several_schools() or is_trust_admin(user):
        return None
    school = working_school(user)
    touched = {found.pk for found in sync.schools.all()}  # the list prefetches them
    return None if touched <= {school} else school


def sync_decidable(sync: RosterSync, user: AbstractBaseUser) -> bool:
    """Return whether the admin may approve or discard the sync: not a school admin's part."""
    return sync_part_school(sync, user) is None


def plan_part(sync: RosterSync, plan: SyncPlan, school_id: int | None) -> SyncPlan:
    """Return the plan limited to one school: its part, its rows' problems and whole files'.

    Problems of the file as a whole (the manifest, a header) concern every school of the
    sync; a row whose school is unknown (the reader could not use it) is for trust admins
    only. A plan kept before problems named their school: those of its rows the school knows.
    """
    if school_id is None:
        return plan
    part = [school for school in plan.schools if school.school_id == school_id]
    if plan.problem_schools:
        return SyncPlan(
            schools=part,
            problems=plan.problems_of(school_id),
            hold_reasons=list(plan.hold_reasons),
        )
    known = set(
        RosterPerson.objects.filter(school_id=school_id).values_list("sourced_id", flat=True)
    ) | set(RosterClass.objects.filter(school_id=school_id).values_list("sourced_id", flat=True))
    return SyncPlan(
        schools=part,
        problems=[p for p in plan.problems if p.sourced_id and p.sourced_id in known],
        hold_reasons=list(plan.hold_reasons),
    )


def sync_figures(sync: RosterSync, school_id: int | None) -> dict[str, int]:
    """Return the sync's counts, or those of one school's part of it."""
    if school_id is None:
        return {"joined": sync.joined, "left": sync.left, "changed": sync.changed,
                "problems": sync.problems}  # fmt: skip
    part = plan_part(sync, SyncPlan.from_json(sync.plan or {}), school_id)
    return {"joined": part.joined, "left": part.left, "changed": part.changed,
            "problems": len(part.problems)}  # fmt: skip


def sync_list_figures(sync: RosterSync, school_id: int | None) -> dict[str, int]:
    """Return the list's counts of a sync, or of one school's part as kept when planned."""
    kept = (sync.school_figures or {}).get(str(school_id)) if school_id is not None else None
    return kept if kept is not None else sync_figures(sync, school_id)


def sync_import_jobs(sync: RosterSync) -> QuerySet[ImportJob]:
    """Return the import jobs registering the sync's joiners, a school each, oldest first."""
    if sync.pk is None:
        return ImportJob.objects.none()
    return sync.import_jobs.select_related("school").order_by("pk")


@dataclass
class NamedList:
    """One list of a school's preview: its title, how many, and the first names of it."""

    key: str
    title: str
    count: int
    names: list[str] = field(default_factory=list)

    @property
    def more(self) -> int:
        return self.count - len(self.names)


def _level_name(code: str) -> str:
    return str(Level(code).label) if code in Level.values else code


def _kind_name(code: str) -> str:
    kinds = SchoolGroup.Kind
    return str(kinds(code).label) if code in kinds.values else code


# Translators: The details of a pupil a roster sync changes, listed after their name.
DETAIL_NAMES = {
    "first_name": gettext_lazy("first name"),
    "last_name": gettext_lazy("last name"),
    "email": gettext_lazy("email"),
    "dob": gettext_lazy("date of birth"),
}


def _detail_names(details: dict[str, str]) -> list[str]:
    return [str(DETAIL_NAMES.get(name, name)) for name in sorted(details)]


def _named(key: str, title: str, names: list[str]) -> NamedList:
    return NamedList(key=key, title=title, count=len(names), names=names[:NAMES_SHOWN])


def school_lists(school: SchoolPlan) -> list[NamedList]:
    """Return a school's preview lists, in the order the page shows their counts."""
    moving = [c for c in school.changes if c.classes_joined or c.groups_left]
    levelled = [c for c in school.changes if c.level_to]
    detailed = [c for c in school.changes if c.details]
    new_staff = [s for s in school.staff if s.user_id is None]
    linked = [s for s in school.staff if s.user_id is not None]
    return [
        _named(
            "joining",
            _("Joining"),
            [f"{j.first_name} {j.last_name} ({j.username})".strip() for j in school.joiners],
        ),
        _named("returning", _("Coming back"), [r.name for r in school.returners]),
        _named("leaving", _("Leaving"), [leaver.name for leaver in school.leavers]),
        _named("classes", _("Changing class"), [c.name for c in moving]),
        _named(
            "levels",
            _("Changing level"),
            [
                _("%(name)s: %(old)s to %(new)s")
                % {
                    "name": c.name,
                    "old": _level_name(c.level_from),
                    "new": _level_name(c.level_to),
                }
                for c in levelled
            ],
        ),
        _named(
            "details",
            _("Changing details"),
            [f"{c.name}: {', '.join(_detail_names(c.details))}" for c in detailed],
        ),
        _named(
            "new_classes",
            _("New classes"),
            [
                f"{c.name} ({_kind_name(c.kind)}, {_level_name(c.level)}, {c.academic_year})"
                for c in school.new_classes
            ],
        ),
        _named(
            "archived",
            _("Archived classes"),
            [f"{a.name} ({a.academic_year})" for a in school.archived],
        ),
        _named(
            "new_staff",
            _("New staff accounts"),
            [f"{s.first_name} {s.last_name} ({s.email or s.username})" for s in new_staff],
        ),
        _named(
            "linked_staff",
            _("Staff linked to their accounts"),
            [_staff_linked(s, school) for s in linked],
        ),
    ]


def _staff_linked(member: StaffMember, school: SchoolPlan) -> str:
    line = f"{member.first_name} {member.last_name} ({member.email or member.username})"
    if member.role_added:
        # Translators: A teacher of another school matched by email, now a teacher here too.
        line += ": " + _("teacher role added in %(school)s") % {"school": school.name}
    return line


def sync_hold_reasons(sync: RosterSync, plan: SyncPlan) -> list[str]:
    """Return why the sync is held: the sync's own sentences, else the plan's, each once."""
    reasons = list(sync.hold_reasons) or list(plan.hold_reasons)
    if not sync.hold_reasons:
        several = len(plan.schools) > 1
        for school in plan.schools:
            reasons += [f"{school.name}: {r}" if several else r for r in school.hold_reasons]
    return list(dict.fromkeys(reasons))


# Translators: What an entry of a roster sync's result file is (its "what" column).
WHAT = {
    "joiners": gettext_lazy("joining"),
    "returners": gettext_lazy("coming back"),
    "leavers": gettext_lazy("leaving"),
    "changes": gettext_lazy("changing"),
    "new_classes": gettext_lazy("new class"),
    "class_changes": gettext_lazy("class changed"),
    "archived": gettext_lazy("class archived"),
    "staff": gettext_lazy("staff"),
}


def _entry_row(school: SchoolPlan, what: str, entry) -> tuple:
    """Return one plan entry as the result file's school, what, name, sourcedId, detail."""
    name = getattr(entry, "name", "") or f"{entry.first_name} {entry.last_name}".strip()
    detail = ""
    if what == "joiners":
        detail = f"{entry.username}; {_level_name(entry.level)}; {entry.grade}"
    elif what == "changes":
        parts = [f"{key}: {value}" for key, value in sorted(entry.details.items())]
        if entry.level_to:
            parts.append(f"level: {_level_name(entry.level_from)} -> {_level_name(entry.level_to)}")
        if entry.classes_joined:
            parts.append(f"joins: {' '.join(entry.classes_joined)}")
        if entry.groups_left:
            parts.append(f"leaves {len(entry.groups_left)} group(s)")
        detail = "; ".join(parts)
    elif what in ("new_classes", "class_changes"):
        detail = f"{_kind_name(entry.kind)}; {_level_name(entry.level)}"
        if what == "new_classes":
            detail += f"; {entry.academic_year}"
    elif what == "archived":
        detail = entry.academic_year
    elif what == "staff":
        detail = f"{entry.email}; " + (_("new account") if entry.user_id is None else _("linked"))
        if entry.role_added:
            detail += "; " + _("teacher role added in %(school)s") % {"school": school.name}
    sourced = getattr(entry, "sourced_id", "")
    return (school.name, WHAT[what], name, sourced, detail, "", "", "")


def sync_result_rows(plan: SyncPlan) -> Iterator[tuple]:
    """Yield every entry of the plan, then every problem, as the result file's rows."""
    for school in plan.schools:
        for what in WHAT:
            for entry in getattr(school, what):
                yield _entry_row(school, what, entry)
    problem = _("problem")
    for item in plan.problems:
        yield ("", problem, "", item.sourced_id, "", item.file, item.line, item.reason)
