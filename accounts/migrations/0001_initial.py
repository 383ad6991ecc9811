"""Staff profiles and sign-in locks move here from the portal app, keeping their tables.

State only: the tables keep their names (portal_staffprofile, portal_signinlock); the content
types follow, and with them permissions and the admin's history.
"""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


MOVED_MODELS = ('staffprofile', 'signinlock')


def content_types_follow(apps, schema_editor, old='portal', new='accounts'):
    ContentType = apps.get_model("contenttypes", "ContentType")
    ContentType.objects.filter(app_label=old, model__in=MOVED_MODELS).update(app_label=new)


def content_types_go_back(apps, schema_editor):
    content_types_follow(apps, schema_editor, old='accounts', new='portal')


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        ('portal', '0006_safeguarding_and_results_settings'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
        ('contenttypes', '0002_remove_content_type_name'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name='StaffProfile',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('role', models.CharField(choices=[('admin', 'Partner admin'), ('teacher', 'Teacher'), ('head_of_year', 'Head of Year (pastoral lead)'), ('dsl', 'Designated safeguarding lead'), ('deputy_dsl', 'Deputy safeguarding lead')], max_length=20)),
                        ('user', models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, related_name='staff_profile', to=settings.AUTH_USER_MODEL)),
                    ],
                    options={
                        'db_table': 'portal_staffprofile',
                    },
                ),
                migrations.CreateModel(
                    name='SignInLock',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('kind', models.CharField(choices=[('account', 'The account, from every address'), ('account_address', 'The account, from one address'), ('address', 'Every account, from one address')], max_length=16)),
                        ('address', models.GenericIPAddressField(blank=True, null=True)),
                        ('scope_ref', models.CharField(editable=False, max_length=120)),
                        ('locked_until', models.DateTimeField()),
                        ('created_at', models.DateTimeField(auto_now_add=True)),
                        ('lifted_at', models.DateTimeField(blank=True, null=True)),
                        ('lifted_by', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL)),
                        ('user', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.CASCADE, related_name='sign_in_locks', to=settings.AUTH_USER_MODEL)),
                    ],
                    options={
                        'db_table': 'portal_signinlock',
                        'ordering': ['locked_until', 'id'],
                        'indexes': [models.Index(condition=models.Q(('lifted_at__isnull', True)), fields=['locked_until'], name='sign_in_lock_current_idx')],
                    },
                ),
            ],
            database_operations=[],
        ),
        migrations.RunPython(content_types_follow, content_types_go_back),
    ]
