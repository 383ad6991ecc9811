"""Schools: the partner's one school is made from today's settings, which become its own."""

from django.db import migrations, models
import django.db.models.deletion


def make_the_school(apps, schema_editor):
    School = apps.get_model("schools", "School")
    PartnerSettings = apps.get_model("schools", "PartnerSettings")
    school = School.objects.order_by("pk").first()
    if school is None:
        school = School.objects.create(code="SCHOOL", name="Our school")
    settings_row = PartnerSettings.objects.order_by("pk").first()
    if settings_row is None:
        PartnerSettings.objects.create(school=school)
    else:
        PartnerSettings.objects.filter(pk=settings_row.pk).update(school=school)


class Migration(migrations.Migration):

    dependencies = [
        ("schools", "0001_initial"),
    ]

    operations = [
        migrations.CreateModel(
            name="School",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("code", models.CharField(max_length=32, unique=True, verbose_name="code")),
                ("name", models.CharField(max_length=200, verbose_name="name")),
                ("created_at", models.DateTimeField(auto_now_add=True)),
            ],
            options={"ordering": ["name", "code"]},
        ),
        migrations.AddField(
            model_name="partnersettings",
            name="school",
            field=models.OneToOneField(
                null=True,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="settings",
                to="schools.school",
            ),
        ),
        migrations.AddField(
            model_name="partnersettings",
            name="withhold_from_trust",
            field=models.BooleanField(
                default=False, verbose_name="Keep this school's figures out of the trust's dashboard"
            ),
        ),
        migrations.RunPython(make_the_school, migrations.RunPython.noop),
        migrations.AlterField(
            model_name="partnersettings",
            name="school",
            field=models.OneToOneField(
                on_delete=django.db.models.deletion.CASCADE,
                related_name="settings",
                to="schools.school",
            ),
        ),
    ]
