"""Rename every account to its username's normal form, unless that makes two accounts one.

Registration used to keep a username as typed ("ＪＯＨＮ", "Émile") while sign-in normalised
what was typed, so some accounts could never sign in and others were reached by a look-alike.
From now on usernames are stored in normal form (accounts/usernames.py). An account whose normal
form is shared with another account is left as it is and reported: staff rename one of them
(each still signs in with its name typed exactly).
"""

import logging
import unicodedata
from collections import defaultdict

from django.conf import settings
from django.db import migrations

logger = logging.getLogger("learners.migrations")


def normal_form(raw: str) -> str:
    """accounts.usernames.username_normal_form as it was when this migration was written."""
    folded = unicodedata.normalize("NFKC", raw).casefold()
    return unicodedata.normalize("NFKC", folded).strip()


def normalise_usernames(apps, schema_editor):
    User = apps.get_model(settings.AUTH_USER_MODEL)
    Learner = apps.get_model("learners", "Learner")
    accounts = dict(User.objects.values_list("username", "pk"))
    learners = dict(Learner.objects.values_list("username", "user_id"))
    sharing = defaultdict(list)
    for username in accounts:
        sharing[normal_form(username)].append(username)
    collisions = []
    for normal, usernames in sorted(sharing.items()):
        (username, *others) = usernames
        pk = accounts[username]
        # Two accounts with one normal form, or the name already held as it is by another
        # account or learner: renaming would break the unique names, so report them.
        held = accounts.get(normal, pk) != pk or learners.get(normal, pk) != pk
        if others or held:
            collisions.append(", ".join(sorted({*usernames, normal} if held else usernames)))
        elif username != normal:
            User.objects.filter(pk=pk).update(username=normal)
            Learner.objects.filter(user_id=pk).update(username=normal)
    if collisions:
        report = "; ".join(collisions)
        print(f"\n  Usernames that now collide (left unchanged, rename one): {report}")
        logger.warning("Usernames that now collide (left unchanged, rename one): %s", report)


class Migration(migrations.Migration):
    dependencies = [
        ("learners", "0008_school_groups"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [migrations.RunPython(normalise_usernames, migrations.RunPython.noop)]
