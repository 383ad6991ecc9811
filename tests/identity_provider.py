"""A real OpenID Connect provider on loopback for browser tests, and signing in through it.

oidc-provider-mock (PyPI) serves discovery, authorization, tokens, userinfo and keys on a free
port of 127.0.0.1, in a thread of the test process; its authorization page asks for a subject
("sub") and issues an ID token carrying the claims set for that subject. The portal meets it as
its generic provider (SSO_OIDC_*, provider id `oidc`), exactly as a trust's own would be.

    with running_identity_provider() as provider:
        use_identity_provider(settings, provider)            # SSO_OIDC_*, allauth and the CSP
        provider.set_claims("sam", school_claims("sam@school.example"))
        sign_in_with_school_account(page, live_server.url, provider, "sam")
        # the page is now wherever the portal sent the person (their start page, the
        # second-factor setup, or the refusal page)
"""

import copy
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import requests
import werkzeug.serving
from csp.constants import SELF
from oidc_provider_mock import app as provider_app
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from signin.configuration import sso_form_action, sso_providers

# The school's domain the provider's accounts are in (SSO_OIDC_DOMAINS).
SCHOOL_DOMAIN = "school.example"
# The words of the provider's button on the sign-in page (SSO_OIDC_NAME).
BUTTON = "Sign in with your trust account"
# How long a step of the journey may take in a slow CI machine's browser (milliseconds).
STEP_TIMEOUT = 15_000


class _QuietHandler(werkzeug.serving.WSGIRequestHandler):
    """No request log lines in the test output."""

    def log_request(self, *args, **kwargs) -> None:
        pass


@dataclass(frozen=True)
class IdentityProvider:
    """The running provider: its issuer URL, and the claims each subject signs in with."""

    url: str

    @property
    def authorize_url(self) -> str:
        """Return where the portal sends the browser to sign in."""
        return f"{self.url}/oauth2/authorize"

    def set_claims(self, sub: str, claims: dict) -> None:
        """Make the subject `sub` sign in with these claims (ID token and userinfo)."""
        answer = requests.put(f"{self.url}/users/{sub}", json=claims, timeout=5)
        answer.raise_for_status()


@contextmanager
def running_identity_provider() -> Iterator[IdentityProvider]:
    """Run the provider on a free loopback port for the block; stop it after."""
    # authlib refuses plain http unless told; the provider is on loopback only.
    before = os.environ.get("AUTHLIB_INSECURE_TRANSPORT")
    os.environ["AUTHLIB_INSECURE_TRANSPORT"] = "1"
    server = werkzeug.serving.make_server(
        "127.0.0.1", 0, provider_app(), threaded=True, request_handler=_QuietHandler
    )
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.1})
    thread.start()
    try:
        yield IdentityProvider(f"http://127.0.0.1:{server.server_port}")
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)
        if before is None:
            os.environ.pop("AUTHLIB_INSECURE_TRANSPORT", None)
        else:
            os.environ["AUTHLIB_INSECURE_TRANSPORT"] = before


def use_identity_provider(
    settings, provider: IdentityProvider, *, domains: tuple[str, ...] = (SCHOOL_DOMAIN,)
) -> None:
    """Configure the portal's generic provider as this one (pytest-django's `settings`).

    SOCIALACCOUNT_PROVIDERS and the CSP's form-action are computed once from the environment
    when settings load; they are computed again here from the values the test sets.
    """
    values = {
        "SSO_OIDC_SERVER_URL": provider.url,
        "SSO_OIDC_CLIENT_ID": "partner-portal",
        "SSO_OIDC_CLIENT_SECRET": "loopback-secret",
        "SSO_OIDC_NAME": BUTTON,
        "SSO_OIDC_DOMAINS": list(domains),
    }
    for name, value in values.items():
        setattr(settings, name, value)
    settings.SOCIALACCOUNT_PROVIDERS = sso_providers(values)
    policy = copy.deepcopy(settings.CONTENT_SECURITY_POLICY)
    policy["DIRECTIVES"]["form-action"] = [SELF, *sso_form_action(values)]
    settings.CONTENT_SECURITY_POLICY = policy


def school_claims(email: str, *, verified: bool = True, mfa: bool = False, **more) -> dict:
    """Return the claims of a school account: its email, whether verified, and `amr`."""
    claims = {"email": email, "email_verified": verified, "name": email.split("@")[0], **more}
    if mfa:
        claims["amr"] = ["pwd", "mfa"]
    return claims


def sign_in_with_school_account(
    page, base_url: str, provider: IdentityProvider, sub: str, claims: dict | None = None
) -> None:
    """Sign in on the portal's page with the provider's button, as `sub`; wait to come back.

    With `claims`, the subject's claims are set first. Fails (timing out) if the browser never
    reaches the provider (a CSP form-action that blocks the redirect) or never comes back.
    """
    if claims is not None:
        provider.set_claims(sub, claims)
    page.goto(base_url + "/accounts/login/")
    blocked: list[str] = []
    page.on("console", lambda message: blocked.append(message.text))
    page.get_by_role("button", name=BUTTON).click()
    try:
        page.wait_for_url(f"{provider.authorize_url}?**", timeout=STEP_TIMEOUT)
    except PlaywrightTimeout:
        raise AssertionError(
            f"The browser never reached the provider (at {page.url}): {blocked}"
        ) from None
    page.fill("input[name=sub]", sub)
    page.get_by_role("button", name="Authorize", exact=True).click()
    page.wait_for_url(f"{base_url}/**", timeout=STEP_TIMEOUT)
    page.wait_for_load_state()
