"""Audit events belong to a school: today's to the partner's one school."""

from django.db import migrations, models
import django.db.models.deletion


def into_the_school(apps, schema_editor):
    School = apps.get_model("schools", "School")
    AuditEvent = apps.get_model("audit", "AuditEvent")
    school = School.objects.order_by("pk").first()
    if school is not None:
        # The historical model has a plain manager: the append-only one refuses updates.
        AuditEvent.objects.filter(school__isnull=True).update(school=school)


class Migration(migrations.Migration):

    dependencies = [
        ("audit", "0007_learner_changed"),
        ("schools", "0002_schools"),
    ]

    operations = [
        migrations.AddField(
            model_name="auditevent",
            name="school",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="+",
                to="schools.school",
            ),
        ),
        migrations.RunPython(into_the_school, migrations.RunPython.noop),
    ]
