"""Passwords the portal makes for learners: easy to read aloud, shown to staff only once.

Made for a bulk registration's rows left without one (imports.checks), and on the registration
form and the new-password page when staff tick "Make a password for me". A password made on a
page waits in the session, encrypted, until the learner's record shows it once.
"""

import secrets

from cryptography.fernet import InvalidToken
from django.contrib.auth import get_user_model
from django.contrib.auth.password_validation import validate_password
from django.contrib.sessions.backends.base import SessionBase
from django.core.exceptions import ValidationError
from django.views.decorators.debug import sensitive_variables

from kit.encryption import decrypt, encrypt

# Lower-case letters and digits without look-alikes (no i, l, o, 0, 1): easy to read aloud
# and to type on a tablet. Three groups of four: 12 of 31 symbols, about 59 bits.
PASSWORD_ALPHABET = "abcdefghjkmnpqrstuvwxyz23456789"
PASSWORD_GROUPS = 3
PASSWORD_GROUP_LENGTH = 4
PASSWORD_SEPARATOR = "-"

_SESSION_KEY = "learners_password_to_show"
_HKDF_INFO = b"partner-portal password shown once"


@sensitive_variables("password")
def password_generate(
    *, username: str, first_name: str = "", last_name: str = "", email: str = ""
) -> str:
    """Return a strong, readable password that passes the portal's password validators."""
    probe = get_user_model()(
        username=username, first_name=first_name, last_name=last_name, email=email
    )
    while True:
        groups = (
            "".join(secrets.choice(PASSWORD_ALPHABET) for _ in range(PASSWORD_GROUP_LENGTH))
            for _ in range(PASSWORD_GROUPS)
        )
        password = PASSWORD_SEPARATOR.join(groups)
        try:
            validate_password(password, user=probe)
        except ValidationError:
            continue  # vanishingly rare (e.g. too like the username): draw again
        return password


def password_spelled(password: str) -> list[list[str]]:
    """Return a made password's groups as characters, to be read aloud one by one."""
    return [list(group) for group in password.split(PASSWORD_SEPARATOR)]


@sensitive_variables("password")
def password_show_once(session: SessionBase, *, learner_id: int, password: str) -> None:
    """Keep a made password, encrypted, until the learner's record shows it."""
    # One per learner: passwords made for two learners in two tabs both wait to be shown.
    waiting = dict(session.get(_SESSION_KEY) or {})
    waiting[str(learner_id)] = encrypt(password, purpose=_HKDF_INFO)
    session[_SESSION_KEY] = waiting


def password_to_show(session: SessionBase, *, learner_id: int) -> str | None:
    """Return the made password waiting for this learner's record, and forget it."""
    waiting = dict(session.get(_SESSION_KEY) or {})
    token = waiting.pop(str(learner_id), None)
    if token is None:
        return None
    if waiting:
        session[_SESSION_KEY] = waiting
    else:
        del session[_SESSION_KEY]
    try:
        return decrypt(token, purpose=_HKDF_INFO)
    except InvalidToken:
        return None  # the secret key changed meanwhile: nothing to show
