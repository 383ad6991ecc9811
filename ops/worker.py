"""django_tasks_db's worker, made to outlast a database that goes away for a while.

The library's worker dies on the first OperationalError of its loop, and a task cut off by a
lost connection is recorded as failed (or, when even that write fails, left "running" for
good). This one waits for the database and goes on instead:

- an error of the loop itself (finding or claiming a task) waits and resumes the loop;
- a task cut off by the database (its own queries, or recording its outcome) is run again
  once the database answers, as the same claimed task: every task is safe to run twice (the
  record's state is the lock, docs/architecture.md), and an answer the task got from the
  upstream meanwhile was held and written by ops.database.write_when_database_returns.

A task cut off more than RERUNS_AFTER_OUTAGE times is recorded as failed, as before.
"""

import logging

from django.conf import settings
from django_tasks_db.management.commands.db_worker import Worker
from django_tasks_db.models import DBTaskResult

from ops.database import DATABASE_TROUBLE, hold_answers_for, wait_for_database

logger = logging.getLogger(__name__)

RERUNS_AFTER_OUTAGE = 5


class _CutOff(Exception):
    """A task ended on the database's trouble: run it again once the database answers."""

    def __init__(self, error: BaseException):
        super().__init__(str(error))
        self.error = error


class OutageTolerantWorker(Worker):
    """A db_worker that waits out a lost database, never dying of it."""

    def __init__(self, *, name: str, **options) -> None:
        super().__init__(**options)
        self.name = name

    def run(self) -> None:
        hold_answers_for(settings.DATABASE_OUTAGE_HOLD)  # this process is a worker
        while True:
            try:
                return super().run()
            except DATABASE_TROUBLE as error:
                self.startup_delay = False  # once is enough
                if not wait_for_database(error, who=self.name, go_on=self._go_on):
                    return

    def run_task(self, db_task_result: DBTaskResult) -> None:
        for _ in range(RERUNS_AFTER_OUTAGE):
            try:
                return self._run_task_once(db_task_result, record_database_trouble=False)
            except _CutOff as cut_off:
                logger.warning(
                    "Task id=%s was cut off by the database; it runs again once the database "
                    "answers.",
                    db_task_result.id,
                )
                if not wait_for_database(cut_off.error, who=self.name, go_on=self._go_on):
                    return  # told to stop: the task is left to the app's sweep
        self._run_task_once(db_task_result, record_database_trouble=True)

    def _go_on(self) -> bool:
        return self.running

    def _run_task_once(self, db_task_result: DBTaskResult, *, record_database_trouble: bool):
        """Run the task as the library does, raising _CutOff instead of recording trouble."""
        record_failure = db_task_result.set_failed

        def set_failed(error: BaseException) -> None:
            if isinstance(error, DATABASE_TROUBLE) and not record_database_trouble:
                raise _CutOff(error)
            record_failure(error)

        db_task_result.set_failed = set_failed
        try:
            super().run_task(db_task_result)
        finally:
            del db_task_result.set_failed
