"""Passwords of a bulk registration: generated for children to type, encrypted while they wait."""

import secrets

from django.contrib.auth import get_user_model
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.views.decorators.debug import sensitive_variables

from portal.encryption import decrypt, encrypt

# Lower-case letters and digits without look-alikes (no i, l, o, 0, 1): easy to read aloud
# and to type on a tablet. Three groups of four: 12 of 31 symbols, about 59 bits.
PASSWORD_ALPHABET = "abcdefghjkmnpqrstuvwxyz23456789"
PASSWORD_GROUPS = 3
PASSWORD_GROUP_LENGTH = 4
_HKDF_INFO = b"partner-portal bulk registration passwords"


@sensitive_variables("password")
def password_encrypt(password: str) -> str:
    """Return the password encrypted for storage until it is used."""
    return encrypt(password, purpose=_HKDF_INFO)


def password_decrypt(token: str) -> str:
    """Return the password stored by `password_encrypt`."""
    return decrypt(token, purpose=_HKDF_INFO)


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
