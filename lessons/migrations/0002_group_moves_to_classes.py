"""A lesson's group is now classes.SchoolGroup: the same table, so nothing changes on disk."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('classes', '0001_initial'),
        ('lessons', '0001_initial'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name='signinwindow',
                    name='group',
                    field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='sign_in_windows', to='classes.schoolgroup'),
                ),
            ],
            database_operations=[],
        ),
    ]
