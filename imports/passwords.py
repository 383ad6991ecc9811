"""Passwords of a bulk registration, encrypted while they wait (learners.passwords makes them)."""

from django.views.decorators.debug import sensitive_variables

from kit.encryption import decrypt, encrypt

_HKDF_INFO = b"partner-portal bulk registration passwords"


@sensitive_variables("password")
def password_encrypt(password: str) -> str:
    """Return the password encrypted for storage until it is used."""
    return encrypt(password, purpose=_HKDF_INFO)


def password_decrypt(token: str) -> str:
    """Return the password stored by `password_encrypt`."""
    return decrypt(token, purpose=_HKDF_INFO)
