"""The setup page's QR code and secret, drawn for reading as well as scanning."""

import segno
from allauth.mfa.models import Authenticator
from django import template
from django.utils.html import format_html
from django.utils.safestring import SafeString, mark_safe

from signin.second_factor import FACTORS

register = template.Library()


@register.simple_tag
def totp_qr(url: str, label: str) -> SafeString:
    """Return the otpauth URL as an inline SVG QR code (CSP allows no data: images)."""
    code = segno.make_qr(url, error="m")
    # segno's own markup: paths drawn from the bits of the URL, which never appears in it.
    svg = mark_safe(code.svg_inline(scale=4, border=4, dark="#000", light="#fff", omitsize=True))  # noqa: S308
    return format_html('<span class="qr" role="img" aria-label="{}">{}</span>', label, svg)


@register.filter
def in_groups(secret: str, size: int = 4) -> list[str]:
    """Split a secret into groups of `size` characters, to read and type without losing place."""
    return [secret[i : i + size] for i in range(0, len(secret), size)]


@register.filter
def factor_types(user) -> set[str]:
    """Return the kinds of second factor a user has set up ("totp", "webauthn")."""
    return set(
        Authenticator.objects.filter(user_id=user.pk, type__in=FACTORS).values_list(
            "type", flat=True
        )
    )
