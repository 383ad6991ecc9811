"""A row's password can be hashed while staff read the preview, before it is sent."""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ("imports", "0005_import_row_school"),
    ]

    operations = [
        migrations.AddField(
            model_name="importrow",
            name="password_hash",
            field=models.TextField(blank=True),
        ),
    ]
