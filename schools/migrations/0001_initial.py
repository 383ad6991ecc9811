"""The partner's settings move here from the portal app, keeping their table and row."""

import datetime
import django.core.validators
import kit.addresses
from django.db import migrations, models


MOVED_MODELS = ('partnersettings',)


def content_types_follow(apps, schema_editor, old='portal', new='schools'):
    ContentType = apps.get_model("contenttypes", "ContentType")
    ContentType.objects.filter(app_label=old, model__in=MOVED_MODELS).update(app_label=new)


def content_types_go_back(apps, schema_editor):
    content_types_follow(apps, schema_editor, old='schools', new='portal')


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
                    name='PartnerSettings',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('teachers_see_results', models.BooleanField(default=False, verbose_name="Teachers see their groups' results")),
                        ('admins_see_results', models.BooleanField(default=False, verbose_name="Partner admins see every learner's results")),
                        ('card_window_max_minutes', models.PositiveSmallIntegerField(default=90, validators=[django.core.validators.MinValueValidator(5), django.core.validators.MaxValueValidator(480)], verbose_name="Longest time a class's card sign-in may stay open (minutes)")),
                        ('card_networks', models.TextField(blank=True, help_text='Address ranges, one per line, for example 203.0.113.0/24. Leave empty to allow cards from any network.', validators=[kit.addresses.validate_networks], verbose_name='Networks that may sign in with a card')),
                        ('primary_cards_only', models.BooleanField(default=False, verbose_name='Primary pupils sign in only with their sign-in card')),
                        ('needs_help_routine', models.TextField(default='No\nYes', help_text='One per line. These open a follow-up but send no alert.', verbose_name='Routine needs-help values')),
                        ('needs_help_priority', models.TextField(default='Yes - priority', help_text='One per line. These alert the safeguarding leads at once.', verbose_name='Priority needs-help values')),
                        ('risk_levels_routine', models.TextField(default='Low\nModerate\nMedium', verbose_name='Routine risk levels')),
                        ('risk_levels_priority', models.TextField(default='High', verbose_name='Priority risk levels')),
                        ('alert_escalate_minutes', models.PositiveSmallIntegerField(default=30, validators=[django.core.validators.MinValueValidator(5), django.core.validators.MaxValueValidator(480)], verbose_name='Escalate an alert not acknowledged within (school-hours minutes)')),
                        ('school_day_starts', models.TimeField(default=datetime.time(8, 30), verbose_name='School day starts')),
                        ('school_day_ends', models.TimeField(default=datetime.time(16, 0), verbose_name='School day ends')),
                        ('adults_without_alerts', models.BooleanField(default=False, verbose_name='Results of learners aged 18 or over raise no alerts')),
                        ('hide_results_from_learners', models.BooleanField(default=False, verbose_name='Learners do not see their own results')),
                        ('show_scores_to_learners', models.BooleanField(default=False, verbose_name='Learners see their LOA score and risk level')),
                        ('school_contact', models.CharField(blank=True, help_text='For example: Mrs Khan, our safeguarding lead, in room 12. A class may name its own.', max_length=200, verbose_name='Who a learner can talk to at school')),
                        ('helplines', models.TextField(default='Childline: call 0800 1111, free, any time\nShout: text SHOUT to 85258', help_text="One per line. Shown on every learner's results page.", verbose_name='Helplines for when school is closed')),
                        ('retention_years', models.PositiveSmallIntegerField(default=3, validators=[django.core.validators.MinValueValidator(1), django.core.validators.MaxValueValidator(25)], verbose_name="Keep learners' answers and results for (years after last activity)")),
                        ('updated_at', models.DateTimeField(auto_now=True)),
                    ],
                    options={
                        'verbose_name_plural': 'partner settings',
                        'db_table': 'portal_partnersettings',
                    },
                ),
            ],
            database_operations=[],
        ),
        migrations.RunPython(content_types_follow, content_types_go_back),
    ]
