"""Answer pictures at the upstream's addresses: which the portal may fetch, and fetching one.

An `Icon` may be an address. The portal fetches it itself (the learner's browser never does):
any `https` address on the public internet, on the default port, with no user name or password
in it; or any address on the configured upstream's own origin (scheme, host and port of
PARTNER_API_BASE_URL), which the portal already trusts, wherever that host is. Nothing else: no
other plain `http`, no other port, no address that is or resolves to a loopback, private,
link-local or reserved IP, so an upstream's content cannot make the portal call into the
school's own network. Only the upstream's origin is sent the API key.
"""

from __future__ import annotations

from ipaddress import ip_address
from urllib.parse import SplitResult, urlsplit

from django.conf import settings

from kit.addresses import is_public_ip
from partner_api.assumptions import API_KEY_HEADER
from partner_api.fetching import FetchRefused, fetch_small_file, not_public, resolve

__all__ = ["FetchRefused", "fetch_picture", "picture_fetchable"]

ADDRESS_LIMIT = 2048
DEFAULT_PORTS = {"http": 80, "https": 443}


def picture_fetchable(address: object) -> bool:
    """Say whether the portal may fetch this icon address (without looking the host up)."""
    parts = _parts(address)
    if parts is None:
        return False
    if _origin(parts) == _upstream_origin():
        return True
    return (
        parts.scheme == "https"
        and parts.port in (None, 443)
        and (not _is_ip(parts.hostname) or is_public_ip(parts.hostname))
    )


def fetch_picture(address: str) -> bytes:
    """Return the bytes at a fetchable address (not yet checked as a picture); else FetchRefused."""
    parts = _parts(address)
    if parts is None or not picture_fetchable(address):
        raise FetchRefused("it is not an address the portal fetches", final=True)
    own = _origin(parts) == _upstream_origin()
    if not own and not all(is_public_ip(ip) for ip in resolve_host(parts.hostname, parts.port)):
        raise not_public()
    headers = {"Accept": "image/png, image/jpeg, image/gif, image/webp"}
    if own:
        headers[API_KEY_HEADER] = settings.PARTNER_API_KEY
    return fetch_small_file(
        address,
        headers=headers,
        timeout=tuple(settings.PICTURE_FETCH_TIMEOUT),
        max_bytes=settings.PICTURE_MAX_BYTES,
        # The name is checked above; the connection checks it again in case it now resolves
        # elsewhere (DNS rebinding).
        public_only=not own,
    )


def resolve_host(host: str, port: int | None) -> list[str]:
    """Return every IP address a host name resolves to (none if it does not resolve).

    Within the connect timeout: FetchRefused if the name server is slower.
    """
    return resolve(host, port or 443, timeout=settings.PICTURE_FETCH_TIMEOUT[0])


def _parts(address: object) -> SplitResult | None:
    """Split an address the portal could fetch at all, or return None."""
    if not isinstance(address, str) or not 0 < len(address) <= ADDRESS_LIMIT:
        return None
    # Spaces, control characters and backslashes: parsers read such addresses differently, so
    # the host checked here might not be the host connected to.
    if any(char.isspace() or ord(char) < 32 or char in "\x7f\\" for char in address):
        return None
    try:
        parts = urlsplit(address)
        parts.port  # noqa: B018 (a port out of range raises ValueError)
    except ValueError:
        return None
    # A user name or password in an address is a credential (and a way to disguise the host).
    if parts.scheme not in DEFAULT_PORTS or not parts.hostname or "@" in parts.netloc:
        return None
    return parts


def _origin(parts: SplitResult) -> tuple[str, str, int]:
    """Return an address's scheme, host and port, the default port written out."""
    return (parts.scheme, parts.hostname or "", parts.port or DEFAULT_PORTS[parts.scheme])


def _upstream_origin() -> tuple[str, str, int] | None:
    """Return the configured upstream's origin."""
    parts = _parts(settings.PARTNER_API_BASE_URL)
    return _origin(parts) if parts is not None else None


def _is_ip(host: str | None) -> bool:
    """Say whether a host is written as an IP address rather than a name."""
    try:
        ip_address((host or "").split("%", 1)[0])
    except ValueError:
        return False
    return True
