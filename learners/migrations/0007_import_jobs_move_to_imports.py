"""Bulk registration's models move to the imports app (its 0001): state only, tables stay."""

from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ('learners', '0006_learner_dashboard_count_index'),
        ('imports', '0001_initial'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.DeleteModel(name='ImportRow'),
                migrations.DeleteModel(name='ImportJob'),
            ],
            database_operations=[],
        ),
    ]
