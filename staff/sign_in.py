"""How each member of staff signs in, and what an admin may change about it.

The staff pages show, for each account, the school identities linked to it (allauth's
SocialAccount rows), whether it still has a password, and its second factor (allauth's
Authenticators). An admin may unlink an identity, reset another's second factor (they set up a
new one at their next sign-in) and end another's sessions; anyone on staff may sign out
everywhere. Every change is audited with the actor and the account.

Who may act on whom is the staff edit page's rule (staff_account_managed_by), and the changes
that follow the person into every school they work in (a second factor, an identity) are, for
someone who also works in another school, the trust admins' (as their email address is).
"""

from dataclasses import dataclass, field

from allauth.mfa.models import Authenticator
from allauth.socialaccount.models import SocialAccount
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils.translation import gettext as _

from accounts.access import is_trust_admin
from accounts.models import SchoolRole
from accounts.password_sign_in import password_sign_in_off
from accounts.session_ending import sessions_end
from audit.models import AuditEvent
from audit.services import audit_record
from staff.services import StaffAccountRefused

Action = AuditEvent.Action

# Second factors that count (recovery codes only stand in for a lost one: signin.second_factor).
FACTORS = (Authenticator.Type.TOTP, Authenticator.Type.WEBAUTHN)


def identity_label(provider: str) -> str:
    """Name a school identity by its provider, as the staff pages show it."""
    names = {
        "google": _("Google"),
        "microsoft": _("Microsoft"),
        "oidc": _("trust or authority"),
    }
    return _("School account (%(provider)s)") % {"provider": names.get(provider, provider)}


def factor_label(kind: str) -> str:
    """Name a kind of second factor in words."""
    return {
        Authenticator.Type.TOTP: _("authenticator app"),
        Authenticator.Type.WEBAUTHN: _("passkey or security key"),
    }.get(kind, kind)


@dataclass(frozen=True)
class Identity:
    """One school identity linked to an account: its row's id and how it is named."""

    pk: int
    provider: str
    label: str


@dataclass(frozen=True)
class SignInMethods:
    """How one account signs in: school identities, a password, and its second factors."""

    identities: list[Identity] = field(default_factory=list)
    password: bool = False
    password_off: bool = False  # it has one, but the school's setting refuses it
    factors: list[str] = field(default_factory=list)  # words, e.g. "authenticator app"
    recovery_codes: bool = False

    @property
    def second_factor(self) -> bool:
        return bool(self.factors)


def sign_in_methods(account: AbstractBaseUser, off: frozenset[int] | None = None) -> SignInMethods:
    """Return how the account signs in (prefetch socialaccount_set and authenticator_set).

    `off`: the schools whose staff passwords are off (accounts.password_sign_in), read if None.
    """
    identities = [
        Identity(row.pk, row.provider, identity_label(row.provider))
        for row in sorted(account.socialaccount_set.all(), key=lambda row: row.pk)
    ]
    kinds = {row.type for row in account.authenticator_set.all()}
    password = account.has_usable_password()
    return SignInMethods(
        identities=identities,
        password=password,
        password_off=password and password_sign_in_off(account, off),
        factors=[factor_label(kind) for kind in FACTORS if kind in kinds],
        recovery_codes=Authenticator.Type.RECOVERY_CODES in kinds,
    )


def _refuse_if_elsewhere(
    account: AbstractBaseUser, actor: AbstractBaseUser, school_id: int | None
) -> None:
    """Refuse one school's admin a change to someone who also works in another school."""
    if is_trust_admin(actor):
        return
    if SchoolRole.objects.filter(user=account).exclude(school_id=school_id).exists():
        raise StaffAccountRefused(
            _(
                "This member of staff also works in another school: ask a trust admin to "
                "change how they sign in."
            )
        )


@transaction.atomic
def staff_identity_unlink(
    *,
    account: AbstractBaseUser,
    identity_id: int,
    school_id: int | None,
    unlinked_by: AbstractBaseUser,
    address: str | None,
) -> str:
    """Unlink one school identity from the account; return its label (audited).

    The person may sign in with it again only if the school's rules link it anew.
    """
    identity = SocialAccount.objects.filter(pk=identity_id, user=account).first()
    if identity is None:
        raise StaffAccountRefused(_("That school account is not linked to this account."))
    _refuse_if_elsewhere(account, unlinked_by, school_id)
    identity.delete()
    audit_record(
        actor=unlinked_by,
        address=address,
        action=Action.STAFF_CHANGED,
        account=account.get_username(),
        school_account_unlinked=identity.provider,
    )
    return identity_label(identity.provider)


@transaction.atomic
def staff_second_factor_reset(
    *,
    account: AbstractBaseUser,
    school_id: int | None,
    reset_by: AbstractBaseUser,
    address: str | None,
) -> int:
    """Remove the account's second factors and recovery codes, and end its sessions.

    Return how many were removed (0: nothing to reset, nothing done). Never one's own: a
    stolen session must not be able to swap its owner's factor for the thief's.
    """
    if account.pk == reset_by.pk:
        raise StaffAccountRefused(_("You cannot reset your own second factor: ask another admin."))
    _refuse_if_elsewhere(account, reset_by, school_id)
    removed, _by_model = Authenticator.objects.filter(user=account).delete()
    if not removed:
        return 0
    # Signed in with the old factor until now: they sign in again, and set up a new one.
    ended = sessions_end(account.pk)
    audit_record(
        actor=reset_by,
        address=address,
        action=Action.STAFF_CHANGED,
        account=account.get_username(),
        second_factor_reset=True,
        sessions_ended=ended,
    )
    return removed


def staff_sessions_end(
    *, account: AbstractBaseUser, ended_by: AbstractBaseUser, address: str | None
) -> int:
    """End every session of another member of staff; return how many (audited)."""
    if account.pk == ended_by.pk:
        raise StaffAccountRefused(_("To end your own sessions, use “Sign out everywhere” instead."))
    ended = sessions_end(account.pk)
    audit_record(
        actor=ended_by,
        address=address,
        action=Action.STAFF_CHANGED,
        account=account.get_username(),
        sessions_ended=ended,
    )
    return ended


def own_sessions_end(*, user: AbstractBaseUser, address: str | None) -> int:
    """End every session of the user's own, the current one too; return how many (audited)."""
    ended = sessions_end(user.pk)
    audit_record(
        actor=user,
        address=address,
        action=Action.STAFF_CHANGED,
        account=user.get_username(),
        signed_out_everywhere=True,
        sessions_ended=ended,
    )
    return ended
