"""Each row of a bulk registration names its school (the file's `school` cell, else the job's).

Rows checked before this have none: they go to their job's school, as they always did.
"""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ("imports", "0004_import_school"),
        ("schools", "0002_schools"),
    ]

    operations = [
        migrations.AddField(
            model_name="importrow",
            name="school",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="+",
                to="schools.school",
            ),
        ),
    ]
