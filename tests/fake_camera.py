"""A fake camera for browser tests: a picture played to Chromium as a looping Y4M video."""

from io import BytesIO
from pathlib import Path
from typing import TYPE_CHECKING

from PIL import Image

from tests.chromium import CHROMIUM, CHROMIUM_LAUNCH_ARGS

if TYPE_CHECKING:
    from playwright.sync_api import Browser, BrowserType

WHITE = (255, 255, 255)


def write_y4m(
    png_bytes: bytes, path: Path, *, width: int = 640, height: int = 480, frames: int = 10
) -> Path:
    """Write the picture, centred on white and scaled to fit, as a still Y4M video at path."""
    if width % 2 or height % 2:
        raise ValueError("4:2:0 video needs an even width and height")
    picture = Image.open(BytesIO(png_bytes)).convert("RGBA")
    # A white margin all round, as around a card held up to a camera: a QR code needs its
    # quiet zone, and a decoder looks for it against a light background.
    margin = min(width, height) // 10
    scale = min((width - 2 * margin) / picture.width, (height - 2 * margin) / picture.height)
    size = (max(1, round(picture.width * scale)), max(1, round(picture.height * scale)))
    picture = picture.resize(size, Image.Resampling.LANCZOS)
    frame = Image.new("RGB", (width, height), WHITE)
    frame.paste(picture, ((width - size[0]) // 2, (height - size[1]) // 2), picture)
    # I420: all of Y, then U (Cb) and V (Cr) at half size both ways. Averaging 2x2 blocks puts
    # each chroma sample at their centre, the siting C420jpeg names. Pillow's YCbCr is JPEG's
    # full range; Y4M states no range, and read as video range black and white only clip.
    luma, blue, red = frame.convert("YCbCr").split()
    half = (width // 2, height // 2)
    planes = luma.tobytes() + blue.resize(half, Image.Resampling.BOX).tobytes()
    planes += red.resize(half, Image.Resampling.BOX).tobytes()
    header = f"YUV4MPEG2 W{width} H{height} F10:1 Ip A1:1 C420jpeg\n".encode("ascii")
    path.write_bytes(header + (b"FRAME\n" + planes) * frames)
    return path


def chromium_with_camera(chromium: "BrowserType", y4m_path: Path) -> "Browser":
    """Launch headless Chromium (`playwright.chromium`, or a browser's `browser_type`) whose
    only camera plays y4m_path, allowed without asking."""
    return chromium.launch(
        executable_path=str(CHROMIUM),
        args=[
            *CHROMIUM_LAUNCH_ARGS,
            "--use-fake-device-for-media-stream",
            "--use-fake-ui-for-media-stream",  # grants the camera without a permission prompt
            f"--use-file-for-fake-video-capture={y4m_path}",
        ],
    )
