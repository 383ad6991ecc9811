"""Classes move here from the learners app, keeping their tables and every membership.

State only: the tables keep their names (learners_schoolgroup, learners_groupstaff,
learners_groupmembership); learners 0011 drops them from its own state. The content types
follow, and with them permissions and the admin's history.
"""

import classes.models
import django.db.models.deletion
import django.db.models.functions.text
import django.utils.timezone
from django.conf import settings
from django.db import migrations, models


MOVED_MODELS = ('schoolgroup', 'groupstaff', 'groupmembership')


def content_types_follow(apps, schema_editor, old='learners', new='classes'):
    ContentType = apps.get_model("contenttypes", "ContentType")
    ContentType.objects.filter(app_label=old, model__in=MOVED_MODELS).update(app_label=new)


def content_types_go_back(apps, schema_editor):
    content_types_follow(apps, schema_editor, old='classes', new='learners')


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        ('learners', '0010_group_contact'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
        ('contenttypes', '0002_remove_content_type_name'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name='GroupStaff',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('added_at', models.DateTimeField(auto_now_add=True)),
                        ('user', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='group_links', to=settings.AUTH_USER_MODEL)),
                    ],
                    options={
                        'db_table': 'learners_groupstaff',
                    },
                ),
                migrations.CreateModel(
                    name='SchoolGroup',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('name', models.CharField(max_length=100, verbose_name='name')),
                        ('kind', models.CharField(choices=[('class', 'Teaching class'), ('tutor', 'Tutor group'), ('year', 'Year group')], default='class', max_length=8, verbose_name='kind')),
                        ('level', models.CharField(blank=True, choices=[('LOA_PARTNER_LEVEL1', 'Further education'), ('LOA_PARTNER_LEVEL2', 'Secondary'), ('LOA_PARTNER_LEVEL3', 'Primary')], max_length=32, verbose_name='level')),
                        ('academic_year', models.CharField(default=classes.models.current_academic_year, max_length=7, verbose_name='academic year')),
                        ('contact', models.CharField(blank=True, help_text="Shown to this group's pupils with their results.", max_length=200, verbose_name='who to talk to')),
                        ('created_at', models.DateTimeField(auto_now_add=True)),
                        ('staff', models.ManyToManyField(blank=True, related_name='school_groups', through='classes.GroupStaff', to=settings.AUTH_USER_MODEL)),
                    ],
                    options={
                        'db_table': 'learners_schoolgroup',
                        'ordering': ['-academic_year', 'name', 'id'],
                    },
                ),
                migrations.AddField(
                    model_name='groupstaff',
                    name='group',
                    field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='staff_links', to='classes.schoolgroup'),
                ),
                migrations.CreateModel(
                    name='GroupMembership',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('joined_at', models.DateTimeField(default=django.utils.timezone.now)),
                        ('left_at', models.DateTimeField(blank=True, null=True)),
                        ('added_by', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL)),
                        ('learner', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='group_memberships', to='learners.learner')),
                        ('removed_by', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL)),
                        ('group', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='memberships', to='classes.schoolgroup')),
                    ],
                    options={
                        'db_table': 'learners_groupmembership',
                        'ordering': ['-joined_at', '-id'],
                    },
                ),
                migrations.AddConstraint(
                    model_name='schoolgroup',
                    constraint=models.UniqueConstraint(django.db.models.functions.text.Lower('name'), models.F('academic_year'), name='school_group_unique_name_per_year'),
                ),
                migrations.AddConstraint(
                    model_name='groupstaff',
                    constraint=models.UniqueConstraint(fields=('group', 'user'), name='group_staff_once'),
                ),
                migrations.AddConstraint(
                    model_name='groupmembership',
                    constraint=models.UniqueConstraint(condition=models.Q(('left_at__isnull', True)), fields=('group', 'learner'), name='group_membership_current_once'),
                ),
            ],
            database_operations=[],
        ),
        migrations.RunPython(content_types_follow, content_types_go_back),
    ]
