"""Every page is served whole by the portal itself, and stays small enough for a slow phone.

The pages and states are the tour of tests/page_tour.py (tests/test_phones.py takes it too).
For each one the browser records every request it makes, from the page itself to the last
stylesheet, script, image and favicon: none may leave the live server's origin, and the
bodies of all the responses (document, CSS, JS, images, as received) add up to less than
100 KB.

An upstream's icon given by address is never shown (portal_tags.answer_icon), so it cannot
make a request either; tests/test_hostile_upstream.py and test_browser_inert.py check that.
"""

from contextlib import suppress
from urllib.parse import urlsplit

import pytest

from tests.page_tour import ANONYMOUS, LEARNER, fill_portal, visit_as

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

BUDGET = 100 * 1024


@pytest.fixture
def portal_with_data(upstream, staff, learner, other_learner):
    return fill_portal(staff=staff, learner=learner, other_learner=other_learner)


def origin(url: str) -> tuple[str, str]:
    parts = urlsplit(url)
    return parts.scheme, parts.netloc


class Transfer:
    """Every request a page makes, and the responses since its own document was asked for."""

    def __init__(self, page):
        self.requests, self.responses = [], []
        page.on("request", self.on_request)
        page.on("response", self.on_response)

    def on_request(self, request) -> None:
        self.requests.append(request)
        if request.is_navigation_request() and request.frame.parent_frame is None:
            self.responses.clear()  # a new page (or the page a redirect leads to) starts here

    def on_response(self, response) -> None:
        self.responses.append(response)

    def weight(self) -> int:
        """Bytes of every response body since the page's document was asked for."""
        from playwright.sync_api import Error

        total = 0
        for response in self.responses:
            with suppress(Error):  # a redirect has no body
                total += len(response.body())
        return total


def test_no_page_asks_another_origin_for_anything_and_each_weighs_under_100_kb(
    browser, live_server, portal_with_data
):
    requests, weights = [], {}
    for user, stops in portal_with_data:
        context = browser.new_context(viewport={"width": 360, "height": 640})
        page = context.new_page()
        transfer = Transfer(page)
        for stop, _ in visit_as(page, live_server.url, user, stops):
            page.wait_for_load_state("networkidle")
            weights[stop.name] = transfer.weight()
        requests += transfer.requests
        context.close()

    # Every stop of the tour was weighed: 18 staff pages, 10 of an admin, 9 of a teacher, 4 of
    # card sign-in.
    assert len(weights) == len(ANONYMOUS) + 18 + len(LEARNER) + 10 + 9 + 4
    assert {origin(request.url) for request in requests} == {origin(live_server.url)}
    assert all(weight > 1000 for weight in weights.values()), weights  # it could measure
    heavy = {name: weight for name, weight in weights.items() if weight >= BUDGET}
    assert heavy == {}, weights
