"""Background tasks (django-tasks, database queue): bulk registration."""

from django_tasks import task


# Its own queue and worker: an import holds a worker for minutes (hashing included), and
# learners' submissions must not wait behind it.
@task(queue_name="imports")
def run_import_job(job_id: int) -> None:
    """Register a confirmed import job's rows; resumes a job whose earlier run died."""
    from learners.import_run import import_job_run

    import_job_run(job_id=job_id)
