"""Give each read model row its learner's school, so the trust's figures count by school.

Added empty and filled from the learners here; made required, and indexed, in 0004 (on
PostgreSQL a table cannot be altered in the transaction that filled its new foreign key).
"""

import django.db.models.deletion
from django.db import migrations, models
from django.db.models import OuterRef, Subquery


def fill_schools(apps, schema_editor):
    Learner = apps.get_model("learners", "Learner")
    CohortResult = apps.get_model("dashboard", "CohortResult")
    CohortNeedsHelp = apps.get_model("dashboard", "CohortNeedsHelp")
    CohortResult.objects.update(
        school_id=Subquery(Learner.objects.filter(pk=OuterRef("learner_id")).values("school_id"))
    )
    CohortNeedsHelp.objects.update(
        school_id=Subquery(
            CohortResult.objects.filter(pk=OuterRef("cohort_result_id")).values("school_id")
        )
    )


class Migration(migrations.Migration):
    dependencies = [
        ("dashboard", "0002_count_earlier_results"),
        ("learners", "0012_learner_school"),
        ("schools", "0002_schools"),
    ]

    operations = [
        migrations.AddField(
            model_name="cohortresult",
            name="school",
            field=models.ForeignKey(
                db_index=False,
                null=True,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="+",
                to="schools.school",
            ),
        ),
        migrations.AddField(
            model_name="cohortneedshelp",
            name="school",
            field=models.ForeignKey(
                db_index=False,
                null=True,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="+",
                to="schools.school",
            ),
        ),
        migrations.RunPython(fill_schools, migrations.RunPython.noop),
    ]
