"""One task per row: the run's hold on the job (runner, heartbeat_at) goes, rows_queued_at comes.

Jobs and rows keep every value; a job running when this is applied is resumed by the sweep.
"""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('imports', '0002_import_row_groups'),
    ]

    operations = [
        migrations.RemoveField(
            model_name='importjob',
            name='heartbeat_at',
        ),
        migrations.RemoveField(
            model_name='importjob',
            name='runner',
        ),
        migrations.AddField(
            model_name='importjob',
            name='rows_queued_at',
            field=models.DateTimeField(blank=True, null=True),
        ),
    ]
