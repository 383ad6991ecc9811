"""Bulk registration moves here from the learners app, keeping its tables and rows.

The models' state moves (learners 0007 drops it there); their tables keep the names they had,
so the database is not touched. The content types follow (so do permissions and the admin's
history), and a queued run of an import, recorded by the task queue under its old path, is
pointed at the task's new home so it still runs.
"""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

MOVED_MODELS = ("importjob", "importrow")
OLD_TASK = "learners.tasks.run_import_job"
NEW_TASK = "imports.tasks.run_import_job"


def content_types_follow(apps, schema_editor, old="learners", new="imports"):
    ContentType = apps.get_model("contenttypes", "ContentType")
    ContentType.objects.filter(app_label=old, model__in=MOVED_MODELS).update(app_label=new)


def content_types_go_back(apps, schema_editor):
    content_types_follow(apps, schema_editor, old="imports", new="learners")


def queued_runs_follow(apps, schema_editor, old=OLD_TASK, new=NEW_TASK):
    DBTaskResult = apps.get_model("django_tasks_database", "DBTaskResult")
    DBTaskResult.objects.filter(task_path=old).update(task_path=new)


def queued_runs_go_back(apps, schema_editor):
    queued_runs_follow(apps, schema_editor, old=NEW_TASK, new=OLD_TASK)


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        ('learners', '0006_learner_dashboard_count_index'),
        ('contenttypes', '0002_remove_content_type_name'),
        ('django_tasks_database', '0001_initial'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name='ImportJob',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('filename', models.CharField(blank=True, max_length=255)),
                        ('state', models.CharField(choices=[('preview', 'Checked, waiting for confirmation'), ('running', 'Registering'), ('finished', 'Finished'), ('discarded', 'Discarded')], default='preview', max_length=16)),
                        ('created_at', models.DateTimeField()),
                        ('total_rows', models.PositiveIntegerField(default=0)),
                        ('valid_rows', models.PositiveIntegerField(default=0)),
                        ('invalid_rows', models.PositiveIntegerField(default=0)),
                        ('generated_passwords', models.PositiveIntegerField(default=0)),
                        ('confirmed_at', models.DateTimeField(blank=True, null=True)),
                        ('started_at', models.DateTimeField(blank=True, null=True)),
                        ('finished_at', models.DateTimeField(blank=True, null=True)),
                        ('runner', models.CharField(blank=True, max_length=32)),
                        ('heartbeat_at', models.DateTimeField(blank=True, null=True)),
                        ('resume_requested_at', models.DateTimeField(blank=True, null=True)),
                        ('credentials_downloaded_at', models.DateTimeField(blank=True, null=True)),
                        ('credentials_wiped_at', models.DateTimeField(blank=True, null=True)),
                        ('confirmed_by', models.ForeignKey(null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL)),
                        ('created_by', models.ForeignKey(null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL)),
                    ],
                    options={
                        'db_table': 'learners_importjob',
                        'ordering': ['-created_at', '-id'],
                    },
                ),
                migrations.CreateModel(
                    name='ImportRow',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('row_number', models.PositiveIntegerField(help_text='The row in the file; the header is row 1.')),
                        ('username', models.CharField(blank=True, max_length=150)),
                        ('first_name', models.CharField(blank=True, max_length=150)),
                        ('last_name', models.CharField(blank=True, max_length=150)),
                        ('email', models.CharField(blank=True, max_length=254)),
                        ('dob', models.DateField(blank=True, null=True, verbose_name='date of birth')),
                        ('level', models.CharField(blank=True, max_length=32)),
                        ('password_encrypted', models.TextField(blank=True)),
                        ('password_generated', models.BooleanField(default=False)),
                        ('problems', models.JSONField(blank=True, default=list)),
                        ('state', models.CharField(choices=[('invalid', 'Skipped as invalid'), ('queued', 'Waiting'), ('sending', 'Being registered'), ('registered', 'Registered'), ('failed', 'Failed')], max_length=16)),
                        ('reason', models.TextField(blank=True)),
                        ('claimed_at', models.DateTimeField(blank=True, null=True)),
                        ('finished_at', models.DateTimeField(blank=True, null=True)),
                        ('signin_ready_at', models.DateTimeField(blank=True, null=True)),
                        ('job', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='rows', to='imports.importjob')),
                        ('learner', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to='learners.learner')),
                    ],
                    options={
                        'db_table': 'learners_importrow',
                        'ordering': ['job', 'row_number'],
                    },
                ),
                migrations.AddIndex(
                    model_name='importjob',
                    index=models.Index(fields=['state', 'created_at'], name='learners_im_state_27c795_idx'),
                ),
                migrations.AddIndex(
                    model_name='importrow',
                    index=models.Index(fields=['job', 'state'], name='learners_im_job_id_cc979c_idx'),
                ),
                migrations.AddConstraint(
                    model_name='importrow',
                    constraint=models.UniqueConstraint(fields=('job', 'row_number'), name='import_row_unique_number'),
                ),
            ],
            database_operations=[],
        ),
        migrations.RunPython(content_types_follow, content_types_go_back),
        migrations.RunPython(queued_runs_follow, queued_runs_go_back),
    ]
