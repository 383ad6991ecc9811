"""What the answer-picture tests share: pictures made up, rows kept, fetches run."""

import io
import random
import struct
import zlib
from hashlib import sha256

import responses
from PIL import Image

from pictures.models import Picture
from pictures.services import picture_fetch

UPSTREAM = "https://api.partner.example/plapi/v1/partners"
UPSTREAM_KEY = "pictures-test-key"
CDN = "https://cdn.example/icons"
# Names the tests pretend to resolve (no test looks a name up): one on a private network.
PRIVATE_HOSTS = {"intranet.example": ["10.1.2.3"], "sneaky.example": ["93.184.216.34", "::1"]}


def pretended_resolution(host: str, port: int | None) -> list[str]:
    """Resolve a name as the tests pretend: a public address, or a listed private one."""
    return PRIVATE_HOSTS.get(host, ["93.184.216.34"])


Ready, Failed, Pending = Picture.State.READY, Picture.State.FAILED, Picture.State.PENDING


def picture_bytes(fmt: str, size: tuple[int, int] = (40, 30), **options) -> bytes:
    """Return a small picture in a format, drawn in two colours."""
    image = Image.new("RGB", size, (200, 40, 40))
    image.paste((20, 90, 200), (0, 0, size[0] // 2, size[1]))
    out = io.BytesIO()
    image.save(out, format=fmt, **options)
    return out.getvalue()


def noise_png() -> bytes:
    """Return a PNG of noise (some kilobytes: it does not compress)."""
    out = io.BytesIO()
    Image.frombytes("RGB", (64, 64), random.Random(31).randbytes(64 * 64 * 3)).save(out, "PNG")
    return out.getvalue()


def png_declaring(width: int, height: int) -> bytes:
    """Return a tiny PNG file whose header declares an enormous picture (a decompression bomb)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (
            struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
        )

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(b"\0" * 1024))
        + chunk(b"IEND", b"")
    )


def kept_row(address: str) -> Picture:
    """Keep a row for `address`, as pictures_wanted does, without queueing its fetch."""
    return Picture.objects.create(
        address=address, address_hash=sha256(address.encode()).hexdigest()
    )


def fetched(address: str, body, content_type: str = "image/png", **reply) -> Picture:
    """Keep a row for `address`, serve `body` there, run its fetch; return the row after."""
    picture = kept_row(address)
    with responses.RequestsMock(assert_all_requests_are_fired=False) as mock:
        mock.get(address, body=body, content_type=content_type, **reply)
        picture_fetch(picture.pk)
    picture.refresh_from_db()
    return picture


def decoded(picture: Picture) -> Image.Image:
    image = Image.open(io.BytesIO(bytes(picture.image)))
    image.load()
    return image
