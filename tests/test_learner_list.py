"""The learner list: filters on the latest assessment and results, orders, and the CSV."""

import csv
import io

import pytest
from django.test import Client

from accounts.models import StaffRole
from assessments.models import AssessmentAttempt
from audit.models import AuditEvent
from learners.models import Level
from tests.factories import attempt, cohort_learner, completed, make_group, make_staff, put_in_group

State = AssessmentAttempt.State

pytestmark = pytest.mark.django_db

# The tests marked `backend` (all but the browser's): the filters are Lower/Trim subqueries,
# the search is icontains, and the database orders and pages the list.


@pytest.fixture
def cohort() -> dict:
    """Learners whose latest assessment and results differ in every way the list filters on."""
    people = {
        "ann": cohort_learner(name="ann", registered="2026-09-01"),
        "ben": cohort_learner(name="ben", registered="2026-09-03"),
        "cat": cohort_learner(name="cat", registered="2026-09-02", level=Level.PRIMARY),
        "dan": cohort_learner(name="dan", registered="2026-09-04"),
        "eve": cohort_learner(name="eve", registered="2026-09-05"),
    }
    # Ann was high, then low with no area needing help: only her latest results count.
    completed(people["ann"], "2026-09-10", risk="HIGH", areas={"Sleep": "yes"})
    completed(people["ann"], "2026-10-10", risk="Low", areas={"Sleep": " No "})
    completed(people["ben"], "2026-10-01", risk=" high ", areas={"Sleep": "Yes - priority"})
    completed(people["cat"], "2026-10-05", risk="Medium", areas={"Sleep": "no"})
    # Dan has results, and a newer assessment under way.
    completed(people["dan"], "2026-09-20", risk="Moderate", areas={"Focus": "yes"})
    attempt(people["dan"], state=State.IN_PROGRESS, offered="2026-10-20")
    # Eve has no assessment at all.
    return people


def names(client: Client, **query: str) -> list[str]:
    """Return the usernames the list shows, in order, for a query string."""
    page = client.get("/learners/", query).context["page"]
    return [learner.username for learner in page.object_list]


@pytest.mark.parametrize(
    ("status", "shown"),
    [
        ("none", ["eve"]),
        ("open", ["dan"]),
        ("completed", ["ann", "ben", "cat"]),
        ("sent", []),
    ],
)
@pytest.mark.backend
def test_it_filters_by_the_latest_assessment(staff_client, cohort, status, shown):
    assert names(staff_client, status=status) == shown


@pytest.mark.parametrize(
    ("risk", "shown"),
    [("high", ["ben"]), ("moderate", ["cat", "dan"]), ("low", ["ann"])],
)
@pytest.mark.backend
def test_it_filters_by_the_latest_risk_level_whatever_its_case(staff_client, cohort, risk, shown):
    assert names(staff_client, risk=risk) == shown


@pytest.mark.backend
def test_it_filters_by_whether_the_latest_results_need_help(staff_client, cohort):
    assert names(staff_client, needs_help="yes") == ["ben", "dan"]
    # "No help needed" is a result saying so: not a learner without results.
    assert names(staff_client, needs_help="no") == ["ann", "cat"]


@pytest.mark.backend
def test_the_filters_combine_with_the_search_and_the_level(staff_client, cohort):
    assert names(staff_client, needs_help="no", level=Level.PRIMARY) == ["cat"]
    assert names(staff_client, q="an", status="completed") == ["ann"]
    assert names(staff_client, q="an", status="completed", risk="high") == []


@pytest.mark.parametrize(
    ("sort", "shown"),
    [
        ("name", ["ann", "ben", "cat", "dan", "eve"]),
        ("registered", ["eve", "dan", "ben", "cat", "ann"]),
        ("result", ["ann", "cat", "ben", "dan", "eve"]),
        # Most worrying first; the latest results first within a level; none last.
        ("risk", ["ben", "cat", "dan", "ann", "eve"]),
    ],
)
@pytest.mark.backend
def test_it_sorts_as_chosen(staff_client, cohort, sort, shown):
    assert names(staff_client, sort=sort) == shown


@pytest.mark.backend
def test_the_order_and_filters_hold_across_pages_and_their_links(staff_client, monkeypatch):
    from learners import views

    monkeypatch.setattr(views, "PAGE_SIZE", 2)
    for number in range(5):
        made = cohort_learner(name=f"pupil{number}", registered=f"2026-09-0{number + 1}")
        completed(made, f"2026-10-0{number + 1}", risk="HIGH")

    first = staff_client.get("/learners/", {"risk": "high", "sort": "registered"})
    second = staff_client.get("/learners/", {"risk": "high", "sort": "registered", "page": 2})

    shown = [row.username for row in first.context["page"].object_list]
    shown += [row.username for row in second.context["page"].object_list]
    assert shown == ["pupil4", "pupil3", "pupil2", "pupil1"]
    assert 'href="?risk=high&amp;sort=registered&amp;page=2"' in first.content.decode()


@pytest.mark.backend
def test_a_bad_value_in_the_query_string_shows_every_learner(staff_client, cohort):
    assert len(names(staff_client, status="nonsense")) == 5


@pytest.mark.backend
def test_staff_who_do_not_read_results_can_neither_see_nor_use_the_results_filters(cohort):
    group = make_group("10A")
    put_in_group(group, *cohort.values())
    teacher = make_staff("tara.teacher", role=StaffRole.TEACHER, groups=[group])
    client = Client()
    client.force_login(teacher)

    page = client.get("/learners/").content.decode()

    assert 'name="status"' in page and 'name="sort"' in page
    assert 'name="risk"' not in page and 'name="needs_help"' not in page
    assert 'value="risk"' not in page and 'value="result"' not in page
    # Typed into the address, they are ignored, not obeyed.
    assert names(client, risk="high") == ["ann", "ben", "cat", "dan", "eve"]
    assert names(client, sort="risk") == ["ann", "ben", "cat", "dan", "eve"]
    csv_rows = rows_of(client.get("/learners/learners.csv", {"needs_help": "yes"}))
    assert len(csv_rows) == 5


def rows_of(response) -> list[dict[str, str]]:
    text = b"".join(response.streaming_content).decode("utf-8")
    return list(csv.DictReader(io.StringIO(text[1:])))


@pytest.mark.backend
def test_the_csv_holds_the_learners_the_filters_show_and_the_audit_says_which(
    staff_client, staff, cohort
):
    query = {"status": "completed", "needs_help": "no", "sort": "risk"}
    page = staff_client.get("/learners/", query).content.decode()
    assert "Download these 2 learners as CSV" in page
    assert "/learners/learners.csv?status=completed&amp;needs_help=no&amp;sort=risk" in page

    rows = rows_of(staff_client.get("/learners/learners.csv", query))

    assert [row["username"] for row in rows] == ["ann", "cat"]
    event = AuditEvent.objects.get(action=AuditEvent.Action.LEARNERS_EXPORTED)
    assert event.detail == {"q": "", "level": "", "status": "completed", "needs_help": "no"}


@pytest.mark.backend
def test_the_list_says_when_nothing_matches_the_filters_and_offers_to_clear_them(
    staff_client, cohort
):
    page = staff_client.get("/learners/", {"risk": "low", "level": Level.PRIMARY})

    html = page.content.decode()
    assert "No learners match this search." in html
    assert 'href="/learners/">Clear search and filters</a>' in html


# Every select as wide as its longest choice needs: the width the browser gives the same
# select when nothing limits it.
CUT_OFF_SELECTS_JS = """() => [...document.querySelectorAll("main select")].flatMap((select) => {
  const free = select.cloneNode(true);
  Object.assign(free.style, {width: "auto", minWidth: "0", maxWidth: "none", position: "absolute"});
  document.body.append(free);
  const needed = free.getBoundingClientRect().width;
  free.remove();
  const given = select.getBoundingClientRect().width;
  if (given + 0.5 >= needed) return [];
  return [`${select.name}: ${given.toFixed(1)} of ${needed.toFixed(1)}px`];
})"""


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("width", [360, 1280])
def test_no_filter_or_sort_choice_is_cut_off(browser, live_server, staff, width):
    from tests.browsing import browser_sign_in

    page = browser.new_page(viewport={"width": width, "height": 800})
    browser_sign_in(page, live_server.url, staff.username)
    page.goto(live_server.url + "/learners/?sort=risk&status=refused")

    assert page.locator("main select").count() == 6  # with the class menu
    assert page.evaluate(CUT_OFF_SELECTS_JS) == []
    page.close()
