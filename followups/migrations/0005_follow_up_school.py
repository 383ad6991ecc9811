"""Every row belongs to a school: today's rows to the partner's one school."""

from django.db import migrations, models
import django.db.models.deletion

import schools.models

MODELS = ("FollowUp",)


def into_the_school(apps, schema_editor):
    School = apps.get_model("schools", "School")
    school = School.objects.order_by("pk").first()
    for name in MODELS:
        model = apps.get_model("followups", name)
        if school is not None:
            model.objects.filter(school__isnull=True).update(school=school)


class Migration(migrations.Migration):

    dependencies = [
        ("followups", "0004_priority_and_learner_requests"),
        ("schools", "0002_schools"),
    ]

    operations = [
        migrations.AddField(
            model_name="followup",
            name="school",
            field=models.ForeignKey(
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="+",
                to="schools.school",
            ),
        ),
        migrations.RunPython(into_the_school, migrations.RunPython.noop),
        migrations.AlterField(
            model_name="followup",
            name="school",
            field=models.ForeignKey(
                default=schools.models.default_school_id,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="+",
                to="schools.school",
            ),
        ),
    ]
