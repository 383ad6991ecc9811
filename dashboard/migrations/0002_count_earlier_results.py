"""Count the results stored before the dashboard's read model existed.

Later results are counted by the `result_stored` receiver (dashboard.cohort).
"""

from django.db import migrations


def count_earlier_results(apps, schema_editor):
    # The read model is derived data with no history of its own: the current rebuild is the
    # right one for this schema. If these tables change, freeze a copy of it here.
    from dashboard.cohort import cohort_rebuild

    cohort_rebuild()


class Migration(migrations.Migration):
    dependencies = [
        ("dashboard", "0001_cohort_read_model"),
        ("assessments", "0003_attempt_latest_index"),
    ]

    operations = [migrations.RunPython(count_earlier_results, migrations.RunPython.noop)]
