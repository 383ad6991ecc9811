# Card locks beside password locks: new kinds, and the device a card_device lock names.

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('accounts', '0001_initial'),
    ]

    operations = [
        migrations.AddField(
            model_name='signinlock',
            name='device',
            field=models.CharField(blank=True, default='', max_length=80),
        ),
        migrations.AlterField(
            model_name='signinlock',
            name='kind',
            field=models.CharField(choices=[('account', 'The account, from every address'), ('account_address', 'The account, from one address'), ('address', 'Every account, from one address'), ('card', 'A sign-in card, on every device'), ('card_device', 'Sign-in cards, on one device'), ('card_address', 'Sign-in cards from one address, without a device cookie')], max_length=16),
        ),
    ]
