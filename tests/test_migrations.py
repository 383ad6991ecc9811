"""Moving code between apps moves no data: a database made before a move migrates intact."""

from datetime import date, timedelta

import pytest
from django.contrib.contenttypes.models import ContentType
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone
from django.utils.module_loading import import_string
from django_tasks_db.models import DBTaskResult as TaskRecord

from assessments.models import AssessmentAttempt
from imports.models import ImportJob, ImportRow
from imports.tasks import run_import_job
from learners.models import Learner

# The last migration of learners while it held bulk registration; imports did not exist.
LEARNERS_BEFORE_THE_MOVE = ("learners", "0006_learner_dashboard_count_index")
OLD_TASK = "learners.tasks.run_import_job"
# Learners and the apps made after the move that depend on its later migrations.
LATER_APPS = ("learners", "imports", "lessons", "safeguarding", "privacy", "classes", "roster")

# The dashboard's read model before it copied each learner's school (its 0003 needs the
# learners' schools): where a fixture goes back before schools, the dashboard goes back here.
DASHBOARD_BEFORE_SCHOOLS = ("dashboard", "0002_count_earlier_results")

# Each database alters tables its own way (SQLite rebuilds them).
pytestmark = pytest.mark.backend


def migrate_to_latest() -> None:
    """Apply every migration, as `manage.py migrate` does after an upgrade."""
    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())


@pytest.fixture
def old_database(transactional_db):
    """The test database put back to the layout of before the move, and its models then.

    Migrated forward again afterwards, whatever the test did.
    """
    executor = MigrationExecutor(connection)
    old_layout = [
        node
        for node in executor.loader.graph.leaf_nodes()
        if node[0] not in {*LATER_APPS, "dashboard"}
    ] + [LEARNERS_BEFORE_THE_MOVE, DASHBOARD_BEFORE_SCHOOLS]
    # Apps made after the move (lessons needs groups) are not there yet either.
    executor.migrate([*old_layout, *((app, None) for app in LATER_APPS if app != "learners")])
    yield MigrationExecutor(connection).loader.project_state(old_layout).apps
    migrate_to_latest()


def test_the_move_of_bulk_registration_keeps_every_job_row_learner_and_attempt(old_database):
    old = old_database
    User = old.get_model("auth", "User")
    OldLearner = old.get_model("learners", "Learner")
    OldJob = old.get_model("learners", "ImportJob")
    OldRow = old.get_model("learners", "ImportRow")
    OldAttempt = old.get_model("assessments", "AssessmentAttempt")
    staff = User.objects.create(username="sam.staff")
    user = User.objects.create(username="amira.k")
    learner = OldLearner.objects.create(
        user=user,
        username="amira.k",
        first_name="Amira",
        dob=date(2010, 5, 17),
        upstream_user_id="u-amira",
        status="active",
    )
    attempt = OldAttempt.objects.create(
        learner=learner, assessment_id=1001, state="in_progress", content={"questions": []}
    )
    created = timezone.now() - timedelta(days=2)
    job = OldJob.objects.create(
        filename="class-7b.csv",
        state="finished",
        created_by=staff,
        created_at=created,
        total_rows=2,
        valid_rows=1,
        invalid_rows=1,
    )
    registered = OldRow.objects.create(
        job=job,
        row_number=2,
        username="amira.k",
        dob=date(2010, 5, 17),
        state="registered",
        learner=learner,
        password_encrypted="gAAAA-secret",
    )
    invalid = OldRow.objects.create(
        job=job, row_number=3, username="b@d", state="invalid", problems=["username: bad"]
    )
    old_type = ContentType.objects.filter(app_label="learners", model="importjob")

    migrate_to_latest()

    moved = ImportJob.objects.get(pk=job.pk)
    assert (moved.filename, moved.state, moved.created_by.username, moved.created_at) == (
        "class-7b.csv",
        ImportJob.State.FINISHED,
        "sam.staff",
        created,
    )
    assert (moved.total_rows, moved.valid_rows, moved.invalid_rows) == (2, 1, 1)
    rows = {row.pk: row for row in ImportRow.objects.filter(job=moved)}
    assert set(rows) == {registered.pk, invalid.pk}
    assert rows[registered.pk].learner.upstream_user_id == "u-amira"
    assert rows[registered.pk].password_encrypted == "gAAAA-secret"
    assert rows[invalid.pk].problems == ["username: bad"]
    assert Learner.objects.get(pk=learner.pk).username == "amira.k"
    assert AssessmentAttempt.objects.get(pk=attempt.pk).learner_id == learner.pk
    # The content type follows the model, so do permissions granted on it.
    assert not old_type.exists()
    assert ContentType.objects.get_for_model(ImportJob).app_label == "imports"


def test_an_import_run_queued_before_the_move_runs_from_the_tasks_new_home(old_database):
    DBTaskResult = old_database.get_model("django_tasks_database", "DBTaskResult")
    queued = DBTaskResult.objects.create(
        task_path=OLD_TASK,
        args_kwargs={"args": [7, "en-gb"], "kwargs": {}},
        queue_name="imports",
        backend_name="default",
        run_after=timezone.now(),
    )

    migrate_to_latest()

    # The worker imports the task by its recorded path to run it.
    assert import_string(TaskRecord.objects.get(pk=queued.pk).task_path) is run_import_job


# The last migration of learners before usernames were stored in their normal form.
LEARNERS_BEFORE_NORMAL_FORMS = ("learners", "0008_school_groups")


@pytest.fixture
def usernames_as_typed(transactional_db):
    """The test database as it was before usernames were normalised, and its models then."""
    executor = MigrationExecutor(connection)
    before = [
        node
        for node in executor.loader.graph.leaf_nodes()
        if node[0] not in ("learners", "dashboard", "roster")
    ] + [LEARNERS_BEFORE_NORMAL_FORMS, DASHBOARD_BEFORE_SCHOOLS]
    # The roster (issue 30) needs later learners' migrations: not there yet either.
    executor.migrate([*before, ("roster", None)])
    yield MigrationExecutor(connection).loader.project_state(before).apps
    migrate_to_latest()


def test_usernames_take_their_normal_form_and_collisions_are_reported_unchanged(
    usernames_as_typed, capsys, caplog
):
    User = usernames_as_typed.get_model("auth", "User")
    OldLearner = usernames_as_typed.get_model("learners", "Learner")
    for username in ["\uff4a\uff4f\uff48\uff4e", "\u00c9mile", "Alice", "alice", "ALICE", "sam"]:
        user = User.objects.create(username=username)
        OldLearner.objects.create(
            user=user, username=username, upstream_user_id=f"u-{user.pk}", status="active"
        )

    migrate_to_latest()

    assert sorted(Learner.objects.values_list("username", "user__username")) == [
        ("ALICE", "ALICE"),
        ("Alice", "Alice"),
        ("alice", "alice"),
        ("john", "john"),
        ("sam", "sam"),
        ("\u00e9mile", "\u00e9mile"),
    ]
    report = "Usernames that now collide (left unchanged, rename one): ALICE, Alice, alice"
    assert report in capsys.readouterr().out
    assert report in caplog.text


# The last migrations before staff identity, the school's settings, the client's records and
# classes moved out of the portal and learners apps (issue 26).
BEFORE_THE_ROOMS = [
    ("portal", "0006_safeguarding_and_results_settings"),
    ("learners", "0010_group_contact"),
    ("lessons", "0001_initial"),
]
NEW_ROOMS = ("accounts", "schools", "partner_api", "classes")
MOVED_TO = {
    ("portal", "staffprofile"): "accounts",
    ("portal", "signinlock"): "accounts",
    ("portal", "partnersettings"): "schools",
    ("portal", "upstreamfailure"): "partner_api",
    ("portal", "upstreamhealth"): "partner_api",
    ("learners", "schoolgroup"): "classes",
    ("learners", "groupstaff"): "classes",
    ("learners", "groupmembership"): "classes",
}


@pytest.fixture
def before_the_rooms(transactional_db):
    """The test database as it was before the move of issue 26, and its models then."""
    executor = MigrationExecutor(connection)
    # The roster (issue 30) came after the rooms: it is not there yet either.
    moved_apps = {app for app, _name in BEFORE_THE_ROOMS} | set(NEW_ROOMS) | {"dashboard", "roster"}
    before = [node for node in executor.loader.graph.leaf_nodes() if node[0] not in moved_apps] + [
        *BEFORE_THE_ROOMS,
        DASHBOARD_BEFORE_SCHOOLS,
    ]
    executor.migrate([*before, *((app, None) for app in (*NEW_ROOMS, "roster"))])
    yield MigrationExecutor(connection).loader.project_state(before).apps
    migrate_to_latest()


def test_the_move_into_rooms_keeps_every_row_content_type_and_permission(before_the_rooms):
    from accounts.models import SignInLock, StaffProfile
    from classes.models import GroupMembership, GroupStaff, SchoolGroup
    from lessons.models import SignInWindow
    from partner_api.models import UpstreamFailure, UpstreamHealth
    from schools.models import PartnerSettings

    old = before_the_rooms
    User = old.get_model("auth", "User")
    Permission = old.get_model("auth", "Permission")
    OldType = old.get_model("contenttypes", "ContentType")
    now = timezone.now()
    teacher = User.objects.create(username="tess.teacher")
    pupil = User.objects.create(username="amira.k")
    learner = old.get_model("learners", "Learner").objects.create(
        user=pupil, username="amira.k", upstream_user_id="u-amira", status="active"
    )
    profile = old.get_model("portal", "StaffProfile").objects.create(user=teacher, role="teacher")
    lock = old.get_model("portal", "SignInLock").objects.create(
        kind="account", user=pupil, scope_ref="k-1", locked_until=now + timedelta(minutes=15)
    )
    # The migrations' own row is there when no transactional test ran before on this worker
    # (each one's flush empties it): the test's settings replace it, as before_schools' do.
    old.get_model("portal", "PartnerSettings").objects.all().delete()
    old.get_model("portal", "PartnerSettings").objects.create(
        pk=1, teachers_see_results=True, retention_years=7
    )
    failure = old.get_model("portal", "UpstreamFailure").objects.create(
        endpoint="submit", method="POST", outcome="timeout", status=504, at=now
    )
    health = old.get_model("portal", "UpstreamHealth").objects.create(
        base_url="http://upstream.test", unavailable_until=now
    )
    group = old.get_model("learners", "SchoolGroup").objects.create(
        name="7B", kind="class", level="LOA_PARTNER_LEVEL2", academic_year="2026/27"
    )
    link = old.get_model("learners", "GroupStaff").objects.create(group=group, user=teacher)
    membership = old.get_model("learners", "GroupMembership").objects.create(
        group=group, learner=learner, joined_at=now
    )
    window = old.get_model("lessons", "SignInWindow").objects.create(
        group=group, opened_by=teacher, closes_at=now + timedelta(minutes=30)
    )
    # A permission granted on each moved model, by its content type of before the move.
    old_types = {
        key: OldType.objects.get_or_create(app_label=key[0], model=key[1])[0] for key in MOVED_TO
    }
    for (_app, model), content_type in old_types.items():
        permission, _ = Permission.objects.get_or_create(
            content_type=content_type, codename=f"change_{model}", defaults={"name": model}
        )
        User.objects.get(pk=teacher.pk).user_permissions.add(permission)

    migrate_to_latest()

    assert StaffProfile.objects.get(pk=profile.pk).user.username == "tess.teacher"
    moved_lock = SignInLock.objects.get(pk=lock.pk)
    assert (moved_lock.kind, moved_lock.user.username) == ("account", "amira.k")
    settings_row = PartnerSettings.objects.get(pk=1)
    assert (settings_row.teachers_see_results, settings_row.retention_years) == (True, 7)
    assert UpstreamFailure.objects.get(pk=failure.pk).status == 504
    assert UpstreamHealth.objects.get(pk=health.pk).base_url == "http://upstream.test"
    moved_group = SchoolGroup.objects.get(pk=group.pk)
    assert (moved_group.name, moved_group.academic_year) == ("7B", "2026/27")
    assert GroupStaff.objects.get(pk=link.pk).user.username == "tess.teacher"
    moved_membership = GroupMembership.objects.get(pk=membership.pk)
    assert moved_membership.learner.upstream_user_id == "u-amira" and moved_membership.is_current
    assert SignInWindow.objects.get(pk=window.pk).group == moved_group
    # Each content type now names the model's new app; the permissions granted on it follow.
    for (app, model), new_app in MOVED_TO.items():
        content_type = ContentType.objects.get(pk=old_types[(app, model)].pk)
        assert (content_type.app_label, content_type.model) == (new_app, model)
        assert not ContentType.objects.filter(app_label=app, model=model).exists()
    teacher_now = type(moved_lock.user).objects.get(pk=teacher.pk)
    granted = {f"{new_app}.change_{model}" for (_app, model), new_app in MOVED_TO.items()}
    assert granted <= teacher_now.get_all_permissions()


# The last migration of each app before schools (schools 0002 and the migrations after it).
BEFORE_SCHOOLS = [
    ("schools", "0001_initial"),
    ("accounts", "0002_card_locks"),
    ("learners", "0011_groups_move_to_classes"),
    ("classes", "0001_initial"),
    ("lessons", "0002_group_moves_to_classes"),
    ("imports", "0003_one_task_per_row"),
    ("followups", "0004_priority_and_learner_requests"),
    ("safeguarding", "0003_recipients_worked_out_on_sending"),
    ("audit", "0007_learner_changed"),
]


@pytest.fixture
def before_schools(transactional_db):
    """The test database as it was before schools, and its models then; migrated back after."""
    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE_SCHOOLS)
    yield MigrationExecutor(connection).loader.project_state(BEFORE_SCHOOLS).apps
    migrate_to_latest()


def test_schools_make_the_one_school_from_the_settings_and_put_every_row_in_it(before_schools):
    from accounts.models import SchoolRole, SignInLock, StaffProfile
    from audit.models import AuditEvent
    from classes.models import SchoolGroup
    from schools.models import PartnerSettings, School

    old = before_schools
    User = old.get_model("auth", "User")
    old.get_model("schools", "PartnerSettings").objects.all().delete()
    old.get_model("schools", "PartnerSettings").objects.create(
        pk=1, helplines="Our own line: 0800 000 000", retention_years=6
    )
    lead = User.objects.create(username="dee.dsl")
    pupil = User.objects.create(username="amira.k")
    old.get_model("accounts", "StaffProfile").objects.create(user=lead, role="dsl")
    learner = old.get_model("learners", "Learner").objects.create(
        user=pupil, username="amira.k", upstream_user_id="u-amira", status="active"
    )
    group = old.get_model("classes", "SchoolGroup").objects.create(
        name="7B", kind="class", level="LOA_PARTNER_LEVEL2", academic_year="2026/27"
    )
    lock = old.get_model("accounts", "SignInLock").objects.create(
        kind="account", user=pupil, scope_ref="k-1", locked_until=timezone.now()
    )
    event = old.get_model("audit", "AuditEvent").objects.create(
        actor=lead, actor_username="dee.dsl", action="learner_registered", learner=learner
    )

    migrate_to_latest()

    school = School.objects.get()
    settings_row = PartnerSettings.objects.get(pk=1)
    assert settings_row.school == school
    assert (settings_row.helplines, settings_row.retention_years) == (
        "Our own line: 0800 000 000",
        6,
    )
    assert Learner.objects.get(pk=learner.pk).school == school
    assert SchoolGroup.objects.get(pk=group.pk).school == school
    assert SignInLock.objects.get(pk=lock.pk).school == school
    assert AuditEvent.objects.get(pk=event.pk).school == school
    held = SchoolRole.objects.get(user_id=lead.pk)
    assert (held.school, held.role) == (school, "dsl")
    assert StaffProfile.objects.get(user_id=lead.pk).role == ""


@pytest.fixture
def before_the_read_model(transactional_db):
    """The test database with the dashboard's read model not yet made (counted by 0002)."""
    executor = MigrationExecutor(connection)
    first = ("dashboard", "0001_cohort_read_model")
    layout = [node for node in executor.loader.graph.leaf_nodes() if node[0] != "dashboard"]
    executor.migrate([*layout, first])
    yield MigrationExecutor(connection).loader.project_state([*layout, first]).apps
    migrate_to_latest()


def test_the_read_model_counts_earlier_results_each_in_its_learners_school(
    before_the_read_model,
):
    from dashboard.models import CohortNeedsHelp, CohortResult

    old = before_the_read_model
    school = old.get_model("schools", "School").objects.create(code="ROWAN", name="Rowan")
    learner = old.get_model("learners", "Learner").objects.create(
        user=old.get_model("auth", "User").objects.create(username="amira.k"),
        username="amira.k",
        upstream_user_id="u-amira",
        status="active",
        level="LOA_PARTNER_LEVEL2",
        school=school,
    )
    Attempt = old.get_model("assessments", "AssessmentAttempt")
    Result = old.get_model("assessments", "AssessmentResult")
    FocusArea = old.get_model("assessments", "FocusArea")
    results = []
    for day, assessment_id in ((1, 41), (2, 42)):
        attempt = Attempt.objects.create(
            learner=learner,
            assessment_id=assessment_id,
            state="completed",
            completed_at=timezone.now() - timedelta(days=3 - day),
        )
        results.append(Result.objects.create(attempt=attempt, loa_score=50, risk_level="High"))
        FocusArea.objects.create(
            result=results[-1], name="SLEEP", needs_help="Yes", questions_count=2
        )
        FocusArea.objects.create(
            result=results[-1], name="FOCUS", needs_help="no", questions_count=2
        )

    migrate_to_latest()

    rows = CohortResult.objects.order_by("completed_at")
    assert [(row.result_id, row.school_id) for row in rows] == [
        (results[0].pk, school.pk),
        (results[1].pk, school.pk),
    ]
    assert rows[0].superseded_at == rows[1].completed_at and rows[1].superseded_at is None
    assert list(CohortNeedsHelp.objects.values_list("name", "school_id").distinct()) == [
        ("SLEEP", school.pk)
    ]
