"""Background task (django-tasks, the `imports` queue): reading an uploaded roster."""

from django.conf import settings
from django.utils import translation
from django_tasks import task

from ops.request_context import carries_request_id
from ops.tasks import enqueue_when

# Ahead of the bulk registrations' rows on the same queue: an admin waits on the sync's page.
ROSTER_PRIORITY = 10


@task(queue_name="imports", priority=ROSTER_PRIORITY)
@carries_request_id
def read_uploaded_roster(sync_id: int, address: str | None, language: str | None = None) -> None:
    """Read, plan and hold or apply an uploaded roster (roster.background.roster_upload_run)."""
    from roster.background import roster_upload_run

    with translation.override(language or settings.LANGUAGE_CODE):
        roster_upload_run(sync_id=sync_id, address=address)


def enqueue_upload_read(sync_id: int, address: str | None) -> None:
    """Queue the reading of an uploaded roster, its sentences in the current language."""
    enqueue_when(read_uploaded_roster, sync_id, address, translation.get_language())


@task(queue_name="imports", priority=ROSTER_PRIORITY)
@carries_request_id
def apply_approved_roster(sync_id: int, address: str | None, language: str | None = None) -> None:
    """Apply a sync an admin approved on its page (roster.services.roster_sync_resume)."""
    from roster.models import RosterSync
    from roster.services import roster_sync_resume

    sync = RosterSync.objects.select_related("school", "decided_by").filter(pk=sync_id).first()
    if sync is not None:
        with translation.override(language or settings.LANGUAGE_CODE):
            roster_sync_resume(sync=sync, address=address)


def enqueue_approved_apply(sync_id: int, address: str | None) -> None:
    """Queue the applying of an approved sync, its sentences in the current language."""
    enqueue_when(apply_approved_roster, sync_id, address, translation.get_language())
