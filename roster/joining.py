"""Pupils new to the portal: registered upstream by the bulk registration's run, once each.

A school's joiners become one running import job (`ImportJob`, linked to the sync by
`RosterSync.import_jobs`, named after it only for people to read) with a queued row each;
imports.run sends the rows, one task per row, each claimed by a conditional update, and its
sweep takes up what a dead worker leaves. So each pupil is sent once, and a
run cut off by an outage carries on where it stopped. A row that failed (the upstream was
down) leaves its pupil without a learner: the next sync's plan has them join again, as a new
row, while a row still queued, being sent or registered is never made twice.
"""

from __future__ import annotations

from datetime import date, datetime

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone
from django.utils.translation import get_language
from django.views.decorators.debug import sensitive_variables

from accounts.usernames import username_normal_form
from audit.models import AuditEvent
from audit.services import audit_record
from imports.models import ImportJob, ImportRow
from imports.passwords import password_encrypt
from imports.tasks import enqueue_job_run
from learners.passwords import password_generate
from roster.models import RosterPerson, RosterSync
from roster.plan import Joiner, SchoolPlan
from roster.selectors import sync_import_jobs


def job_filename(sync: RosterSync) -> str:
    """Return the name the sync's import jobs carry, for people (found by the link, never it)."""
    return f"roster sync {sync.pk}"


def when(value: str) -> datetime | None:
    """Return a plan's ISO time (a row's dateLastModified), or None when it gives none."""
    return datetime.fromisoformat(value) if value else None


def joiners_register(
    *,
    sync: RosterSync,
    school: SchoolPlan,
    groups: dict[str, int],
    actor: AbstractBaseUser | None,
    address: str | None,
) -> ImportJob | None:
    """Queue the school's joiners for registration; return the job (None: nobody to send).

    `groups` maps the roster's class sourcedIds to the portal's groups. Applied again (after
    a crash, or twice), the school's job exists already and nothing more is queued.
    """
    existing = sync_import_jobs(sync).filter(school_id=school.school_id).first()
    if existing is not None:
        return existing
    people = {
        person.sourced_id: person
        for person in RosterPerson.objects.select_related("import_row").filter(
            school_id=school.school_id,
            sourced_id__in=[joiner.sourced_id for joiner in school.joiners],
        )
    }
    joining = [joiner for joiner in school.joiners if not _under_way(people.get(joiner.sourced_id))]
    if not joining:
        return None
    now = timezone.now()
    job = ImportJob.objects.create(
        school_id=school.school_id,
        filename=job_filename(sync),
        state=ImportJob.State.RUNNING,
        created_by=actor,
        created_at=now,
        confirmed_by=actor,
        confirmed_at=now,
        total_rows=len(joining),
        valid_rows=len(joining),
        generated_passwords=sum(joiner.made_password for joiner in joining),
    )
    sync.import_jobs.add(job)
    # Numbered as a file's rows are, the header being row 1.
    rows = ImportRow.objects.bulk_create(
        _row(job, number, joiner, groups) for number, joiner in enumerate(joining, start=2)
    )
    for joiner, row in zip(joining, rows, strict=True):
        _person_awaits(school.school_id, joiner, row, people.get(joiner.sourced_id))
    audit_record(
        actor=actor,
        address=address,
        action=AuditEvent.Action.LEARNERS_IMPORTED,
        import_job=job.pk,
        rows_to_register=len(joining),
        rows_skipped=0,
        roster_sync=sync.pk,
    )
    # After commit: the worker must find the job running (as import_job_confirm does).
    language = get_language()
    transaction.on_commit(lambda: enqueue_job_run(job.pk, language))
    return job


def _under_way(person: RosterPerson | None) -> bool:
    """Return whether the pupil is registered, or their row is still queued or being sent."""
    if person is None:
        return False
    if person.learner_id is not None:
        return True
    return person.import_row is not None and person.import_row.state != ImportRow.State.FAILED


@sensitive_variables("password")
def _row(job: ImportJob, number: int, joiner: Joiner, groups: dict[str, int]) -> ImportRow:
    """Return the joiner's queued row, with a made password or a secret nobody is shown."""
    username = username_normal_form(joiner.username)
    # The upstream wants a password even from a pupil who signs in by card or school
    # account: theirs is made the same way, never shown (not "generated": no slip, no
    # download) and wiped once hashed.
    password = password_generate(
        username=username, first_name=joiner.first_name, last_name=joiner.last_name
    )
    return ImportRow(
        job=job,
        row_number=number,
        state=ImportRow.State.QUEUED,
        username=username,
        first_name=joiner.first_name,
        last_name=joiner.last_name,
        email=joiner.email,
        dob=date.fromisoformat(joiner.dob),
        level=joiner.level,
        school_id=job.school_id,
        group_ids=sorted({groups[c] for c in joiner.class_ids if c in groups}),
        password_encrypted=password_encrypt(password),
        password_generated=joiner.made_password,
    )


def _person_awaits(
    school_id: int, joiner: Joiner, row: ImportRow, person: RosterPerson | None
) -> None:
    """Link the roster's pupil to their row until it has a learner (roster_links_settle)."""
    values = {
        "school_id": school_id,
        "role": RosterPerson.Role.STUDENT,
        "import_row": row,
        "grade": joiner.grade,
        "last_modified": when(joiner.last_modified),
    }
    if person is None:
        RosterPerson.objects.create(sourced_id=joiner.sourced_id, **values)
    else:
        RosterPerson.objects.filter(pk=person.pk).update(**values)


def roster_links_settle() -> int:
    """Link each pupil whose row has registered to their learner; return how many were linked."""
    waiting = RosterPerson.objects.filter(
        learner__isnull=True,
        import_row__state=ImportRow.State.REGISTERED,
        import_row__learner__isnull=False,
    ).values_list("pk", "import_row__learner_id")
    linked = 0
    for person_id, learner_id in list(waiting):
        if RosterPerson.objects.filter(learner_id=learner_id).exists():
            continue  # linked under another sourcedId already
        linked += RosterPerson.objects.filter(pk=person_id, learner__isnull=True).update(
            learner_id=learner_id
        )
    return linked
