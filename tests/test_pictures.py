"""Answer pictures: fetched once by the portal, checked by decoding, served from its own origin."""

import io
import random
import struct
import threading
import time
import zlib
from datetime import timedelta
from hashlib import sha256
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
import requests
import responses
from django.utils import timezone
from django_tasks import TaskResultStatus
from django_tasks_db.models import DBTaskResult
from PIL import Image, PngImagePlugin

import ops.database
import partner_api.pictures
from assessments.management.commands.sweep_attempts import Command as SweepAttempts
from ops.worker import OutageTolerantWorker
from partner_api.assumptions import API_KEY_HEADER
from partner_api.pictures import picture_fetchable
from partner_api.transport import FetchRefused, fetch_small_file
from pictures import tasks
from pictures.models import Picture
from pictures.selectors import picture_urls
from pictures.services import picture_fetch, pictures_retry_due, pictures_wanted

UPSTREAM = "https://api.partner.example/plapi/v1/partners"
UPSTREAM_KEY = "pictures-test-key"
CDN = "https://cdn.example/icons"
# Names the tests pretend to resolve (no test looks a name up): one on a private network.
PRIVATE_HOSTS = {"intranet.example": ["10.1.2.3"], "sneaky.example": ["93.184.216.34", "::1"]}
Ready, Failed, Pending = Picture.State.READY, Picture.State.FAILED, Picture.State.PENDING


@pytest.fixture(autouse=True)
def pretend_dns(monkeypatch):
    """Answer every name with a public address (or a listed private one), never asking DNS."""
    monkeypatch.setattr(
        partner_api.pictures,
        "resolve_host",
        lambda host, port: PRIVATE_HOSTS.get(host, ["93.184.216.34"]),
    )


@pytest.fixture(autouse=True)
def upstream_origin(settings):
    settings.PARTNER_API_BASE_URL = UPSTREAM
    settings.PARTNER_API_KEY = UPSTREAM_KEY


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


# What the portal fetches ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("address", "fetchable"),
    [
        (f"{CDN}/moon.png", True),
        ("https://cdn.example:443/moon.png", True),
        ("https://api.partner.example/icons/moon.png", True),  # the upstream's own origin
        ("http://cdn.example/moon.png", False),  # plain http elsewhere
        ("https://cdn.example:8443/moon.png", False),  # another port
        ("https://user:secret@cdn.example/moon.png", False),  # a credential in the address
        ("https://cdn.example@10.0.0.5/moon.png", False),
        ("https://cdn.example\\@10.0.0.5/moon.png", False),  # parsers disagree on its host
        ("https://10.0.0.5/moon.png", False),  # the school's own network
        ("https://127.0.0.1/moon.png", False),
        ("https://[::1]/moon.png", False),
        ("https://169.254.169.254/latest/meta-data", False),  # a cloud's metadata service
        ("https://93.184.216.34/moon.png", True),
        ("ftp://cdn.example/moon.png", False),
        ("javascript:alert(1)", False),
        ("moon", False),  # a known icon name: shown as its symbol, nothing fetched
        ("a picture of the moon", False),
        (" https://cdn.example/moon.png", False),
        ("https:///moon.png", False),
        ("", False),
    ],
)
def test_only_public_https_addresses_and_the_upstreams_own_are_fetched(address, fetchable):
    assert picture_fetchable(address) is fetchable


def test_the_upstream_origin_may_be_plain_http_on_its_own_port(settings):
    settings.PARTNER_API_BASE_URL = "http://127.0.0.1:8001/plapi/v1/partners"
    assert picture_fetchable("http://127.0.0.1:8001/icons/sun.png")
    assert not picture_fetchable("http://127.0.0.1:8002/icons/sun.png")
    assert not picture_fetchable("https://127.0.0.1:8001/icons/sun.png")


@pytest.mark.django_db
def test_the_same_address_wanted_twice_keeps_one_row_and_queues_one_fetch(queued_tasks):
    address = f"{CDN}/sun.png"
    pictures_wanted([address, "moon", "not an address", "https://10.0.0.5/x.png"])
    pictures_wanted([address])

    (picture,) = Picture.objects.all()
    assert (picture.address, picture.state) == (address, Pending)
    (queued,) = queued_tasks.results
    assert queued.task.func is tasks.fetch_picture.func
    assert list(queued.args) == [picture.pk]


@pytest.mark.django_db
def test_the_fetch_run_twice_for_one_address_fetches_once_and_keeps_one_row(immediate_tasks):
    address = f"{CDN}/twice.png"
    with responses.RequestsMock() as mock:
        mock.get(address, body=picture_bytes("PNG"), content_type="image/png")
        pictures_wanted([address])
        tasks.enqueue_picture_fetch(Picture.objects.get().pk)  # a duplicate, as the sweep may
        pictures_wanted([address])
        assert len(mock.calls) == 1

    (picture,) = Picture.objects.all()
    assert picture.state == Ready
    assert picture_urls([address]) == {address: f"/pictures/{picture.digest}"}


# Checked by decoding --------------------------------------------------------------------------


@pytest.mark.django_db
def test_a_png_is_kept_re_encoded_small_and_without_its_metadata():
    notes = PngImagePlugin.PngInfo()
    notes.add_text("Comment", "upstream-secret-note")
    original = picture_bytes("PNG", (600, 300), pnginfo=notes)

    picture = fetched(f"{CDN}/wide.png", original)

    assert picture.state == Ready
    assert (picture.content_type, picture.width, picture.height) == ("image/png", 256, 128)
    assert picture.digest == sha256(bytes(picture.image)).hexdigest()
    image = decoded(picture)
    assert (image.format, image.size) == ("PNG", (256, 128))
    assert b"upstream-secret-note" in original
    assert b"upstream-secret-note" not in bytes(picture.image)
    assert picture_urls([picture.address]) == {picture.address: f"/pictures/{picture.digest}"}


@pytest.mark.django_db
@pytest.mark.parametrize("fmt", ["JPEG", "GIF", "WEBP"])
def test_jpeg_gif_and_webp_are_kept_as_png(fmt):
    picture = fetched(f"{CDN}/picture.{fmt.lower()}", picture_bytes(fmt), "image/whatever")

    assert picture.state == Ready, picture.last_error
    assert decoded(picture).format == "PNG"
    assert (picture.width, picture.height) == (40, 30)


@pytest.mark.django_db
def test_an_animation_keeps_its_first_frame():
    frames = [Image.new("RGB", (20, 20), colour) for colour in ((255, 0, 0), (0, 0, 255))]
    out = io.BytesIO()
    frames[0].save(out, format="GIF", save_all=True, append_images=frames[1:])

    picture = fetched(f"{CDN}/blink.gif", out.getvalue(), "image/gif")

    assert picture.state == Ready
    assert decoded(picture).convert("RGB").getpixel((10, 10)) == (255, 0, 0)


SVG = b'<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script><circle r="4"/></svg>'
HTML = b"<!doctype html><html><body><script>alert(1)</script></body></html>"


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("body", "content_type", "reason"),
    [
        (SVG, "image/svg+xml", "not a PNG, JPEG, GIF or WebP"),
        (HTML, "image/png", "not a PNG, JPEG, GIF or WebP"),  # named .png, said to be PNG
        (noise_png()[:3000], "image/png", "not a PNG, JPEG, GIF or WebP"),
        (png_declaring(5000, 5000), "image/png", "too large a picture"),
        (png_declaring(100000, 100000), "image/png", "too large a picture"),
        (picture_bytes("BMP"), "image/png", "not a PNG, JPEG, GIF or WebP"),
        (picture_bytes("PNG") + b"\0" * 262144, "image/png", "larger than 256 KB"),
    ],
    ids=["svg", "html", "truncated", "huge", "bomb", "bmp", "too-big"],
)
def test_anything_but_a_readable_small_picture_is_refused(body, content_type, reason):
    picture = fetched(f"{CDN}/icon.png", body, content_type)

    assert picture.state == Failed
    assert reason in picture.last_error
    assert (picture.tries, bytes(picture.image), picture.digest) == (1, b"", "")
    assert picture_urls([picture.address]) == {}


@pytest.mark.django_db
def test_a_declared_length_past_the_limit_is_refused_before_reading(settings):
    settings.PICTURE_MAX_BYTES = 2048
    body = picture_bytes("PNG")
    picture = fetched(f"{CDN}/big.png", body, headers={"Content-Length": "5000000"})

    assert picture.state == Failed
    assert picture.last_error == "Not kept: it is larger than 2 KB."


@pytest.mark.django_db
def test_a_redirect_is_not_followed():
    address = f"{CDN}/moved.png"
    picture = kept_row(address)
    with responses.RequestsMock(assert_all_requests_are_fired=False) as mock:
        mock.get(address, status=302, headers={"Location": "https://10.0.0.5/inside.png"})
        elsewhere = mock.get("https://10.0.0.5/inside.png", body=picture_bytes("PNG"))
        picture_fetch(picture.pk)
        assert [call.request.url for call in mock.calls] == [address]
        assert elsewhere.call_count == 0

    picture.refresh_from_db()
    assert picture.state == Failed
    assert picture.last_error == "Not kept: it answered with a redirect, which is not followed."


@pytest.mark.django_db
@pytest.mark.parametrize("host", ["intranet.example", "sneaky.example"])
def test_a_name_resolving_to_a_private_address_is_refused_without_a_request(host):
    address = f"https://{host}/icon.png"
    picture = kept_row(address)
    with responses.RequestsMock(assert_all_requests_are_fired=False) as mock:
        mock.get(address, body=picture_bytes("PNG"), content_type="image/png")
        picture_fetch(picture.pk)
        assert len(mock.calls) == 0

    picture.refresh_from_db()
    assert picture.state == Failed
    assert picture.last_error == "Not kept: its host is not on the public internet."
    assert picture_urls([address]) == {}


@pytest.mark.django_db
def test_the_api_key_goes_only_to_the_upstreams_own_origin():
    own, other = "https://api.partner.example/icons/sun.png", f"{CDN}/sun.png"
    with responses.RequestsMock() as mock:
        mock.get(own, body=picture_bytes("PNG"), content_type="image/png")
        mock.get(other, body=picture_bytes("PNG"), content_type="image/png")
        for address in (own, other):
            picture_fetch(kept_row(address).pk)
        sent = {call.request.url: call.request.headers for call in mock.calls}

    assert sent[own][API_KEY_HEADER] == UPSTREAM_KEY
    assert API_KEY_HEADER not in sent[other]
    assert UPSTREAM_KEY not in str(sent[other])
    assert all(
        "Cookie" not in headers and "Authorization" not in headers for headers in sent.values()
    )
    assert Picture.objects.filter(state=Ready).count() == 2


# Failing and trying again ---------------------------------------------------------------------


@pytest.mark.django_db
def test_a_timeout_fails_and_the_fetch_is_queued_again_with_a_growing_wait(queued_tasks):
    address = f"{CDN}/slow.png"
    picture = kept_row(address)
    start = timezone.now()
    waits = []
    with responses.RequestsMock() as mock:
        mock.get(address, body=requests.exceptions.ReadTimeout())
        for try_number in range(6):
            picture_fetch(picture.pk, now=start)
            picture.refresh_from_db()
            waits.append(picture.next_try_at - start)
            assert picture.tries == try_number + 1

    assert picture.state == Failed
    assert picture.last_error == "Not kept: it did not answer in time."
    minutes = [wait / timedelta(minutes=1) for wait in waits]
    assert minutes == [1, 5, 30, 120, 1440, 1440]
    # Each failure queued the next try for its time.
    assert [result.task.run_after - start for result in queued_tasks.results] == waits


@pytest.mark.django_db
def test_the_sweep_tries_a_failed_picture_again_once_it_is_due(immediate_tasks):
    address = f"{CDN}/flaky.png"
    with responses.RequestsMock() as mock:
        mock.get(address, body=requests.exceptions.ConnectTimeout())
        pictures_wanted([address])
    picture = Picture.objects.get()
    assert (picture.state, picture.tries) == (Failed, 1)
    assert "did not answer in time" in picture.last_error

    # Not yet due: nothing is tried.
    assert pictures_retry_due(now=picture.next_try_at - timedelta(seconds=1)) == 0
    Picture.objects.update(next_try_at=timezone.now() - timedelta(seconds=1))  # time passes
    with responses.RequestsMock() as mock:
        mock.get(address, body=picture_bytes("PNG"), content_type="image/png")
        out = io.StringIO()
        SweepAttempts(stdout=out).handle(every=0)

    picture.refresh_from_db()
    assert picture.state == Ready
    assert out.getvalue().strip() == (
        "Sweep: 0 unstuck, 0 deliveries, 0 results fetches, 1 picture fetches and "
        "0 read-aloud recordings queued."
    )
    assert picture_urls([address]) == {address: f"/pictures/{picture.digest}"}


@pytest.mark.django_db
def test_the_sweep_queues_again_only_a_fetch_whose_task_was_lost(queued_tasks):
    address = f"{CDN}/lost.png"
    pictures_wanted([address])
    picture = Picture.objects.get()
    queued_tasks.clear()

    # Queued a moment ago: its task is still coming.
    assert pictures_retry_due(now=picture.next_try_at + timedelta(minutes=1)) == 0
    # Long past: the task was lost with its worker.
    assert pictures_retry_due(now=picture.next_try_at + timedelta(minutes=6)) == 1
    assert [list(result.args) for result in queued_tasks.results] == [[picture.pk]]


# The whole path: a real server on the upstream's origin, the worker, the portal's address ----


class _Icons(BaseHTTPRequestHandler):
    body = picture_bytes("JPEG", (512, 512))
    seen: list[dict] = []

    def do_GET(self):
        self.seen.append(dict(self.headers))
        if self.path == "/icons/trickle.jpg":
            self._trickle()
            return
        if self.path != "/icons/sun.jpg":
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header("Content-Type", "image/jpeg")
        self.send_header("Content-Length", str(len(self.body)))
        self.end_headers()
        self.wfile.write(self.body)

    def _trickle(self):
        """Send a byte at a time, each well within a read timeout, for far longer than a fetch."""
        self.send_response(200)
        self.end_headers()
        try:
            for byte in self.body[:200]:
                self.wfile.write(bytes([byte]))
                self.wfile.flush()
                time.sleep(0.05)
        except OSError:  # the portal hung up, as it should
            pass

    def log_message(self, *args):
        pass


@pytest.fixture
def icon_server():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Icons)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    _Icons.seen = []
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()
    server.server_close()
    thread.join()


@pytest.mark.django_db(transaction=True)  # the worker closes and opens its connection
def test_a_picture_on_the_upstreams_origin_is_fetched_by_the_worker_and_served_here(
    client, settings, monkeypatch, icon_server
):
    settings.PARTNER_API_BASE_URL = f"{icon_server}/plapi/v1/partners"
    settings.TASKS = {
        "default": {"BACKEND": "django_tasks_db.DatabaseBackend", "QUEUES": ["default", "media"]}
    }
    monkeypatch.setattr(ops.database, "_process_hold", None)  # run() makes this a worker
    address = f"{icon_server}/icons/sun.jpg"

    pictures_wanted([address])
    pictures_wanted([address])
    assert picture_urls([address]) == {}  # not fetched until the worker runs
    worker = OutageTolerantWorker(
        name="the test worker", queue_names=["media"], excluded_queue_names=[], interval=0,
        batch=True, backend_name="default", startup_delay=False, max_tasks=None,
        worker_id="test-worker",
    )  # fmt: skip
    worker.run()

    (result,) = DBTaskResult.objects.all()
    assert result.status == TaskResultStatus.SUCCESSFUL
    picture = Picture.objects.get()
    assert picture.state == Ready
    assert [headers.get(API_KEY_HEADER) for headers in _Icons.seen] == [UPSTREAM_KEY]
    url = picture_urls([address])[address]
    assert url == f"/pictures/{picture.digest}"

    response = client.get(url)
    assert response.status_code == 200
    assert response["Content-Type"] == "image/png"
    assert "immutable" in response["Cache-Control"]
    image = Image.open(io.BytesIO(response.content))
    assert (image.format, image.size) == ("PNG", (256, 256))
    assert sha256(response.content).hexdigest() == picture.digest


def test_a_connection_reaching_a_private_address_sends_nothing(icon_server):
    # A name may resolve to a public address when checked and a private one when connected
    # (DNS rebinding): the connection itself is checked before the request is written.
    with pytest.raises(FetchRefused, match="not on the public internet"):
        fetch_small_file(
            f"{icon_server}/icons/sun.jpg",
            headers={},
            timeout=(3.05, 5),
            max_bytes=262144,
            public_only=True,
        )
    assert _Icons.seen == []
    # The same fetch allowed to reach it (the upstream's own origin) does.
    assert fetch_small_file(
        f"{icon_server}/icons/sun.jpg", headers={}, timeout=(3.05, 5), max_bytes=262144,
        public_only=False,
    ) == _Icons.body  # fmt: skip


def test_a_host_sending_a_byte_at_a_time_is_given_up_on(icon_server):
    started = time.monotonic()
    with pytest.raises(FetchRefused, match="did not answer in time"):
        fetch_small_file(
            f"{icon_server}/icons/trickle.jpg",
            headers={},
            timeout=(0.5, 0.5),
            max_bytes=262144,
            public_only=False,
        )
    # Each byte came within the read timeout; the whole fetch was still cut at about 1 s.
    assert time.monotonic() - started < 5
