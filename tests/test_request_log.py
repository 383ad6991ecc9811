"""One log line per request with a request id, and that id on every line the request causes."""

import json
import os
import re
import subprocess
import sys

import pytest
from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.test import Client
from django.urls import include, path
from django.views.decorators.debug import sensitive_post_parameters

from accounts.models import StaffRole
from tests.factories import make_staff
from tests.log_capture import console_output

pytestmark = pytest.mark.django_db

SECRET_WORD = "hunter2-correct-horse"


@sensitive_post_parameters()
def failing_view(request: HttpRequest) -> HttpResponse:
    """Fail with secrets in a local variable and in the exception's message."""
    api_key = settings.PARTNER_API_KEY
    raise RuntimeError(
        f"refused with key {api_key}, secret {settings.SECRET_KEY}, "
        f"session {request.COOKIES.get('sessionid')}, password {request.POST.get('password')}"
    )


def item_view(request: HttpRequest, pk: int) -> HttpResponse:
    return HttpResponse("item")


# This module is also the URLconf of the tests marked `urls` below.
urlpatterns = [
    path("boom/", failing_view),
    path("things/<int:pk>/", item_view, name="thing"),
    path("", include("portal.urls")),  # the error pages link to them
]


def request_lines(output) -> list[dict]:
    return output.lines_of("portal.requests")


def test_it_gives_each_request_a_new_id_and_returns_it(client):
    first = client.get("/accounts/login/")
    second = client.get("/accounts/login/")
    assert re.fullmatch(r"[0-9a-f]{32}", first["X-Request-ID"])
    assert first["X-Request-ID"] != second["X-Request-ID"]


def test_it_ignores_an_x_request_id_from_anyone_but_a_trusted_proxy(client, settings):
    settings.REQUEST_ID_TRUSTED_PROXIES = ["10.0.0.0/8"]
    response = client.get(
        "/accounts/login/", HTTP_X_REQUEST_ID="from-a-client-1234", REMOTE_ADDR="203.0.113.9"
    )
    assert response["X-Request-ID"] != "from-a-client-1234"


def test_it_keeps_the_id_a_trusted_proxy_sends(client, settings):
    settings.REQUEST_ID_TRUSTED_PROXIES = ["10.0.0.0/8"]
    with console_output() as output:
        response = client.get(
            "/accounts/login/", HTTP_X_REQUEST_ID="nginx-4f2a9c", REMOTE_ADDR="10.1.2.3"
        )
    assert response["X-Request-ID"] == "nginx-4f2a9c"
    assert request_lines(output)[-1]["request_id"] == "nginx-4f2a9c"


@pytest.mark.parametrize("sent", ["a b", "x" * 129, "line\nbreak", "<script>"])
def test_it_replaces_a_malformed_id_even_from_a_trusted_proxy(client, settings, sent):
    settings.REQUEST_ID_TRUSTED_PROXIES = ["127.0.0.1/32"]
    response = client.get("/accounts/login/", HTTP_X_REQUEST_ID=sent)
    assert re.fullmatch(r"[0-9a-f]{32}", response["X-Request-ID"])


def test_the_json_line_has_the_request_fields(client):
    with console_output() as output:
        response = client.get("/accounts/login/")
    (line,) = request_lines(output)
    assert line["request_id"] == response["X-Request-ID"]
    assert line["method"] == "GET"
    assert line["route"] == "/accounts/login/"
    assert line["status"] == 200
    assert isinstance(line["duration_ms"], float) and line["duration_ms"] >= 0
    assert line["role"] == "anonymous"
    assert {"time", "level", "logger", "message"} <= set(line)


def test_the_line_says_what_the_request_cost(client):
    staff = make_staff("cora.cost", role=StaffRole.DSL)
    client.force_login(staff)
    with console_output() as output:
        response = client.get("/learners/")
    assert response.status_code == 200
    (line,) = request_lines(output)
    assert line["route"] == "/learners/"
    assert isinstance(line["queries"], int) and line["queries"] >= 2  # the user, the learners
    assert isinstance(line["cpu_ms"], float) and 0 < line["cpu_ms"] <= line["duration_ms"] + 1


def test_the_plain_line_reads_as_a_sentence_with_the_id(client):
    with console_output("plain") as output:
        response = client.get("/accounts/login/")
    line = next(x for x in output.text.splitlines() if "portal.requests" in x)
    assert f"[{response['X-Request-ID']}] GET /accounts/login/ 200 " in line
    assert line.endswith("role=anonymous")


@pytest.mark.urls("tests.test_request_log")
def test_it_logs_the_route_pattern_not_the_ids_in_the_path(client):
    with console_output() as output:
        client.get("/things/123456/")
        client.get("/no/such/page/987654/")
    first, second = request_lines(output)
    assert first["route"] == "/things/<int:pk>/"
    assert second["route"] == "<unmatched>" and second["status"] == 404
    assert "123456" not in output.text and "987654" not in output.text


def test_it_logs_the_role_never_the_username(client, learner):
    teacher = make_staff("tariq.teacher", role=StaffRole.TEACHER)
    with console_output() as output:
        client.force_login(teacher)
        client.get("/learners/")
        client.force_login(learner.user)
        client.get("/me/")
    roles = [line["role"] for line in request_lines(output)]
    assert roles == ["teacher", "learner"]
    assert "tariq" not in output.text and "lee.learner" not in output.text


def test_every_upstream_call_line_carries_the_request_id(client, learner, upstream):
    client.force_login(learner.user)
    with console_output() as output:
        response = client.post("/me/start/")  # asks the upstream for the next assessment
    calls = output.lines_of("portal.partner_api")
    assert calls, output.text
    assert {line["request_id"] for line in calls} == {response["X-Request-ID"]}


@pytest.mark.urls("tests.test_request_log")
def test_a_500_is_logged_with_its_traceback_and_no_secrets(settings):
    settings.PARTNER_API_KEY = "live-key-0123456789abcdef"
    browser = Client(raise_request_exception=False)
    browser.cookies["sessionid"] = "sessionid0123456789abcdef"
    for log_format in ("json", "plain"):
        with console_output(log_format) as output:
            response = browser.post("/boom/", {"password": SECRET_WORD})
        assert response.status_code == 500
        text = output.text
        assert "Traceback" in text and "failing_view" in text and "RuntimeError" in text
        assert response["X-Request-ID"] in text
        for secret in (
            settings.PARTNER_API_KEY,
            settings.SECRET_KEY,
            "sessionid0123456789abcdef",
            SECRET_WORD,
        ):
            assert secret not in text, log_format
        assert "********" in text


def test_log_format_json_makes_every_line_json():
    code = "import logging; logging.getLogger('portal.services').warning('hello %s', 'there')"
    done = subprocess.run(
        [sys.executable, "manage.py", "shell", "-c", code],
        cwd=settings.BASE_DIR,
        env={**os.environ, "LOG_FORMAT": "json"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    line = json.loads(done.stderr.strip().splitlines()[-1])
    assert line["message"] == "hello there" and line["level"] == "WARNING"
    assert line["request_id"] == "-"
