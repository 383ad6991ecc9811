"""Answer pictures: fetched once in the background, retried while it may help, within limits."""

import io
import socket
import threading
import time
from datetime import timedelta
from hashlib import sha256
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
import requests
import responses
from django.db import DatabaseError
from django.utils import timezone
from django_tasks import TaskResultStatus
from django_tasks_db.models import DBTaskResult
from PIL import Image

import assessments.media
import ops.database
import partner_api.pictures
from assessments.management.commands.sweep_attempts import Command as SweepAttempts
from assessments.media import content_media_wanted
from ops.worker import OutageTolerantWorker
from partner_api import Answer, Question
from partner_api.assumptions import API_KEY_HEADER
from partner_api.fetching import FetchRefused, fetch_small_file
from pictures import tasks
from pictures.models import Picture
from pictures.selectors import picture_urls
from pictures.services import picture_fetch, pictures_retry_due, pictures_wanted
from speech.models import Recording
from tests.picture_support import (
    CDN,
    UPSTREAM,
    UPSTREAM_KEY,
    Failed,
    Pending,
    Ready,
    kept_row,
    picture_bytes,
    pretended_resolution,
)


@pytest.fixture(autouse=True)
def pretend_dns(monkeypatch):
    """Answer every name with a public address (or a listed private one), never asking DNS."""
    monkeypatch.setattr(partner_api.pictures, "resolve_host", pretended_resolution)


@pytest.fixture(autouse=True)
def upstream_origin(settings):
    settings.PARTNER_API_BASE_URL = UPSTREAM
    settings.PARTNER_API_KEY = UPSTREAM_KEY


# Wanted once, fetched once -------------------------------------------------------------------


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
def test_a_fetch_taken_twice_while_it_runs_fetches_once_and_keeps_one_row(immediate_tasks):
    address = f"{CDN}/twice.png"

    def while_fetching(request):
        # A duplicate task (the sweep's, a racing store's) runs while the first is fetching.
        tasks.enqueue_picture_fetch(Picture.objects.get().pk)
        return 200, {"Content-Type": "image/png"}, picture_bytes("PNG")

    with responses.RequestsMock() as mock:
        mock.add_callback(responses.GET, address, callback=while_fetching)
        pictures_wanted([address])
        pictures_wanted([address])
        assert len(mock.calls) == 1

    (picture,) = Picture.objects.all()
    assert (picture.state, picture.tries) == (Ready, 0)
    assert picture_urls([address]) == {address: f"/pictures/{picture.digest}"}


# Failing and trying again ---------------------------------------------------------------------


@pytest.mark.django_db
def test_a_timeout_fails_and_the_fetch_is_queued_again_with_a_growing_wait(queued_tasks):
    address = f"{CDN}/slow.png"
    picture = kept_row(address)
    now = timezone.now()
    waits, next_tries = [], []
    with responses.RequestsMock() as mock:
        mock.get(address, body=requests.exceptions.ReadTimeout())
        for try_number in range(6):
            picture_fetch(picture.pk, now=now)
            picture.refresh_from_db()
            waits.append(picture.next_try_at - now)
            next_tries.append(picture.next_try_at)
            assert picture.tries == try_number + 1
            now = picture.next_try_at  # the queued retry runs when it is due

    assert picture.state == Failed
    assert picture.last_error == "Not kept: it did not answer in time."
    minutes = [wait / timedelta(minutes=1) for wait in waits]
    assert minutes == [1, 5, 30, 120, 1440, 1440]
    # Each failure queued the next try for its time.
    assert [result.task.run_after for result in queued_tasks.results] == next_tries


@pytest.mark.django_db
def test_two_tasks_for_one_failing_picture_make_one_fetch_and_one_retry_chain(queued_tasks):
    address = f"{CDN}/flaky.png"
    picture = kept_row(address)

    def while_fetching(request):
        # The sweep's duplicate task runs while the first is still fetching.
        picture_fetch(picture.pk)
        return requests.exceptions.ConnectTimeout()

    with responses.RequestsMock() as mock:
        mock.add_callback(responses.GET, address, callback=while_fetching)
        picture_fetch(picture.pk)
        picture_fetch(picture.pk)  # and another once it failed, before its retry is due
        assert len(mock.calls) == 1

    picture.refresh_from_db()
    assert (picture.state, picture.tries) == (Failed, 1)
    (retry,) = queued_tasks.results
    assert (list(retry.args), retry.task.run_after) == ([picture.pk], picture.next_try_at)


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("address", "reply", "reason"),
    [
        (f"{CDN}/icon.svg", {"body": b"<svg/>", "content_type": "image/svg+xml"}, "not a PNG"),
        (f"{CDN}/page.png", {"body": b"<html></html>"}, "not a PNG"),
        ("https://intranet.example/icon.png", {"body": b""}, "not on the public internet"),
        ("http://cdn.example/icon.png", {"body": b""}, "not an address the portal fetches"),
        (f"{CDN}/moved.png", {"status": 301, "headers": {"Location": "/"}}, "redirect"),
    ],
    ids=["svg", "html", "private", "not-fetchable", "redirect"],
)
def test_a_fetch_that_can_never_succeed_is_not_tried_again(queued_tasks, address, reply, reason):
    picture = kept_row(address)
    with responses.RequestsMock(assert_all_requests_are_fired=False) as mock:
        mock.get(address, **reply)
        picture_fetch(picture.pk)

    picture.refresh_from_db()
    assert (picture.state, picture.tries) == (Failed, 1)
    assert reason in picture.last_error
    assert picture.next_try_at is None
    assert queued_tasks.results == []
    far = timezone.now() + timedelta(days=30)
    assert pictures_retry_due(now=far) == 0
    picture_fetch(picture.pk, now=far)  # a stray task
    picture.refresh_from_db()
    assert picture.tries == 1


@pytest.mark.django_db
@pytest.mark.parametrize(
    "reply",
    [{"status": 503}, {"status": 500}, {"body": requests.exceptions.ConnectionError()}],
    ids=["503", "500", "connection"],
)
def test_a_failure_that_may_pass_is_tried_again_later(queued_tasks, reply):
    picture = kept_row(f"{CDN}/busy.png")
    with responses.RequestsMock() as mock:
        mock.get(picture.address, **reply)
        picture_fetch(picture.pk)

    picture.refresh_from_db()
    assert (picture.state, picture.tries) == (Failed, 1)
    assert picture.next_try_at is not None
    (retry,) = queued_tasks.results
    assert retry.task.run_after == picture.next_try_at


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
        if self.path == "/icons/slow-headers.jpg":
            self._slow_headers()
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

    def _slow_headers(self):
        """Send the status line and headers a byte at a time, for far longer than a fetch."""
        head = b"HTTP/1.1 200 OK\r\nContent-Type: image/jpeg\r\nX-Padding: " + b"a" * 200
        try:
            for byte in head:
                self.wfile.write(bytes([byte]))
                self.wfile.flush()
                time.sleep(0.05)
        except OSError:  # the portal hung up, as it should
            pass
        self.close_connection = True

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


def test_a_host_sending_its_headers_a_byte_at_a_time_is_given_up_on(icon_server):
    started = time.monotonic()
    with pytest.raises(FetchRefused, match="did not answer in time"):
        fetch_small_file(
            f"{icon_server}/icons/slow-headers.jpg",
            headers={},
            timeout=(0.5, 0.5),
            max_bytes=262144,
            public_only=False,
        )
    # The deadline counts from before the request, not from the headers' end (10 s away).
    assert time.monotonic() - started < 5


def test_a_name_server_that_never_answers_is_given_up_on(monkeypatch):
    released = threading.Event()

    def stuck(*args, **kwargs):
        released.wait(30)
        raise OSError("the name server never answered")

    monkeypatch.setattr(socket, "getaddrinfo", stuck)
    started = time.monotonic()
    try:
        with pytest.raises(FetchRefused, match="did not answer in time"):
            fetch_small_file(
                "https://slow-dns.example/icon.png",
                headers={},
                timeout=(0.5, 0.5),
                max_bytes=262144,
                public_only=True,
            )
        assert time.monotonic() - started < 5
    finally:
        released.set()


# Asked for by stored content -----------------------------------------------------------------


@pytest.mark.django_db
def test_a_failure_asking_for_pictures_neither_reaches_the_learner_nor_stops_the_audio(
    monkeypatch, queued_tasks, django_capture_on_commit_callbacks, caplog
):
    def broken(addresses):
        raise DatabaseError("the database blinked")

    monkeypatch.setattr(assessments.media, "pictures_wanted", broken)
    answer = Answer(id="a1", question_id="q1", display_order=1, copy="Sun", icon=f"{CDN}/sun.png")
    question = Question(
        id="q1", text="Which is hot?", group="", display_order=1, created=None, updated=None,
        answers=[answer],
    )  # fmt: skip

    with django_capture_on_commit_callbacks(execute=True):
        content_media_wanted([question])

    assert sorted(Recording.objects.values_list("text", flat=True)) == ["Sun", "Which is hot?"]
    assert "the database blinked" in caplog.text
    assert not Picture.objects.exists()
