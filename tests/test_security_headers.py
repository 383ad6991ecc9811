"""Security headers, cookies and `check --deploy`, read off real responses.

Development settings (what the test run uses) are checked in-process with Django's test
client; production settings (DEBUG off, HTTPS only) in a subprocess with a production
environment, since the settings module decides them when it is imported.
"""

import json
import os
import secrets
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest
from django.conf import settings
from django.contrib import admin
from django.test import Client
from django.urls import reverse

from assessments.models import AssessmentAttempt
from tests.journeys import attempt_url, ready_to_send, register_pupil

BASE_DIR = Path(settings.BASE_DIR)

EXPECTED_CSP = {
    "default-src": ["'self'"],
    "script-src": ["'self'"],
    "style-src": ["'self'"],
    "img-src": ["'self'"],
    "object-src": ["'none'"],
    "base-uri": ["'none'"],
    "frame-ancestors": ["'none'"],
    "form-action": ["'self'"],
}

# What a production deployment sets (the secrets are made up per run, so a leak is findable).
PRODUCTION_SECRET_KEY = secrets.token_urlsafe(50)
PRODUCTION_API_KEY = f"prod-api-key-{secrets.token_hex(12)}"
PRODUCTION_ENV = {
    "DEBUG": "False",
    "SECRET_KEY": PRODUCTION_SECRET_KEY,
    "ALLOWED_HOSTS": "portal.example.org",
    "PARTNER_API_KEY": PRODUCTION_API_KEY,
    "PARTNER_API_BASE_URL": "https://upstream.example.org",
}
# Settings a developer's shell may have set that would change what production looks like.
UNSET_FOR_PRODUCTION = [
    "SECURE_SSL_REDIRECT",
    "SECURE_HSTS_SECONDS",
    "SECURE_PROXY_SSL_HEADER",
    "CSRF_TRUSTED_ORIGINS",
    "PARTNER_API_ALLOW_HTTP",
    "DATABASE_URL",
]


def parse_csp(header: str) -> dict[str, list[str]]:
    policy = {}
    for directive in header.split(";"):
        name, *values = directive.split()
        policy[name] = values
    return policy


def assert_common_security_headers(response) -> None:
    """The headers every page carries, in development and production alike."""
    assert parse_csp(response["Content-Security-Policy"]) == EXPECTED_CSP
    assert "unsafe-inline" not in response["Content-Security-Policy"]
    assert response["X-Content-Type-Options"] == "nosniff"
    assert response["Referrer-Policy"] == "same-origin"
    assert response["Cross-Origin-Opener-Policy"] == "same-origin"
    assert response["X-Frame-Options"] == "DENY"


def run_in_production(args: list[str], tmp_path: Path, unset: str = "", **extra_env: str):
    """Run Python with the production environment (less `unset`, plus `extra_env`)."""
    env = {k: v for k, v in os.environ.items() if k not in UNSET_FOR_PRODUCTION}
    env.update(PRODUCTION_ENV)
    env.pop(unset, None)
    env.update(
        DJANGO_SETTINGS_MODULE="portal.settings",
        DATABASE_URL=f"sqlite:///{tmp_path / 'production.sqlite3'}",
        PYTHONDONTWRITEBYTECODE="1",
    )
    env.update(extra_env)
    return subprocess.run(
        [sys.executable, *args],
        cwd=BASE_DIR,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def assert_no_secret_in(output: str) -> None:
    assert PRODUCTION_SECRET_KEY not in output
    assert PRODUCTION_API_KEY not in output


# ---- Development settings: in-process, on real responses ----------------------------------


@pytest.mark.django_db
def test_the_login_page_carries_the_csp_and_every_security_header(client):
    response = client.get("/accounts/login/")
    assert response.status_code == 200
    assert_common_security_headers(response)


@pytest.mark.django_db
def test_a_learner_page_carries_the_csp_and_every_security_header(learner_client):
    response = learner_client.get("/me/")
    assert response.status_code == 200
    assert_common_security_headers(response)


@pytest.mark.django_db
def test_a_staff_page_carries_the_csp_and_every_security_header(staff_client):
    response = staff_client.get("/learners/")
    assert response.status_code == 200
    assert_common_security_headers(response)


@pytest.mark.django_db
def test_the_admin_login_carries_the_csp_and_every_security_header(client):
    # The admin signs in on the portal's page (its second factor follows there too).
    response = client.get("/admin/login/", follow=True)
    assert response.redirect_chain == [("/accounts/login/?next=%2Fadmin%2Flogin%2F", 302)]
    assert response.status_code == 200
    assert_common_security_headers(response)


@pytest.mark.django_db
def test_a_not_found_page_carries_the_csp_too(client):
    response = client.get("/no-such-page/")
    assert response.status_code == 404
    assert_common_security_headers(response)


@pytest.mark.django_db
def test_development_works_over_plain_http_without_hsts_or_secure_cookies(client, learner):
    page = client.get("/accounts/login/")
    assert page.status_code == 200  # no redirect to https
    assert "Strict-Transport-Security" not in page
    response = client.post(
        "/accounts/login/", {"username": "lee.learner", "password": "correct-horse-battery"}
    )
    assert response.status_code == 302
    session_cookie = response.cookies[settings.SESSION_COOKIE_NAME]
    assert not session_cookie["secure"]
    assert session_cookie["httponly"]
    assert session_cookie["samesite"] == "Lax"


# ---- Nothing inline for the CSP to block ---------------------------------------------------


class InlineContentFinder(HTMLParser):
    """Collect what a CSP without 'unsafe-inline' would block: inline script and style."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.problems: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = dict(attrs)
        # A JSON data block (json_script) is never run, so the CSP leaves it alone.
        is_data_block = attributes.get("type") == "application/json"
        if tag == "script" and not attributes.get("src") and not is_data_block:
            self.problems.append(f"inline <script {attrs}>")
        if tag == "style":
            self.problems.append("inline <style> element")
        for name, value in attrs:
            if name.startswith("on"):
                self.problems.append(f"event handler {name}= on <{tag}>")
            if name == "style":
                self.problems.append(f'style="{value}" on <{tag}>')
            if (value or "").strip().lower().startswith("javascript:"):
                self.problems.append(f"javascript: URL in {name}= on <{tag}>")


def inline_content(html: str) -> list[str]:
    finder = InlineContentFinder()
    finder.feed(html)
    finder.close()
    return finder.problems


def test_the_inline_content_finder_catches_what_the_csp_would_block():
    found = inline_content(
        '<script>alert(1)</script><style>p{}</style><p style="color:red" onclick="x()">'
        '<a href="javascript:x()">x</a><script src="/static/a.js"></script>'
        '<script type="application/json" id="d">{}</script>'
    )
    assert len(found) == 5


def template_files() -> list[Path]:
    roots = [BASE_DIR / "templates", *BASE_DIR.glob("*/templates")]
    return sorted(
        path for root in roots if ".venv" not in root.parts for path in root.rglob("*.html")
    )


def test_no_template_of_the_portal_holds_inline_script_style_or_handlers():
    files = template_files()
    assert any(path.name == "base.html" for path in files)
    problems = {
        str(path.relative_to(BASE_DIR)): found
        for path in files
        if (found := inline_content(path.read_text()))
    }
    assert problems == {}


def assert_page_is_csp_clean(client: Client, url: str, pages: dict[str, int]) -> None:
    response = client.get(url)
    pages[url] = response.status_code
    assert response.status_code in (200, 403, 404), (url, response.status_code)
    assert parse_csp(response["Content-Security-Policy"]) == EXPECTED_CSP, url
    if "text/html" in response.get("Content-Type", ""):
        assert inline_content(response.content.decode()) == [], url


@pytest.mark.django_db
def test_every_kind_of_page_renders_with_nothing_the_csp_would_block(
    client, staff, superuser, upstream
):
    pages: dict[str, int] = {}

    # Signed out: sign-in (empty and with an error), a missing page, a refused CSRF token.
    assert_page_is_csp_clean(client, "/accounts/login/", pages)
    failed = client.post("/accounts/login/", {"username": "nobody", "password": "wrong"})
    assert inline_content(failed.content.decode()) == []
    assert_page_is_csp_clean(client, "/no-such-page/", pages)
    csrf_refused = Client(enforce_csrf_checks=True).post("/accounts/login/", {})
    assert csrf_refused.status_code == 403
    assert inline_content(csrf_refused.content.decode()) == []
    assert "Content-Security-Policy" in csrf_refused

    # A learner through a whole journey: pages, check answers, results.
    learner = register_pupil(staff)
    attempt = ready_to_send(client, learner)
    for url in [
        "/me/",
        attempt_url(attempt, "page/1/"),
        attempt_url(attempt, "check/"),
        "/accounts/logout/",
    ]:
        assert_page_is_csp_clean(client, url, pages)
    client.post(attempt_url(attempt, "submit/"))
    attempt.refresh_from_db()
    assert attempt.state == AssessmentAttempt.State.COMPLETED
    assert_page_is_csp_clean(client, attempt_url(attempt, "results/"), pages)
    assert_page_is_csp_clean(client, "/me/", pages)

    # Staff pages.
    client.force_login(staff)
    for url in [
        "/learners/",
        "/learners/?q=pia",
        "/learners/new/",
        f"/learners/{learner.pk}/",
        f"/learners/{learner.pk}/attempts/{attempt.assessment_id}/",
        "/operations/",
    ]:
        assert_page_is_csp_clean(client, url, pages)
    invalid = client.post("/learners/new/", {"username": ""})
    assert inline_content(invalid.content.decode()) == []

    # The admin: index, every registered model's list, add form and one change form.
    client.force_login(superuser)
    admin_urls = [
        reverse("admin:index"),
        reverse("admin:password_change"),
        reverse("admin:auth_user_password_change", args=[superuser.pk]),
        reverse("admin:auth_user_delete", args=[staff.pk]),
    ]
    for model in admin.site._registry:
        info = (model._meta.app_label, model._meta.model_name)
        admin_urls.append(reverse("admin:{}_{}_changelist".format(*info)))
        admin_urls.append(reverse("admin:{}_{}_changelist".format(*info)) + "?q=a")
        admin_urls.append(reverse("admin:{}_{}_add".format(*info)))
        first = model.objects.first()
        if first is not None:
            admin_urls.append(reverse("admin:{}_{}_change".format(*info), args=[first.pk]))
            admin_urls.append(reverse("admin:{}_{}_history".format(*info), args=[first.pk]))
    for url in admin_urls:
        assert_page_is_csp_clean(client, url, pages)

    print("\nPages checked for inline script/style (status):")
    for url, status in pages.items():
        print(f"  {status}  {url}")
    assert sum(status == 200 for status in pages.values()) >= 20


# ---- Production settings: in a subprocess -------------------------------------------------

PRODUCTION_REQUESTS = r"""
import json

import django

django.setup()

from django.conf import settings
from django.contrib.auth.models import User
from django.core.management import call_command
from django.test import Client

call_command("migrate", verbosity=0, interactive=False)
# Production pages name hashed static files, so they need collectstatic (as `manage.py serve`).
call_command("collectstatic", verbosity=0, interactive=False)
User.objects.create_user("pat.production", password="Quiet-Harbour-Lamp-77")


def describe(response):
    return {
        "status": response.status_code,
        "headers": dict(response.headers),
        "cookies": {
            name: {
                "secure": bool(morsel["secure"]),
                "httponly": bool(morsel["httponly"]),
                "samesite": morsel["samesite"],
                "path": morsel["path"],
            }
            for name, morsel in response.cookies.items()
        },
    }


host = {"HTTP_HOST": "portal.example.org"}
print(json.dumps({
    "session_cookie": settings.SESSION_COOKIE_NAME,
    "csrf_cookie": settings.CSRF_COOKIE_NAME,
    "plain_http": describe(Client(**host).get("/accounts/login/")),
    "https": describe(Client(**host).get("/accounts/login/", secure=True)),
    "behind_tls_proxy": describe(
        Client(**host).get("/accounts/login/", headers={"X-Forwarded-Proto": "https"})
    ),
    "sign_in": describe(
        Client(**host).post(
            "/accounts/login/",
            {"username": "pat.production", "password": "Quiet-Harbour-Lamp-77"},
            secure=True,
        )
    ),
    "admin_login": describe(Client(**host).get("/admin/login/", secure=True)),
}))
"""


@pytest.fixture(scope="module")
def production(tmp_path_factory) -> dict:
    """Responses of a portal running with production settings, behind a TLS proxy."""
    tmp_path = tmp_path_factory.mktemp("production")
    result = run_in_production(
        ["-c", PRODUCTION_REQUESTS],
        tmp_path,
        SECURE_PROXY_SSL_HEADER="X-Forwarded-Proto,https",
        STATIC_ROOT=str(tmp_path / "static"),
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert_no_secret_in(result.stdout + result.stderr)
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_check_deploy_with_production_settings_reports_no_issues(tmp_path):
    result = run_in_production(["manage.py", "check", "--deploy"], tmp_path)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert "System check identified no issues" in output
    assert_no_secret_in(output)


def test_production_refuses_an_upstream_over_plain_http(tmp_path):
    result = run_in_production(
        ["manage.py", "check"], tmp_path, PARTNER_API_BASE_URL="http://upstream.example.org"
    )
    assert result.returncode != 0
    assert "PARTNER_API_BASE_URL must be an https URL" in result.stderr
    assert_no_secret_in(result.stdout + result.stderr)


def test_production_allows_plain_http_upstream_only_when_told_to(tmp_path):
    result = run_in_production(
        ["manage.py", "check"],
        tmp_path,
        PARTNER_API_BASE_URL="http://127.0.0.1:8001/plapi/v1/partners",
        PARTNER_API_ALLOW_HTTP="true",
    )
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize("missing", ["SECRET_KEY", "ALLOWED_HOSTS", "PARTNER_API_KEY"])
def test_production_refuses_to_start_without_each_required_setting(tmp_path, missing):
    result = run_in_production(["manage.py", "check"], tmp_path, unset=missing)
    assert result.returncode != 0
    assert "ImproperlyConfigured" in result.stderr
    assert missing in result.stderr
    assert_no_secret_in(result.stdout + result.stderr)


def test_production_admin_sign_in_sends_to_the_portals_with_hsts(production):
    response = production["admin_login"]
    assert response["status"] == 302
    assert response["headers"]["Location"].startswith("/accounts/login/?next=")
    assert "preload" in response["headers"]["Strict-Transport-Security"]
    assert parse_csp(response["headers"]["Content-Security-Policy"]) == EXPECTED_CSP


def test_production_redirects_plain_http_to_https(production):
    response = production["plain_http"]
    assert response["status"] == 301
    assert response["headers"]["Location"] == "https://portal.example.org/accounts/login/"


@pytest.mark.parametrize("request_name", ["https", "behind_tls_proxy"])
def test_production_pages_carry_hsts_with_preload_and_every_security_header(
    production, request_name
):
    response = production[request_name]
    headers = response["headers"]
    assert response["status"] == 200
    hsts = dict(
        part.strip().partition("=")[::2] for part in headers["Strict-Transport-Security"].split(";")
    )
    assert int(hsts["max-age"]) >= 31536000
    assert "includeSubDomains" in hsts and "preload" in hsts
    assert parse_csp(headers["Content-Security-Policy"]) == EXPECTED_CSP
    assert headers["X-Content-Type-Options"] == "nosniff"
    assert headers["Referrer-Policy"] == "same-origin"
    assert headers["Cross-Origin-Opener-Policy"] == "same-origin"
    assert headers["X-Frame-Options"] == "DENY"


def test_production_session_and_csrf_cookies_are_secure_httponly_and_samesite(production):
    response = production["sign_in"]
    assert response["status"] == 302
    cookies = response["cookies"]
    names = (production["session_cookie"], production["csrf_cookie"])
    assert set(cookies) >= set(names)
    for name in names:
        assert cookies[name]["secure"], name
        assert cookies[name]["httponly"], name
        assert cookies[name]["samesite"] == "Lax", name
    assert "Strict-Transport-Security" in response["headers"]
