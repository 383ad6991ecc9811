from django.db import migrations

STAFF_GROUP = "Partner staff"


def create_staff_group(apps, schema_editor):
    Group = apps.get_model("auth", "Group")
    Group.objects.get_or_create(name=STAFF_GROUP)


def remove_staff_group(apps, schema_editor):
    apps.get_model("auth", "Group").objects.filter(name=STAFF_GROUP).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("learners", "0001_initial"),
        ("auth", "0012_alter_user_first_name_max_length"),
    ]

    operations = [migrations.RunPython(create_staff_group, remove_staff_group)]
