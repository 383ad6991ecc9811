"""Every read model row has its school (filled in 0003); the trust's counts read it by index."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("dashboard", "0003_cohort_school"),
    ]

    operations = [
        migrations.AlterField(
            model_name="cohortresult",
            name="school",
            field=models.ForeignKey(
                db_index=False,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="+",
                to="schools.school",
            ),
        ),
        migrations.AlterField(
            model_name="cohortneedshelp",
            name="school",
            field=models.ForeignKey(
                db_index=False,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="+",
                to="schools.school",
            ),
        ),
        migrations.AddIndex(
            model_name="cohortresult",
            index=models.Index(
                condition=models.Q(("superseded_at__isnull", True)),
                fields=["school", "risk_level"],
                name="cohort_latest_school",
            ),
        ),
        migrations.AddIndex(
            model_name="cohortneedshelp",
            index=models.Index(
                condition=models.Q(("superseded_at__isnull", True)),
                fields=["school", "name"],
                name="cohort_latest_school_area",
            ),
        ),
    ]
