"""The address a request came from, as the audit trail and sign-in throttling record it."""

from django.conf import settings
from django.http import HttpRequest


def client_address(request: HttpRequest) -> str | None:
    """Return the client's IP: REMOTE_ADDR, or the proxy's header when one is trusted."""
    if settings.AUDIT_TRUST_X_FORWARDED_FOR:
        forwarded = request.META.get("HTTP_X_FORWARDED_FOR", "")
        # The nearest proxy appends the address it saw: trust only that last entry.
        last = forwarded.split(",")[-1].strip()
        if last:
            return last
    return request.META.get("REMOTE_ADDR") or None
