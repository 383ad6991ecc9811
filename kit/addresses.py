"""The address a request came from (as the audit trail and throttles record it), and ranges."""

from ipaddress import IPv4Address, IPv4Network, IPv6Address, IPv6Network, ip_address, ip_network

from django.conf import settings
from django.core.exceptions import ValidationError
from django.http import HttpRequest
from django.utils.translation import gettext


def client_address(request: HttpRequest) -> str | None:
    """Return the client's IP: REMOTE_ADDR, or the proxy's header when one is trusted."""
    if settings.AUDIT_TRUST_X_FORWARDED_FOR:
        forwarded = request.META.get("HTTP_X_FORWARDED_FOR", "")
        # The nearest proxy appends the address it saw: trust only that last entry.
        last = forwarded.split(",")[-1].strip()
        if last:
            return last
    return request.META.get("REMOTE_ADDR") or None


def networks_parse(text: str) -> list[IPv4Network | IPv6Network]:
    """Return the address ranges listed one per line or by commas; ValueError for a bad one."""
    ranges = (item.strip() for line in text.splitlines() for item in line.split(","))
    return [ip_network(item, strict=False) for item in ranges if item]


def validate_networks(text: str) -> None:
    """Refuse a list of address ranges that holds something else, naming it."""
    for line in text.splitlines():
        for item in (part.strip() for part in line.split(",")):
            if not item:
                continue
            try:
                ip_network(item, strict=False)
            except ValueError:
                raise ValidationError(
                    gettext("“%(item)s” is not an address range (for example 203.0.113.0/24).")
                    % {"item": item[:60]}
                ) from None


def address_in_networks(address: str | None, networks: list[IPv4Network | IPv6Network]) -> bool:
    """Return whether the address lies in one of the ranges (an unknown address never does)."""
    try:
        ip = ip_address(address or "")
    except ValueError:
        return False
    return any(ip in network for network in networks if network.version == ip.version)


def is_public_ip(text: str) -> bool:
    """Say whether an IP address is on the public internet (not loopback, private, reserved)."""
    try:
        address = ip_address(text.split("%", 1)[0])  # an IPv6 zone ("%eth0") names no host
    except ValueError:
        return False
    if isinstance(address, IPv6Address):
        if address in _TEREDO or address in _NAT64_LOCAL:
            return False  # a tunnel to, or a translator for, hosts unknown
        # An IPv6 address that carries an IPv4 one reaches that IPv4 host (through the
        # machine's own translator or relay): the IPv4 address is the one to judge.
        wrapped = address.ipv4_mapped or address.sixtofour
        if wrapped is None and address in _NAT64:
            wrapped = IPv4Address(int(address) & 0xFFFFFFFF)
        if wrapped is not None:
            address = wrapped
    return address.is_global and not address.is_multicast and not address.is_reserved


# NAT64's well-known prefix (RFC 6052) and its local-use one (RFC 8215); Teredo (RFC 4380).
_NAT64 = IPv6Network("64:ff9b::/96")
_NAT64_LOCAL = IPv6Network("64:ff9b:1::/48")
_TEREDO = IPv6Network("2001::/32")
