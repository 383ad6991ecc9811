"""A card's two secrets: the QR's (after the `#`) and the code a pupil can type instead."""

import re
import secrets

from django.views.decorators.debug import sensitive_variables

from kit.encryption import decrypt, encrypt, keyed_digest

# Upper-case letters and digits with every look-alike left out (0 O Q D-like, 1 I L, 2 Z,
# 5 S, 8 B, U V, G 6): 21 symbols, so ten of them are about 44 bits.
CODE_ALPHABET = "ACDEFHJKMNPRTWXY34679"
CODE_LENGTH = 10
# 18 random bytes: 144 bits, 24 URL-safe characters after the `#`.
SECRET_BYTES = 18
SECRET_PATTERN = re.compile(r"^[A-Za-z0-9_-]{16,128}$")

_PURPOSE_ENCRYPT = b"partner-portal sign-in cards: stored secrets"
_PURPOSE_DIGEST = b"partner-portal sign-in cards: lookup"


def secret_new() -> str:
    """Return a new QR secret."""
    return secrets.token_urlsafe(SECRET_BYTES)


def code_new() -> str:
    """Return a new typed code (in its normal form: upper case, no separators)."""
    return "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))


def code_normal_form(typed: str) -> str:
    """Return a typed code as stored: upper case, without spaces, hyphens or other separators."""
    return "".join(char for char in typed.upper() if char.isalnum())[:64]


def code_display(code: str) -> str:
    """Return a code as printed, in two groups of five ("ACDEF-HJKMN")."""
    half = len(code) // 2
    return f"{code[:half]}-{code[half:]}"


@sensitive_variables("value")
def digest(kind: str, value: str) -> str:
    """Return the lookup digest of a secret or a code (kind "secret" or "code")."""
    return keyed_digest(f"{kind}:{value}", purpose=_PURPOSE_DIGEST)


@sensitive_variables("value")
def seal(value: str) -> str:
    """Return a secret or code encrypted for storage."""
    return encrypt(value, purpose=_PURPOSE_ENCRYPT)


def unseal(token: str) -> str:
    """Return a value `seal` stored."""
    return decrypt(token, purpose=_PURPOSE_ENCRYPT)
