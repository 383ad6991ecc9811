"""Keys derived from SECRET_KEY, one per purpose: encryption of stored secrets, keyed digests."""

import base64
import functools
import hashlib
import hmac

from cryptography.fernet import Fernet
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from django.conf import settings


@functools.cache
def _derived_key(secret_key: str, purpose: bytes) -> bytes:
    """Return 32 bytes of key for one purpose (HKDF), so no two uses share a key."""
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=purpose).derive(
        secret_key.encode()
    )


@functools.cache
def _fernet(secret_key: str, purpose: bytes) -> Fernet:
    return Fernet(base64.urlsafe_b64encode(_derived_key(secret_key, purpose)))


def encrypt(value: str, *, purpose: bytes) -> str:
    """Return `value` encrypted (Fernet: AES with an HMAC) under the purpose's key."""
    return _fernet(settings.SECRET_KEY, purpose).encrypt(value.encode()).decode("ascii")


def decrypt(token: str, *, purpose: bytes) -> str:
    """Return the value `encrypt` stored; cryptography's InvalidToken if it was tampered with."""
    return _fernet(settings.SECRET_KEY, purpose).decrypt(token.encode("ascii")).decode()


def keyed_digest(value: str, *, purpose: bytes) -> str:
    """Return HMAC-SHA256 of `value` (hex): a fast lookup key, useless without SECRET_KEY."""
    key = _derived_key(settings.SECRET_KEY, purpose)
    return hmac.new(key, value.encode(), hashlib.sha256).hexdigest()
