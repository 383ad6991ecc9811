"""Passwords of a bulk registration: generated for children to type, encrypted while they wait."""

import base64
import functools
import secrets

from cryptography.fernet import Fernet
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.views.decorators.debug import sensitive_variables

# Lower-case letters and digits without look-alikes (no i, l, o, 0, 1): easy to read aloud
# and to type on a tablet. Three groups of four: 12 of 31 symbols, about 59 bits.
PASSWORD_ALPHABET = "abcdefghjkmnpqrstuvwxyz23456789"
PASSWORD_GROUPS = 3
PASSWORD_GROUP_LENGTH = 4
_HKDF_INFO = b"partner-portal bulk registration passwords"


@functools.cache
def _fernet(secret_key: str) -> Fernet:
    """Return the cipher for a SECRET_KEY (a key of its own, derived with HKDF)."""
    key = HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=_HKDF_INFO).derive(
        secret_key.encode()
    )
    return Fernet(base64.urlsafe_b64encode(key))


@sensitive_variables("password")
def password_encrypt(password: str) -> str:
    """Return the password encrypted for storage until it is used."""
    return _fernet(settings.SECRET_KEY).encrypt(password.encode()).decode("ascii")


def password_decrypt(token: str) -> str:
    """Return the password stored by `password_encrypt`."""
    return _fernet(settings.SECRET_KEY).decrypt(token.encode("ascii")).decode()


@sensitive_variables("password")
def password_generate(*, username: str, first_name: str = "", last_name: str = "") -> str:
    """Return a strong, readable password that passes the portal's password validators."""
    probe = get_user_model()(username=username, first_name=first_name, last_name=last_name)
    while True:
        groups = (
            "".join(secrets.choice(PASSWORD_ALPHABET) for _ in range(PASSWORD_GROUP_LENGTH))
            for _ in range(PASSWORD_GROUPS)
        )
        password = "-".join(groups)
        try:
            validate_password(password, user=probe)
        except ValidationError:
            continue  # vanishingly rare (e.g. too like the username): draw again
        return password
