"""Which account a school identity signs in to, or why it may not: the rules of linking.

Accounts are made by staff (or the roster), never by signing in. An identity the portal has not
seen links to an existing account only when the provider vouches for its email, it comes from
the school's domain or tenant, and exactly one active account has that email: a member of
staff's (User.email) or a pupil's (their learner record's email, or User.email). A pupil must
be in secondary or further education. An identity already linked is checked again at every
sign-in: its domain or tenant, its account still active, and its email not now naming an
account of the other kind (a pupil's identity never reaches a staff account, nor the reverse).
"""

from dataclasses import dataclass
from enum import StrEnum

from django.contrib.auth import get_user_model
from django.contrib.auth.base_user import AbstractBaseUser
from django.db.models import Q, QuerySet
from django.http import HttpRequest
from django.utils.functional import Promise
from django.utils.translation import gettext_lazy as _

from accounts.access import learner_account
from audit.services import audit_record
from kit.addresses import client_address
from partner_api.levels import Level
from signin.claims import SchoolIdentity

# The learners who may use a school account: secondary and further education, never primary.
SCHOOL_ACCOUNT_LEVELS = frozenset({Level.SECONDARY, Level.FURTHER_EDUCATION})

# Enough to tell one account from several, without reading a crowd of them.
NAMED_ACCOUNTS_READ = 2
# learners.models.Learner.Status.ACTIVE (the learners app sits above signin): a pupil's
# registration completed, as `account_active` asks.
LEARNER_REGISTERED = "active"


class Refusal(StrEnum):
    """Why a school identity may not sign in (kept in the audit trail as given)."""

    NOT_VERIFIED = "email_not_verified"
    DOMAIN = "domain_not_allowed"
    NO_ACCOUNT = "no_account"
    SEVERAL = "several_accounts"
    DEACTIVATED = "account_deactivated"
    PRIMARY = "primary_pupil"
    KIND_CHANGED = "account_kind_changed"
    OTHER_ACCOUNT = "other_account"


@dataclass(frozen=True)
class RefusalWords:
    """What the refusal page says: what happened, and what to ask the school's portal admin."""

    title: Promise
    advice: Promise


WORDS = {
    Refusal.NOT_VERIFIED: RefusalWords(
        _("Your school account's email address is not confirmed"),
        _(
            "Your school's sign-in service did not confirm the email address of this account, "
            "so the portal cannot tell whose it is. Ask your school's portal admin to check that "
            "the account's email address is verified (for a Microsoft account: that it is a "
            "member of the school's directory, not a guest)."
        ),
    ),
    Refusal.DOMAIN: RefusalWords(
        _("This account is not one of your school's"),
        _(
            "The portal accepts accounts from your school's own domain only. Sign in with your "
            "school account, not a personal one. If this is your school account, ask your "
            "school's portal admin to add its domain to the portal's settings."
        ),
    ),
    Refusal.NO_ACCOUNT: RefusalWords(
        _("No portal account has this email address"),
        _(
            "Signing in with a school account never makes a portal account. Ask your school's "
            "portal admin to put this email address on your portal account (for staff) or on "
            "your learner record (for pupils), then sign in again."
        ),
    ),
    Refusal.SEVERAL: RefusalWords(
        _("More than one portal account has this email address"),
        _(
            "The portal cannot tell which account is yours. Ask your school's portal admin to "
            "keep this email address on one account only, then sign in again."
        ),
    ),
    Refusal.DEACTIVATED: RefusalWords(
        _("Your portal account is not active"),
        _(
            "The portal account for this email address has been closed. Ask your school's "
            "portal admin whether it should be opened again."
        ),
    ),
    Refusal.PRIMARY: RefusalWords(
        _("Primary pupils sign in with their card or password"),
        _(
            "School accounts are for staff and for pupils in secondary school or college. "
            "Use your sign-in card, or the username and password your teacher gave you. Ask "
            "your teacher or your school's portal admin if you do not have them."
        ),
    ),
    Refusal.KIND_CHANGED: RefusalWords(
        _("This school account's email address now belongs to another account"),
        _(
            "This school account was linked to a portal account, but its email address is now "
            "on an account of another kind (a pupil's instead of a member of staff's, or the "
            "reverse). Ask your school's portal admin to unlink it and check the addresses."
        ),
    ),
    Refusal.OTHER_ACCOUNT: RefusalWords(
        _("This school account belongs to another portal account"),
        _(
            "Sign out, then sign in with this school account to reach its own portal account. "
            "Ask your school's portal admin if that is not what you expect."
        ),
    ),
}


class IdentityRefused(Exception):
    """A school identity may not sign in: why, and the account concerned if there is one."""

    def __init__(self, reason: Refusal, account: AbstractBaseUser | None = None):
        super().__init__(reason.value)
        self.reason = reason
        self.account = account

    @property
    def words(self) -> RefusalWords:
        """Return what the refusal page says."""
        return WORDS[self.reason]


def account_kind(user: AbstractBaseUser) -> str:
    """Return "pupil" for a learner's account, else "staff"."""
    return "pupil" if learner_account(user) is not None else "staff"


def account_active(user: AbstractBaseUser) -> bool:
    """Return whether the account may sign in: active; a learner's registered and not left."""
    learner = learner_account(user)
    return user.is_active and (
        learner is None or (learner.is_registered and learner.left_at is None)
    )


def accounts_with_email(email: str) -> QuerySet:
    """Return the accounts (any state) whose email, or whose learner record's, is this one."""
    return (
        get_user_model()
        .objects.filter(Q(email__iexact=email) | Q(learner__email__iexact=email))
        .select_related("learner")
        .distinct()
        .order_by("pk")
    )


def active_accounts_with_email(email: str) -> QuerySet:
    """Return the accounts with this email that may sign in (`account_active`, as a query).

    Read apart from the rest: however many closed accounts share the address, two active
    ones are always seen as two.
    """
    return accounts_with_email(email).filter(
        Q(learner__isnull=True)
        | Q(learner__status=LEARNER_REGISTERED, learner__left_at__isnull=True),
        is_active=True,
    )


def identity_account(
    identity: SchoolIdentity, *, linked: AbstractBaseUser | None
) -> AbstractBaseUser:
    """Return the account this identity signs in to, or raise IdentityRefused saying why."""
    if not identity.domain_allowed:
        raise IdentityRefused(Refusal.DOMAIN, linked)
    if not identity.email or not identity.email_verified:
        raise IdentityRefused(Refusal.NOT_VERIFIED, linked)
    active = active_accounts_with_email(identity.email)
    if linked is not None:
        if not account_active(linked):
            raise IdentityRefused(Refusal.DEACTIVATED, linked)
        # An active account of the other kind: a pupil's has a learner record, staff's not.
        if active.filter(learner__isnull=account_kind(linked) == "pupil").exists():
            raise IdentityRefused(Refusal.KIND_CHANGED, linked)
        account = linked
    else:
        found = list(active[:NAMED_ACCOUNTS_READ])
        if len(found) > 1:
            raise IdentityRefused(Refusal.SEVERAL)
        if not found:
            closed = list(accounts_with_email(identity.email)[:NAMED_ACCOUNTS_READ])
            if closed:
                raise IdentityRefused(Refusal.DEACTIVATED, closed[0] if len(closed) == 1 else None)
            raise IdentityRefused(Refusal.NO_ACCOUNT)
        account = found[0]
    learner = learner_account(account)
    if learner is not None and learner.level not in SCHOOL_ACCOUNT_LEVELS:
        raise IdentityRefused(Refusal.PRIMARY, account)
    return account


def identity_refused_record(
    request: HttpRequest, identity: SchoolIdentity, refusal: IdentityRefused
) -> None:
    """Audit a refused school sign-in: the provider, the reason, the email's domain only."""
    learner = learner_account(refusal.account) if refusal.account is not None else None
    audit_record(
        actor=None,
        address=client_address(request),
        action="sso_refused",
        learner=learner,
        provider=identity.provider,
        reason=refusal.reason.value,
        domain=identity.email_domain,
    )


def identity_linked_record(
    request: HttpRequest, identity: SchoolIdentity, account: AbstractBaseUser
) -> None:
    """Audit a school identity's first link to its account."""
    audit_record(
        actor=account,
        address=client_address(request),
        action="sso_linked",
        learner=learner_account(account),
        provider=identity.provider,
        domain=identity.email_domain,
        kind=account_kind(account),
    )
