"""The card page's address as pupils reach it, and QR codes drawn on the server as inline SVG.

Nothing is fetched from anywhere else.
"""

import segno
from django.conf import settings
from django.urls import reverse
from django.utils.html import format_html
from django.utils.safestring import SafeString, mark_safe


def card_address() -> str:
    """Return the absolute address of /card/ at the portal's configured address (PORTAL_URL)."""
    # Never the request's host: a teacher's device may reach the portal by an internal name
    # that pupils' devices cannot, and printed cards and QR codes outlive it for a year.
    return settings.PORTAL_URL + reverse("lessons:card")


def address_to_type(address: str) -> str:
    """Return the address as a pupil types it: browsers add the scheme by themselves."""
    return address.removeprefix("https://").removeprefix("http://")


def qr_svg(text: str, *, label: str) -> SafeString:
    """Return an SVG QR code of `text` (sized by CSS), labelled for screen readers."""
    code = segno.make_qr(text, error="m")
    # segno's own markup: paths drawn from the bits of `text`, which never appears in it.
    svg = mark_safe(code.svg_inline(scale=4, border=4, dark="#000", light="#fff", omitsize=True))  # noqa: S308
    return format_html('<span class="qr" role="img" aria-label="{}">{}</span>', label, svg)
