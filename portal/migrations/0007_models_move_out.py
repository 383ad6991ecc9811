"""The portal app keeps no models: they moved to accounts, schools and partner_api (state only)."""

from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ('portal', '0006_safeguarding_and_results_settings'),
        ('accounts', '0001_initial'),
        ('schools', '0001_initial'),
        ('partner_api', '0001_initial'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.DeleteModel(
                    name='PartnerSettings',
                ),
                migrations.RemoveField(
                    model_name='signinlock',
                    name='lifted_by',
                ),
                migrations.RemoveField(
                    model_name='signinlock',
                    name='user',
                ),
                migrations.RemoveField(
                    model_name='staffprofile',
                    name='user',
                ),
                migrations.DeleteModel(
                    name='UpstreamFailure',
                ),
                migrations.DeleteModel(
                    name='UpstreamHealth',
                ),
                migrations.DeleteModel(
                    name='SignInLock',
                ),
                migrations.DeleteModel(
                    name='StaffProfile',
                ),
            ],
            database_operations=[],
        ),
    ]
