"""A group's name is unique within its school's year: two schools of a trust may each have a 7B."""

import django.db.models.functions.text
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ("classes", "0002_group_school"),
        ("schools", "0002_schools"),
    ]

    operations = [
        migrations.RemoveConstraint(
            model_name="schoolgroup",
            name="school_group_unique_name_per_year",
        ),
        migrations.AddConstraint(
            model_name="schoolgroup",
            constraint=models.UniqueConstraint(
                models.F("school"),
                django.db.models.functions.text.Lower("name"),
                models.F("academic_year"),
                name="school_group_unique_name_per_school_year",
            ),
        ),
    ]
