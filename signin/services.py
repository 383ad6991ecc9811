"""What the signin app holds about one account: its school identities and second factors."""

from allauth.mfa.models import Authenticator
from allauth.socialaccount.models import SocialAccount
from django.db import transaction


def _iso(value) -> str | None:
    return value.isoformat() if value is not None else None


def sign_in_identities_forget(user_id: int) -> None:
    """Delete the account's linked school identities and second factors (inside a transaction).

    A school identity keeps what its provider said (name, email, subject), and a factor its
    secret: an erased learner's account keeps neither. allauth's tokens go with the identity.
    """
    if not transaction.get_connection().in_atomic_block:
        raise transaction.TransactionManagementError(
            "sign_in_identities_forget runs inside the caller's transaction"
        )
    SocialAccount.objects.filter(user_id=user_id).delete()
    Authenticator.objects.filter(user_id=user_id).delete()


def sign_in_identities_export(user_id: int) -> dict:
    """Return the account's school identities (with the provider's claims) and factors' kinds.

    A factor's secret, recovery codes and passkey keys are never exported: only what it is
    and when it was added and last used.
    """
    identities = SocialAccount.objects.filter(user_id=user_id).order_by("pk")
    factors = Authenticator.objects.filter(user_id=user_id).order_by("pk")
    return {
        "school_accounts": [
            {
                "provider": identity.provider,
                "id_at_provider": identity.uid,
                "linked_at": _iso(identity.date_joined),
                "last_signed_in_at": _iso(identity.last_login),
                "details_from_provider": identity.extra_data,
            }
            for identity in identities
        ],
        "second_factors": [
            {
                "type": factor.type,
                "added_at": _iso(factor.created_at),
                "last_used_at": _iso(factor.last_used_at),
            }
            for factor in factors
        ],
    }


def email_change_unlinks(before: str, after: str) -> bool:
    """Return whether an account's new email is another address (linking ignores case)."""
    return before.strip().casefold() != after.strip().casefold()


def sign_in_identities_unlink(user_id: int) -> bool:
    """Unlink every school identity from the account; return whether there was one.

    Identities are linked by email, so an account whose email an admin changes loses them:
    else whoever holds the school account of the old address keeps signing in to it. Each
    links anew, under the linking rules, at its next sign-in.
    """
    deleted, _by_model = SocialAccount.objects.filter(user_id=user_id).delete()
    return deleted > 0
