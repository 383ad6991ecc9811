"""Checking a fetched file as a picture by decoding it; making the picture the portal serves."""

import io
import warnings
from dataclasses import dataclass
from hashlib import sha256

from PIL import Image, ImageOps

# Decoded by Pillow and nothing else: the file's name and the upstream's headers are not asked.
# SVG is refused: it is a document that may hold script and links, and the portal does not
# sanitize SVG.
FORMATS = ("PNG", "JPEG", "GIF", "WEBP")
# A small file may declare an enormous picture (a decompression bomb): refuse before decoding.
MAX_PIXELS = 4096 * 4096
LONG_SIDE = 256
CONTENT_TYPE = "image/png"


class NotAPicture(ValueError):
    """The file is not a picture the portal keeps; the message says why."""


@dataclass(frozen=True)
class CheckedPicture:
    """A picture as the portal re-encoded it: what is kept and served."""

    image: bytes
    width: int
    height: int
    digest: str
    content_type: str = CONTENT_TYPE


def checked_picture(data: bytes) -> CheckedPicture:
    """Decode a PNG, JPEG, GIF or WebP; return its first frame, at most 256 px, as a new PNG."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            with Image.open(io.BytesIO(data), formats=FORMATS) as opened:
                width, height = opened.size
                if width < 1 or height < 1 or width * height > MAX_PIXELS:
                    raise NotAPicture("it is too large a picture")
                opened.seek(0)  # an animation's first frame
                opened.load()
                frame = ImageOps.exif_transpose(opened).convert("RGBA")
    except NotAPicture:
        raise
    except (Image.DecompressionBombError, Image.DecompressionBombWarning):
        raise NotAPicture("it is too large a picture") from None
    # Whatever else decoding a stranger's file raises (Pillow's plugins raise many kinds):
    # it is not a picture the portal can keep.
    except Exception:
        raise NotAPicture("it is not a PNG, JPEG, GIF or WebP picture that could be read") from None
    frame.thumbnail((LONG_SIDE, LONG_SIDE), Image.Resampling.LANCZOS)
    # A new PNG from the pixels alone: no metadata, nothing of the original file (a polyglot's
    # other half) survives.
    out = io.BytesIO()
    frame.save(out, format="PNG", optimize=True)
    image = out.getvalue()
    return CheckedPicture(
        image=image, width=frame.width, height=frame.height, digest=sha256(image).hexdigest()
    )
