"""Steps for browser tests: signing in through the form, reaching the error pages, axe."""

from tests.factories import PASSWORD

# The WCAG 2.x A and AA rules axe checks a page against.
WCAG_AA = {
    "runOnly": {"type": "tag", "values": ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"]}
}


def browser_sign_in(page, base_url: str, username: str, password: str = PASSWORD) -> None:
    """Sign in through the login form, as a person would, and wait for the next page."""
    page.goto(base_url + "/accounts/login/")
    page.fill("#id_username", username)
    page.fill("#id_password", password)
    page.click("main button[type=submit]")
    page.wait_for_load_state()


def fill_date(page, name: str, day: object, month: object, year: object) -> None:
    """Type a date into a form's three boxes (Day, Month, Year) of the field `name`."""
    for part, value in (("day", day), ("month", month), ("year", year)):
        page.fill(f"#id_{name}_{part}", str(value))


def make_last_resort_pages_reachable(monkeypatch) -> None:
    """Make "Check for results" reach the 503 page and "Try sending them now" the 500 page."""
    # "Check for results" meets an upstream failure no view expects (the 503 page), and "Try
    # sending them now" crashes (the 500 page). Patched where the views look them up.
    from assessments import delivery
    from partner_api import PartnerApiServerError

    def refuse(**kwargs):
        raise PartnerApiServerError("results", status=500)

    def crash(**kwargs):
        raise RuntimeError("a bug")

    monkeypatch.setattr(delivery, "attempt_fetch_results", refuse)
    monkeypatch.setattr(delivery, "attempt_deliver", crash)


def violations(page) -> list[str]:
    """Run axe on the page as it stands; return one readable line per failing element."""
    from axe_playwright_python.sync_playwright import Axe  # only browser tests need axe

    found = Axe().run(page, options={**WCAG_AA, "resultTypes": ["violations"]})
    return [
        f"{rule['id']} ({rule['impact']}): {rule['help']} at {node['target']}: "
        f"{node.get('failureSummary', '')}".replace("\n", " ")
        for rule in found.response["violations"]
        for node in rule["nodes"]
    ]


def second_factor_given_minutes_ago(context, minutes: int) -> None:
    """Move the browser session's second factor (allauth's records) back `minutes` minutes."""
    from importlib import import_module

    from allauth.account.internal.flows.login import AUTHENTICATION_METHODS_SESSION_KEY
    from django.conf import settings

    cookie = next(c for c in context.cookies() if c["name"] == settings.SESSION_COOKIE_NAME)
    session = import_module(settings.SESSION_ENGINE).SessionStore(session_key=cookie["value"])
    records = session[AUTHENTICATION_METHODS_SESSION_KEY]
    for record in records:
        record["at"] -= minutes * 60
    session[AUTHENTICATION_METHODS_SESSION_KEY] = records
    session.save()
