"""The upstream's failure record and shared health move here from the portal app, tables kept."""

from django.db import migrations, models


MOVED_MODELS = ('upstreamfailure', 'upstreamhealth')


def content_types_follow(apps, schema_editor, old='portal', new='partner_api'):
    ContentType = apps.get_model("contenttypes", "ContentType")
    ContentType.objects.filter(app_label=old, model__in=MOVED_MODELS).update(app_label=new)


def content_types_go_back(apps, schema_editor):
    content_types_follow(apps, schema_editor, old='partner_api', new='portal')


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        ('portal', '0006_safeguarding_and_results_settings'),
        ('contenttypes', '0002_remove_content_type_name'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name='UpstreamHealth',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('base_url', models.CharField(max_length=500, unique=True)),
                        ('unavailable_until', models.DateTimeField(blank=True, null=True)),
                        ('updated_at', models.DateTimeField(auto_now=True)),
                    ],
                    options={
                        'db_table': 'portal_upstreamhealth',
                    },
                ),
                migrations.CreateModel(
                    name='UpstreamFailure',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('endpoint', models.CharField(max_length=40)),
                        ('method', models.CharField(max_length=8)),
                        ('outcome', models.CharField(max_length=200)),
                        ('status', models.IntegerField(blank=True, null=True)),
                        ('attempt', models.PositiveIntegerField(default=1)),
                        ('request_id', models.CharField(blank=True, max_length=100)),
                        ('latency_ms', models.PositiveIntegerField(default=0)),
                        ('at', models.DateTimeField(db_index=True)),
                    ],
                    options={
                        'db_table': 'portal_upstreamfailure',
                        'ordering': ['-at', '-id'],
                        'indexes': [models.Index(fields=['endpoint', 'at'], name='portal_upst_endpoin_1e677e_idx')],
                    },
                ),
            ],
            database_operations=[],
        ),
        migrations.RunPython(content_types_follow, content_types_go_back),
    ]
