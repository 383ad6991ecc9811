"""Background tasks (django-tasks, database queue): bulk registration."""

from django.conf import settings
from django.utils import translation
from django_tasks import task

from ops.request_context import carries_request_id


# Its own queue and worker: an import holds a worker for minutes (hashing included), and
# learners' submissions must not wait behind it.
@task(queue_name="imports")
@carries_request_id
def run_import_job(job_id: int, language: str | None = None) -> None:
    """Register a confirmed import job's rows; resumes a job whose earlier run died.

    `language` is that of the staff member who started or resumed it: the rows' reasons are
    written in it (the site's default language when none is given).
    """
    from imports.run import import_job_run

    with translation.override(language or settings.LANGUAGE_CODE):
        import_job_run(job_id=job_id)
