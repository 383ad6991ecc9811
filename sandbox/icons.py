"""The primary bank's answer pictures: drawn once with Pillow, served by the sandbox itself.

A primary answer's `Icon` is an address on the sandbox (`http://<host:port>/icons/<name>.png`),
so the portal's fetch-and-serve path for pictures runs in `make run`. The pictures are neutral
marks of amount, never faces that praise or blame: a jar from empty to full for how often, a
ring from empty to filled for how much like me. They differ in shape, not only in colour.
"""

from __future__ import annotations

import functools
import io
import json
import re
from collections.abc import Callable, Iterable
from typing import Any

from PIL import Image, ImageDraw

ICONS_PATH = "/icons/"
SIZE = 128
_SCALE = 4  # drawn four times larger, then shrunk, for smooth edges
_CANVAS = SIZE * _SCALE
_INK = (31, 41, 55, 255)  # the outline: dark grey, readable on a light button
_FILL = (43, 108, 176, 255)  # the amount: a calm blue
_LINE = 6 * _SCALE

# Where the Host header is absent or odd, the server's own name and port are used instead.
_HOST = re.compile(r"(?:[A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?")


def _jar(share: float) -> Callable[[ImageDraw.ImageDraw, Image.Image], None]:
    """Return a drawer of a jar filled to a share of its height (0 = empty, 1 = full)."""

    def draw(pen: ImageDraw.ImageDraw, image: Image.Image) -> None:
        left, top, right, bottom = 30 * _SCALE, 30 * _SCALE, 98 * _SCALE, 118 * _SCALE
        radius = 14 * _SCALE
        if share > 0:
            # The contents: the jar's inside, cut off above the level.
            mask = Image.new("L", image.size, 0)
            inside = (left + _LINE, top + _LINE, right - _LINE, bottom - _LINE)
            ImageDraw.Draw(mask).rounded_rectangle(inside, radius=radius - _LINE, fill=255)
            level = inside[3] - round(share * (inside[3] - inside[1]))
            ImageDraw.Draw(mask).rectangle((0, 0, image.width, level), fill=0)
            image.paste(_FILL, mask=mask)
        pen.rounded_rectangle((left, top, right, bottom), radius=radius, outline=_INK, width=_LINE)
        # The lid, so that the shape reads as a jar at any size.
        lid = (40 * _SCALE, 12 * _SCALE, 88 * _SCALE, 26 * _SCALE)
        pen.rounded_rectangle(lid, radius=4 * _SCALE, fill=_INK)

    return draw


def _ring(share: float) -> Callable[[ImageDraw.ImageDraw, Image.Image], None]:
    """Return a drawer of a ring with a disc inside, its radius a share of the ring's."""

    def draw(pen: ImageDraw.ImageDraw, image: Image.Image) -> None:
        centre, outer = _CANVAS // 2, 56 * _SCALE
        if share > 0:
            radius = round(share * (outer - _LINE))
            pen.ellipse(
                (centre - radius, centre - radius, centre + radius, centre + radius), fill=_FILL
            )
        box = (centre - outer, centre - outer, centre + outer, centre + outer)
        pen.ellipse(box, outline=_INK, width=_LINE)

    return draw


# Every picture by name: how often ("No, never" to "Always"), then how much like me.
PICTURES: dict[str, Callable[[ImageDraw.ImageDraw, Image.Image], None]] = {
    "jar-empty": _jar(0),
    "jar-low": _jar(1 / 3),
    "jar-high": _jar(2 / 3),
    "jar-full": _jar(1),
    "ring-empty": _ring(0),
    "ring-small": _ring(0.45),
    "ring-full": _ring(1),
}


@functools.cache
def picture_png(name: str) -> bytes:
    """Return a picture as PNG bytes, drawn on first use and kept (KeyError if unknown)."""
    drawer = PICTURES[name]
    image = Image.new("RGBA", (_CANVAS, _CANVAS), (0, 0, 0, 0))
    drawer(ImageDraw.Draw(image), image)
    small = image.resize((SIZE, SIZE), Image.Resampling.LANCZOS)
    out = io.BytesIO()
    small.save(out, format="PNG", optimize=True)
    return out.getvalue()


def origin_of(environ: dict[str, Any]) -> str:
    """Return the scheme, host and port the request reached, to build addresses on it."""
    host = environ.get("HTTP_HOST", "")
    if not _HOST.fullmatch(host):
        host = f"{environ.get('SERVER_NAME', '127.0.0.1')}:{environ.get('SERVER_PORT', '80')}"
    return f"{environ.get('wsgi.url_scheme', 'http')}://{host}"


def icon_field(icon: str, origin: str) -> str:
    """Return an answer's `Icon`: a picture's address on the sandbox, or the name as it is."""
    return f"{origin}{ICONS_PATH}{icon}.png" if icon in PICTURES else icon


def serve_icon(method: str, path: str, start_response: Callable[..., Any]) -> Iterable[bytes]:
    """Answer GET /icons/<name>.png with the picture; 404 for an unknown name. No key needed."""
    name = path[len(ICONS_PATH) :].removesuffix(".png")
    headers = [("X-Content-Type-Options", "nosniff")]
    if name not in PICTURES or not path.endswith(".png"):
        status, body = "404 Not Found", _json({"error": "Not found"})
    elif method != "GET":
        status, body = "405 Method Not Allowed", _json({"error": "Method not allowed"})
        headers.append(("Allow", "GET"))
    else:
        status, body = "200 OK", picture_png(name)
        # A picture never changes while the sandbox runs: a day's caching spares refetches.
        headers.append(("Cache-Control", "public, max-age=86400"))
    content_type = "image/png" if status.startswith("200") else "application/json"
    headers += [("Content-Type", content_type), ("Content-Length", str(len(body)))]
    start_response(status, headers)
    return [body]


def _json(body: dict[str, str]) -> bytes:
    """Return a JSON body, as the sandbox's other refusals have."""
    return json.dumps(body).encode()
