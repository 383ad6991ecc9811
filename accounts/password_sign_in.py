"""Whether a member of staff may still sign in with a password, or only with the school's account.

A school's admins may turn staff passwords off (PartnerSettings.staff_passwords_off) once single
sign-on is set up; the rule holds only while a provider is configured, so that removing the
provider never locks everyone out. A member of staff of several schools (a trust role works in
all of them) is held to it if any of their schools turned passwords off: their password would
open that school's records too. Superusers keep a password for recovery; learners are not staff.
"""

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser

from accounts.access import learner_account, schools_of
from schools.models import PartnerSettings


def single_sign_on_configured() -> bool:
    """Return whether the environment configured a school identity provider.

    The same reading of SOCIALACCOUNT_PROVIDERS as the sign-in page's buttons
    (signin.providers.offered_providers).
    """
    providers = settings.SOCIALACCOUNT_PROVIDERS
    return "google" in providers or bool(providers.get("openid_connect", {}).get("APPS"))


def schools_without_passwords() -> frozenset[int]:
    """Return the ids of the schools whose staff may not sign in with a password now."""
    if not single_sign_on_configured():
        return frozenset()
    return frozenset(
        PartnerSettings.objects.filter(staff_passwords_off=True).values_list("school_id", flat=True)
    )


def password_sign_in_off(user: AbstractBaseUser, off: frozenset[int] | None = None) -> bool:
    """Return whether the account may not sign in with its password (`off`: read if None)."""
    if user.is_superuser or learner_account(user) is not None:
        return False
    off = schools_without_passwords() if off is None else off
    return bool(off) and any(school.pk in off for school in schools_of(user))
