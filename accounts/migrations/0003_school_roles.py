"""Staff hold their roles in a school; today's roles become roles in the partner's one school."""

from django.conf import settings
from django.db import migrations, models
import django.db.models.deletion

SCHOOL_ROLES = ("admin", "teacher", "head_of_year", "dsl", "deputy_dsl")


def roles_into_the_school(apps, schema_editor):
    School = apps.get_model("schools", "School")
    StaffProfile = apps.get_model("accounts", "StaffProfile")
    SchoolRole = apps.get_model("accounts", "SchoolRole")
    SignInLock = apps.get_model("accounts", "SignInLock")
    profiles = StaffProfile.objects.filter(role__in=SCHOOL_ROLES)
    if not profiles.exists() and not SignInLock.objects.exists():
        return
    school = School.objects.order_by("pk").first()
    SchoolRole.objects.bulk_create(
        SchoolRole(user_id=profile.user_id, school=school, role=profile.role)
        for profile in profiles
    )
    profiles.update(role="")
    # A lock on an account belongs to its school; one on an address alone to none.
    SignInLock.objects.filter(user__isnull=False).update(school=school)


# Going back, a trust role becomes the nearest role of the one school there was.
TRUST_ROLES_BACK = {"trust_admin": "admin", "trust_safeguarding_lead": "dsl", "trust_viewer": ""}


def roles_back(apps, schema_editor):
    StaffProfile = apps.get_model("accounts", "StaffProfile")
    SchoolRole = apps.get_model("accounts", "SchoolRole")
    for trust_role, role in TRUST_ROLES_BACK.items():
        StaffProfile.objects.filter(role=trust_role).update(role=role)
    for school_role in SchoolRole.objects.order_by("pk"):
        StaffProfile.objects.filter(user_id=school_role.user_id, role="").update(
            role=school_role.role
        )


class Migration(migrations.Migration):

    dependencies = [
        ("accounts", "0002_card_locks"),
        ("schools", "0002_schools"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AlterField(
            model_name="staffprofile",
            name="role",
            field=models.CharField(
                blank=True,
                choices=[
                    ("trust_admin", "Trust admin"),
                    ("trust_safeguarding_lead", "Trust safeguarding lead"),
                    ("trust_viewer", "Trust viewer (figures only)"),
                ],
                default="",
                max_length=30,
            ),
        ),
        migrations.CreateModel(
            name="SchoolRole",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                (
                    "role",
                    models.CharField(
                        choices=[
                            ("admin", "Partner admin"),
                            ("teacher", "Teacher"),
                            ("head_of_year", "Head of Year (pastoral lead)"),
                            ("dsl", "Designated safeguarding lead"),
                            ("deputy_dsl", "Deputy safeguarding lead"),
                        ],
                        max_length=20,
                    ),
                ),
                (
                    "school",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="+",
                        to="schools.school",
                    ),
                ),
                (
                    "user",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="school_roles",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
            ],
            options={
                "indexes": [models.Index(fields=["school", "role"], name="school_role_school_idx")],
                "constraints": [
                    models.UniqueConstraint(fields=("user", "school"), name="one_role_per_school")
                ],
            },
        ),
        migrations.AddField(
            model_name="signinlock",
            name="school",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="+",
                to="schools.school",
            ),
        ),
        migrations.RunPython(roles_into_the_school, roles_back),
    ]
