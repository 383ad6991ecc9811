"""Groups move to the classes app (its 0001): state only, tables and rows stay."""

from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ('learners', '0010_group_contact'),
        ('lessons', '0002_group_moves_to_classes'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.RemoveField(
                    model_name='groupstaff',
                    name='group',
                ),
                migrations.RemoveField(
                    model_name='groupstaff',
                    name='user',
                ),
                migrations.RemoveField(
                    model_name='schoolgroup',
                    name='staff',
                ),
                migrations.DeleteModel(
                    name='GroupMembership',
                ),
                migrations.DeleteModel(
                    name='GroupStaff',
                ),
                migrations.DeleteModel(
                    name='SchoolGroup',
                ),
            ],
            database_operations=[],
        ),
    ]
