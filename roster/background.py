"""Uploaded rosters, read by an imports worker; syncs whose worker died, taken up by the sweep.

An upload is kept in ROSTER_UPLOAD_DIR, its sync made (being read) and a task queued: the web
request never reads, plans or applies, so a trust's roster cannot outlast the web server's
timeout. The worker deletes the zip once it has read it. A sync whose worker died is failed
(being read: nothing changed, its transaction rolled back) or applied again from its stored
plan (being applied: applying is idempotent) by `sweep_roster`.
"""

from __future__ import annotations

import contextlib
import logging
import os
from datetime import timedelta
from pathlib import Path

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Q
from django.db.models.functions import Coalesce
from django.utils import timezone
from django.utils.translation import gettext as _

from ops.database import DATABASE_TROUBLE
from roster.models import RosterSync
from roster.services import roster_sync_resume, roster_sync_run
from roster.tasks import enqueue_upload_read
from schools.models import School

logger = logging.getLogger(__name__)

State = RosterSync.State

# A worker silent this long on a sync it reads or applies has died (a trust's roster is read
# and planned in a minute or two).
STALLED_AFTER = timedelta(minutes=10)


def upload_path(sync_id: int) -> Path:
    """Return where the sync's uploaded zip waits for its worker."""
    return Path(settings.ROSTER_UPLOAD_DIR) / f"roster-sync-{sync_id}.zip"


def roster_upload_queue(
    *,
    upload,
    filename: str,
    school: School | None,
    started_by: AbstractBaseUser,
    address: str | None,
) -> RosterSync:
    """Keep an uploaded zip, make its sync (being read) and queue the worker that reads it."""
    sync = RosterSync.objects.create(
        origin=RosterSync.Origin.UPLOAD, filename=filename[:255], school=school,
        created_by=started_by,
    )  # fmt: skip
    path = upload_path(sync.pk)
    try:
        # Pupils' personal data: the portal's user's only, the folder and the file alike.
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        with os.fdopen(os.open(path, os.O_CREAT | os.O_TRUNC | os.O_WRONLY, 0o600), "wb") as kept:
            os.fchmod(kept.fileno(), 0o600)  # a zip left with this name keeps its mode otherwise
            for chunk in upload.chunks():
                kept.write(chunk)
    except OSError:
        logger.exception("Roster sync %s: the upload could not be kept in %s", sync.pk, path)
        with contextlib.suppress(OSError):
            path.unlink(missing_ok=True)
        RosterSync.objects.filter(pk=sync.pk).update(
            state=State.FAILED,
            error=_(
                "The portal could not keep the uploaded file to read it; nothing changed. Try "
                "again later; if it fails again, tell the portal's administrators."
            ),
        )
    else:
        enqueue_upload_read(sync.pk, address)
    sync.refresh_from_db()
    return sync


def roster_upload_run(*, sync_id: int, address: str | None) -> None:
    """Read, plan and hold or apply an uploaded sync once (the worker's task); delete its zip."""
    path = upload_path(sync_id)
    claimed = RosterSync.objects.filter(
        pk=sync_id, state=State.READING, started_at__isnull=True
    ).update(started_at=timezone.now())
    if not claimed:
        # Failed by the sweep meanwhile (which deleted the zip), or taken up by another
        # worker that may be reading it still: the zip is not this one's to delete.
        return
    try:
        sync = RosterSync.objects.select_related("school", "created_by").get(pk=sync_id)
        roster_sync_run(sync, path, actor=sync.created_by, address=address)
    finally:
        with contextlib.suppress(OSError):
            path.unlink(missing_ok=True)


def roster_syncs_recover() -> list[str]:
    """Fail the syncs whose worker died reading them, apply again those it died applying.

    Returns a line for each, for the sweep to print.
    """
    cutoff = timezone.now() - STALLED_AFTER
    lines = []
    reading = RosterSync.objects.filter(state=State.READING).filter(
        Q(started_at__lt=cutoff) | Q(started_at__isnull=True, created_at__lt=cutoff)
    )
    for pk in list(reading.values_list("pk", flat=True)):
        stopped = _(
            "The portal stopped while reading these files; nothing changed. Send them again."
        )
        if RosterSync.objects.filter(pk=pk, state=State.READING).update(
            state=State.FAILED, error=stopped
        ):
            with contextlib.suppress(OSError):
                upload_path(pk).unlink(missing_ok=True)
            logger.warning("Roster sync %s: its worker stopped while reading it", pk)
            lines.append(f"roster sync {pk}: failed: its worker stopped while reading it")
    applying = RosterSync.objects.annotate(
        since=Coalesce("decided_at", "started_at", "created_at")
    ).filter(state=State.APPLYING, since__lt=cutoff)
    for sync in applying.select_related("school", "decided_by"):
        logger.warning("Roster sync %s: its worker stopped applying it; applying again", sync.pk)
        try:
            lines.append(roster_sync_resume(sync=sync).summary_line())
        except DATABASE_TROUBLE:
            raise  # the sweep waits for the database, then tries every one again
        except Exception:
            # Each on its own: one sync's bug must never stop the others or the drop folder.
            logger.exception("Roster sync %s could not be applied again", sync.pk)
            lines.append(f"roster sync {sync.pk}: could not be applied again (see the log)")
    return lines
