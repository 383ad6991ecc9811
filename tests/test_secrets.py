"""No secret gets out: the API key, passwords and the upstream learner id (issue 4, item 5).

Every test here captures everything the portal says while it works: each log record of every
logger at DEBUG (message, arguments, extra attributes, exception and stack text), what the
process writes to stdout and stderr, every response the test client gets (status, headers,
cookies, the messages cookie decoded, the body), and afterwards every row of every table
(sessions decoded). Then it searches all of it for the secrets: the API key (a distinctive
value, set both in the portal's settings and on the sandbox), every password a person typed
(right or wrong), and the learner id the upstream handed out.

The upstream learner id is kept in one column, Learner.upstream_user_id, and shown on purpose
on two staff pages about one learner's personal data: the export of everything held about
them, and the erasure page that tells staff which id to quote to the service's provider.
Those are the only places it may be; the admin is not one of them.
"""

import contextlib
import json
import logging
import re
import sys

import pytest
import responses
from django.apps import apps
from django.contrib import admin
from django.contrib.auth.models import User
from django.contrib.messages.storage.cookie import CookieStorage, MessageSerializer
from django.contrib.sessions.models import Session
from django.core import signing
from django.test import Client
from django.urls import NoReverseMatch, reverse
from django.views.debug import ExceptionReporter

from assessments.models import AssessmentAttempt
from learners.models import Learner
from sandbox.faults import ENDPOINTS  # the five endpoints of the spec
from sandbox.server import start_sandbox
from tests.factories import PASSWORD, make_staff

API_KEY = "pk-live-7Q2xV9-kept-SECRET-83"
LEARNER_PASSWORD = "Quiet-Harbour-Lantern-58"
NEW_PASSWORD = "Amber-Falcon-Orchard-31"
WRONG_PASSWORD = "Wrong-Guess-Of-Pupil-99"
MOCK_LEARNER_ID = "u-5e1f-learner-SECRET-id"
API_PREFIX = "/plapi/v1/partners"
FAULTS = ("500", "503", "drop", "non_json", "missing_field", "processed_500")
LOGGERS = ("django", "django.request", "urllib3", "portal", "learners", "assessments", "audit")
State = AssessmentAttempt.State
# A radio carries its answer's words for the read-aloud script (data-speak) before its name.
RADIO = re.compile(
    r'<input type="radio"(?: data-speak="[^"]*")? name="(q\d+)" id="[^"]+" value="([^"]+)"'
)
# Staff pages that show a learner's upstream id on purpose (see the module's docstring).
SHOWS_THE_LEARNER_ID = re.compile(r"^/learners/\d+/(export|erase)/$")
# Attributes every log record has; anything else on a record is an `extra` a caller passed.
PLAIN_RECORD = frozenset(vars(logging.LogRecord("x", logging.INFO, "x", 1, "x", (), None)))


# Capturing what the portal says ----------------------------------------------------------------


class Capture:
    """Everything said during a test: responses as text, with the path that produced each."""

    def __init__(self):
        self.responses: list[tuple[str, str]] = []

    def record(self, path: str, response) -> None:
        if response.streaming:
            body = b"".join(response.streaming_content)
            response.streaming_content = [body]
        else:
            body = response.content
        parts = [f"{response.status_code}", str(response.items()), response.cookies.output()]
        parts += decoded_messages(response)
        parts.append(body.decode(errors="replace"))
        self.responses.append((path, "\n".join(parts)))


def decoded_messages(response) -> list[str]:
    """Return the messages a response stores in the messages cookie, decoded."""
    morsel = response.cookies.get(CookieStorage.cookie_name)
    if morsel is None or not morsel.value:
        return []
    signer = signing.get_cookie_signer(salt=CookieStorage.key_salt)
    try:
        messages = signer.unsign_object(morsel.value, serializer=MessageSerializer)
    except (signing.BadSignature, ValueError):
        return [morsel.value]
    return [str(message) for message in messages or []]


class RecordingClient(Client):
    """A test client that hands every response (redirects followed included) to a Capture."""

    def __init__(self, capture: Capture, **defaults):
        super().__init__(**defaults)
        self.capture = capture

    def request(self, **request):
        response = super().request(**request)
        self.capture.record(request.get("PATH_INFO", "?"), response)
        return response


@pytest.fixture
def capture() -> Capture:
    return Capture()


@pytest.fixture
def all_logs(caplog, monkeypatch):
    """Every record of every logger, at DEBUG: the portal's loggers and the libraries' too."""
    caplog.set_level(logging.DEBUG)
    for name in LOGGERS:
        caplog.set_level(logging.DEBUG, logger=name)
        monkeypatch.setattr(logging.getLogger(name), "propagate", True)
    return caplog


def record_text(record: logging.LogRecord) -> str:
    """Return all a log record carries, as text: what any handler could write."""
    parts = [repr(record.msg), repr(record.args)]
    try:
        parts.append(record.getMessage())
    except (TypeError, ValueError) as error:  # a bad format string is a bug of its own
        parts.append(f"unformattable record: {error}")
    if record.exc_info and record.exc_info[1] is not None:
        parts.append(logging.Formatter().formatException(record.exc_info))
        parts.append(repr(record.exc_info[1].args))
    parts += [record.exc_text or "", record.stack_info or ""]
    extras = {key: value for key, value in vars(record).items() if key not in PLAIN_RECORD}
    parts.append(repr(extras))
    return "\n".join(parts)


def stored_rows() -> list[tuple[str, str]]:
    """Return every row of every table as text (sessions decoded), each with where it is."""
    rows = []
    for model in apps.get_models():
        for values in model._default_manager.all().values():
            where = f"{model._meta.label} #{values.get(model._meta.pk.attname)}"
            if model is Learner:
                values.pop("upstream_user_id")  # where the learner id is kept, by design
            if model is Session:
                values["session_data"] = Session.objects.get(pk=values["session_key"]).get_decoded()
            rows.append((where, repr(values)))
    return rows


def leaks(secrets: dict[str, str], places: list[tuple[str, str]]) -> list[str]:
    """Name every secret found in any place, with an excerpt around it."""
    found = []
    for where, text in places:
        for name, secret in secrets.items():
            at = text.find(secret)
            if at >= 0:
                excerpt = text[max(at - 80, 0) : at + len(secret) + 40]
                found.append(f"{name} in {where}: ...{excerpt!r}...")
    return found


def assert_nothing_leaked(
    secrets: dict[str, str], caplog, capfd, capture: Capture, learner_id_in_admin=False
) -> None:
    """Fail on any secret in the logs, the output, a response or a stored row.

    `learner_id_in_admin` leaves the learner id on admin pages to the one test about it, so
    that a test about something else does not fail for it too.
    """
    assert all(secrets.values()), secrets
    assert caplog.records, "no log record was captured: the capture is not working"
    assert capture.responses, "no response was captured"
    places = [
        (f"log record {record.name} {record.levelname}", record_text(record))
        for record in caplog.records
    ]
    out, err = capfd.readouterr()
    places += [("stdout", out), ("stderr", err)]
    without_id = {name: value for name, value in secrets.items() if name != "upstream learner id"}
    found = leaks(secrets, places)
    for path, text in capture.responses:
        on_purpose = SHOWS_THE_LEARNER_ID.match(path)
        in_admin = learner_id_in_admin and path.startswith("/admin/")
        allowed = without_id if on_purpose or in_admin else secrets
        found += leaks(allowed, [(f"response to {path}", text)])
    found += leaks(secrets, stored_rows())
    shown = "\n".join(found[:30])
    assert not found, f"{len(found)} leak(s):\n{shown}"


# People and the upstream -----------------------------------------------------------------------


@pytest.fixture
def secret_upstream(settings):
    """The sandbox over HTTP, with a distinctive API key on both sides."""
    with start_sandbox(port=0, api_key=API_KEY) as running:
        settings.PARTNER_API_BASE_URL = running.base_url
        settings.PARTNER_API_KEY = API_KEY
        settings.PARTNER_API_TIMEOUT = (2.0, 5.0)
        yield running


@pytest.fixture
def mocked_upstream(settings):
    """A simulated upstream (responses), with the same distinctive API key."""
    settings.PARTNER_API_KEY = API_KEY
    base_url = settings.PARTNER_API_BASE_URL.strip().rstrip("/")
    if not base_url.endswith(API_PREFIX):
        base_url += API_PREFIX
    with responses.RequestsMock(assert_all_requests_are_fired=False) as mock:
        mock.base_url = base_url
        yield mock


@pytest.fixture
def staff_member(db) -> User:
    return make_staff("sally.secrets")


def signed_in(capture: Capture, username: str, password: str) -> RecordingClient:
    """Sign in through the login form, as a person does."""
    client = RecordingClient(capture)
    client.get("/accounts/login/")
    response = client.post("/accounts/login/", {"username": username, "password": password})
    assert response.status_code == 302, response.content.decode()[:3000]
    return client


def registration(username: str, password: str = LEARNER_PASSWORD) -> dict[str, str]:
    return {
        "username": username,
        "password": password,
        "dob": "2010-04-12",
        "email": f"{username}@example.org",
        "first_name": "Sam",
        "last_name": "Secret",
        "level": "LOA_PARTNER_LEVEL2",
    }


def register(staff_client: Client, username: str) -> Learner:
    response = staff_client.post("/learners/new/", registration(username), follow=True)
    assert response.status_code == 200
    return Learner.objects.get(username=username)


def current_attempt(learner: Learner) -> AssessmentAttempt | None:
    return learner.attempts.order_by("-offered_at", "-id").first()


def answer_and_check(client: Client, attempt: AssessmentAttempt) -> None:
    """Visit every question page and answer it, then the check page."""
    base = f"/me/assessments/{attempt.assessment_id}/"
    url = client.get(base).url
    while "/page/" in url:
        html = client.get(url).content.decode()
        choices = {}
        for name, value in RADIO.findall(html):
            choices.setdefault(name, value)
        response = client.post(url, {**choices, "continue": ""})
        assert response.status_code == 302, response.status_code
        url = response.url
    client.get(base + "check/")


def take_a_step(client: Client, learner: Learner) -> None:
    """Do what a learner does next, whatever state their latest assessment is in."""
    attempt = current_attempt(learner)
    if attempt is None or attempt.state == State.COMPLETED:
        client.post("/me/start/", follow=True)
        return
    base = f"/me/assessments/{attempt.assessment_id}/"
    if attempt.state == State.AVAILABLE:
        client.post("/me/start/", follow=True)
    elif attempt.state == State.IN_PROGRESS:
        answer_and_check(client, attempt)
        client.post(base + "submit/", follow=True)
    elif attempt.state == State.SUBMIT_PENDING:
        client.post(base + "resend/", follow=True)
    elif attempt.state == State.SUBMITTED:
        client.post(base + "results/", follow=True)
    elif attempt.state == State.REJECTED:
        client.post(base + "refresh/", follow=True)
    client.get("/me/")


def admin_urls() -> list[str]:
    """Return the admin's index, its own pages, and each model's list and first records."""
    urls = ["/admin/", "/admin/password_change/", "/admin/jsi18n/"]
    for model, _ in sorted(admin.site._registry.items(), key=lambda item: item[0]._meta.label):
        opts = model._meta
        urls.append(reverse("admin:app_list", args=[opts.app_label]))
        urls.append(reverse(f"admin:{opts.app_label}_{opts.model_name}_changelist"))
        for pk in model._default_manager.values_list("pk", flat=True)[:5]:
            for view in ("change", "history"):
                with contextlib.suppress(NoReverseMatch):
                    urls.append(
                        reverse(f"admin:{opts.app_label}_{opts.model_name}_{view}", args=[pk])
                    )
    return list(dict.fromkeys(urls))


# (a) A full journey against the sandbox ----------------------------------------------------------


def full_journey(capture: Capture, staff: User, superuser: User, upstream) -> Learner:
    """Registration, sign-ins (one mistyped), every page, the results, staff and admin pages."""
    staff_client = signed_in(capture, staff.username, PASSWORD)
    for path in ("/", "/learners/", "/learners/new/", "/operations/"):
        staff_client.get(path, follow=True)
    learner = register(staff_client, "lena.secret")
    assert learner.is_registered and learner.upstream_user_id
    staff_client.post("/accounts/logout/", follow=True)

    # A mistyped password, then the right one.
    typo = RecordingClient(capture)
    typo.post("/accounts/login/", {"username": "lena.secret", "password": WRONG_PASSWORD})
    client = signed_in(capture, "lena.secret", LEARNER_PASSWORD)
    client.get("/", follow=True)
    client.get("/me/")
    client.post("/me/start/", follow=True)
    attempt = current_attempt(learner)
    base = f"/me/assessments/{attempt.assessment_id}/"
    client.get(base + "page/1/?from=check")
    client.post(base + "page/1/", {"save_and_exit": ""}, follow=True)
    answer_and_check(client, attempt)
    client.post(base + "submit/", follow=True)
    attempt.refresh_from_db()
    assert attempt.state == State.COMPLETED, attempt.state
    client.get(base + "results/")
    client.get("/me/")
    client.get("/accounts/logout/")
    client.post("/accounts/logout/", follow=True)

    staff_client = signed_in(capture, staff.username, PASSWORD)
    for path in (
        "/learners/?q=lena",
        f"/learners/{learner.pk}/",
        f"/learners/{learner.pk}/attempts/{attempt.assessment_id}/",
        f"/learners/{learner.pk}/export/",
        f"/learners/{learner.pk}/erase/",
        f"/learners/{learner.pk}/password/",
        "/operations/",
    ):
        staff_client.get(path, follow=True)
    reset = f"/learners/{learner.pk}/password/"
    staff_client.post(reset, {"new_password1": NEW_PASSWORD, "new_password2": WRONG_PASSWORD})
    staff_client.post(
        reset, {"new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD}, follow=True
    )
    signed_in(capture, "lena.secret", NEW_PASSWORD).get("/me/")

    admin_client = signed_in(capture, superuser.username, PASSWORD)
    for url in admin_urls():
        response = admin_client.get(url)
        assert response.status_code == 200, (url, response.status_code)
    return learner


def journey_secrets(learner: Learner) -> dict[str, str]:
    return {
        "API key": API_KEY,
        "learner password": LEARNER_PASSWORD,
        "learner's new password": NEW_PASSWORD,
        "mistyped password": WRONG_PASSWORD,
        "staff password": PASSWORD,
        "upstream learner id": learner.upstream_user_id,
    }


@pytest.mark.django_db
def test_a_full_journey_says_no_secret_anywhere(
    all_logs, capfd, capture, staff_member, superuser, secret_upstream
):
    learner = full_journey(capture, staff_member, superuser, secret_upstream)
    # The journey did what it claims: every endpoint was called, every page read.
    for endpoint in ENDPOINTS:
        assert secret_upstream.state.count(endpoint=endpoint) >= 1, endpoint
    assert any(path.startswith("/admin/") for path, _ in capture.responses)
    assert_nothing_leaked(
        journey_secrets(learner), all_logs, capfd, capture, learner_id_in_admin=True
    )


@pytest.mark.django_db
def test_the_admin_never_shows_the_upstream_learner_id(capture, staff_member, superuser, upstream):
    # The learner id is, with the API key, what the upstream takes as a learner's credentials
    # (docs/partner-api.md: never in logs, exception messages or pages).
    staff_client = signed_in(capture, staff_member.username, PASSWORD)
    learner = register(staff_client, "ida.identity")
    admin_client = signed_in(capture, superuser.username, PASSWORD)
    for url in admin_urls():
        # Each page really shows (the learner's own admin page among them), not an error.
        assert admin_client.get(url).status_code == 200, url
    found = [
        f"{path}: ...{text[max(text.find(learner.upstream_user_id) - 100, 0) :][:200]!r}..."
        for path, text in capture.responses
        if path.startswith("/admin/") and learner.upstream_user_id in text
    ]
    assert not found, "the admin shows the upstream learner id:\n" + "\n".join(found[:10])


# (b) Every upstream error path -------------------------------------------------------------------


@pytest.mark.django_db
@pytest.mark.parametrize("endpoint", ENDPOINTS)
def test_no_upstream_failure_lets_a_secret_out(
    endpoint, all_logs, capfd, capture, staff_member, secret_upstream
):
    faults = secret_upstream.state.faults
    staff_client = signed_in(capture, staff_member.username, PASSWORD)
    if endpoint == "create-learner":
        for number, kind in enumerate(FAULTS):
            faults.add(endpoint, kind, times=1)
            response = staff_client.post("/learners/new/", registration(f"pat.fault{number}"))
            assert response.status_code == 200, (kind, response.status_code)  # the form again
        staff_client.get("/operations/")
    learner = register(staff_client, "pia.pending")
    assert learner.upstream_user_id, "the registration after the faults must work"
    client = signed_in(capture, "pia.pending", LEARNER_PASSWORD)
    if endpoint != "create-learner":
        for kind in FAULTS:
            applied = len(faults.applied())
            faults.add(endpoint, kind, times=1)
            for _ in range(6):  # act until the fault has struck
                take_a_step(client, learner)
                if len(faults.applied()) > applied:
                    break
            else:
                pytest.fail(f"{endpoint}={kind} never struck")
        for _ in range(6):  # and on to the results once the faults are spent
            take_a_step(client, learner)
        staff_client.get("/operations/")
        staff_client.get(f"/learners/{learner.pk}/")
    assert [kind for where, kind in faults.applied() if where == endpoint] == list(FAULTS)

    secrets = {
        "API key": API_KEY,
        "learner password": LEARNER_PASSWORD,
        "staff password": PASSWORD,
        "upstream learner id": learner.upstream_user_id,
    }
    assert_nothing_leaked(secrets, all_logs, capfd, capture)


# Refusals that echo the secrets back -------------------------------------------------------------


def echo(status: int, secret: str) -> dict:
    """A refusal whose message repeats a secret, in the places error bodies put messages."""
    bodies = {
        400: {"error": f"Bad request: password {secret!r} is not acceptable"},
        401: {"detail": f"apikey {secret} is not valid here", "apikey": secret},
        409: {"message": f"Conflict for {secret}", "input": {"password": secret}},
        422: {"detail": [{"loc": ["body", "password"], "msg": f"weak: {secret}", "input": secret}]},
    }
    return {
        "status": status,
        "json": bodies[status],
        "headers": {"X-Request-Id": f"req-{secret}"},
    }


@pytest.mark.django_db
@pytest.mark.parametrize("status", [400, 401, 409, 422])
def test_a_failed_registration_that_echoes_the_password_and_key_shows_neither(
    status, all_logs, capfd, capture, staff_member, mocked_upstream
):
    url = mocked_upstream.base_url + "/users/create-learner"
    for secret in (LEARNER_PASSWORD, API_KEY, f"{API_KEY} / {LEARNER_PASSWORD}"):
        mocked_upstream.add(responses.POST, url, **echo(status, secret))
    staff_client = signed_in(capture, staff_member.username, PASSWORD)
    for number in range(3):
        response = staff_client.post("/learners/new/", registration(f"eve.echo{number}"))
        assert response.status_code == 200  # the form again, with the reason
        assert "refused the request" in response.content.decode()
        assert not Learner.objects.filter(username=f"eve.echo{number}").exists()
    assert len(mocked_upstream.calls) == 3
    staff_client.get("/operations/")
    secrets = {"API key": API_KEY, "learner password": LEARNER_PASSWORD, "staff password": PASSWORD}
    assert_nothing_leaked(secrets, all_logs, capfd, capture)


def _content() -> dict:
    return {
        "questions": [
            {
                "id": "q1",
                "Question": "Do you sleep well?",
                "Group": "Sleep",
                "DisplayOrder": 1,
                "answers": [{"id": "a1", "DisplayOrder": 1, "AnswerCopy": "Yes"}],
            }
        ],
        "assessment_session": "4242",
        "assessment_info": {"Title": "Habits", "Version": 1, "id": 5},
    }


@pytest.mark.django_db
@pytest.mark.parametrize("status", [400, 401, 409, 422])
@pytest.mark.parametrize(
    "endpoint", ["next-assessment", "view-assessment", "submit-assessment", "results"]
)
def test_a_refusal_that_echoes_the_key_and_learner_id_shows_neither(
    endpoint, status, all_logs, capfd, capture, staff_member, mocked_upstream
):
    base = mocked_upstream.base_url
    mocked_upstream.add(
        responses.POST, base + "/users/create-learner", json={"user_id": MOCK_LEARNER_ID}
    )
    replies = {
        "next-assessment": (responses.GET, base + "/assessments/next-assessment"),
        "view-assessment": (responses.GET, base + "/assessments/view-assessment/5"),
        "submit-assessment": (responses.POST, base + "/assessments/submit-assessment"),
        "results": (responses.GET, base + "/assessments/results/5"),
    }
    # The step under test refuses, echoing the secrets, each time it is asked; the steps
    # before it work.
    for name, (method, url) in replies.items():
        if name == endpoint:
            for secret in (API_KEY, MOCK_LEARNER_ID, f"{MOCK_LEARNER_ID}:{API_KEY}"):
                mocked_upstream.add(method, url, **echo(status, secret))
            break
        good = {
            "next-assessment": {"status": "ready", "assessment_id": 5},
            "view-assessment": _content(),
            "submit-assessment": {"status": "ok"},
        }[name]
        mocked_upstream.add(method, url, json=good)
    staff_client = signed_in(capture, staff_member.username, PASSWORD)
    learner = register(staff_client, "ned.echo")
    client = signed_in(capture, "ned.echo", LEARNER_PASSWORD)
    for _ in range(5):
        take_a_step(client, learner)
    assert any(call.request.url.startswith(replies[endpoint][1]) for call in mocked_upstream.calls)
    staff_client.get("/operations/")
    staff_client.get(f"/learners/{learner.pk}/")
    attempt = current_attempt(learner)
    if attempt is not None:
        staff_client.get(f"/learners/{learner.pk}/attempts/{attempt.assessment_id}/")
    secrets = {
        "API key": API_KEY,
        "learner password": LEARNER_PASSWORD,
        "upstream learner id": MOCK_LEARNER_ID,
    }
    assert_nothing_leaked(secrets, all_logs, capfd, capture)


# An exception shown to a person ----------------------------------------------------------------


@pytest.mark.django_db
def test_an_unexpected_error_below_the_client_puts_no_secret_in_the_page_log_or_report(
    all_logs, capfd, capture, staff_member, mocked_upstream
):
    # A bug below the client (here the HTTP layer raises what it should not) reaches Django's
    # error handling through frames that hold the password and the key. The person gets the
    # plain 500 page; the log gets the traceback; and the report Django mails to ADMINS (or
    # any error tracker builds) lists each frame's local variables, less those marked
    # sensitive. (With DEBUG on, Django's error page filters nothing by design.)
    mocked_upstream.add(
        responses.POST,
        mocked_upstream.base_url + "/users/create-learner",
        body=RuntimeError("the HTTP layer broke"),
    )
    staff_client = signed_in(capture, staff_member.username, PASSWORD)
    staff_client.raise_request_exception = False
    response = staff_client.post("/learners/new/", registration("dan.debug"))
    assert response.status_code == 500
    assert not Learner.objects.filter(username="dan.debug").exists()

    (record,) = [r for r in all_logs.records if r.name == "django.request" and r.exc_info]
    reporter = ExceptionReporter(record.request, *record.exc_info, is_email=True)
    text, html = reporter.get_traceback_text(), reporter.get_traceback_html()
    assert "the HTTP layer broke" in text and "local vars" in html.lower()
    secrets = {"API key": API_KEY, "learner password": LEARNER_PASSWORD, "staff password": PASSWORD}
    found = leaks(secrets, [("the error report", text), ("the error report (HTML)", html)])
    assert not found, "\n".join(found)
    assert_nothing_leaked(secrets, all_logs, capfd, capture)


def test_the_capture_finds_a_secret_wherever_it_is(capture):
    # The checks above are only as good as their search: make sure it finds what it must.
    secrets = {"API key": API_KEY}
    record = logging.LogRecord("portal", logging.INFO, "x", 1, "key %s", (API_KEY,), None)
    assert leaks(secrets, [("log", record_text(record))])
    record = logging.LogRecord("portal", logging.INFO, "x", 1, "plain", (), None)
    record.payload = {"headers": {"apikey": API_KEY}}  # an `extra`
    assert leaks(secrets, [("log", record_text(record))])
    try:
        raise ValueError(f"boom {API_KEY}")
    except ValueError:
        record = logging.LogRecord("portal", logging.ERROR, "x", 1, "failed", (), sys.exc_info())
    assert leaks(secrets, [("log", record_text(record))])
    assert leaks(secrets, [("page", json.dumps({"k": API_KEY}))])
