"""The portal's pages against an odd, hostile or failing upstream (simulated with responses).

The payloads under tests/data/hostile/ put markup, script and URL tricks in every field the
upstream sends, with the quirks the spec allows: arrays out of DisplayOrder, unknown extra
fields, int ids, unusual status, risk and needs_help texts. The last part sends every vector of
the corpus in tests/data/hostile_vectors.json through every upstream field.
"""

import copy
import json
import re
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path

import pytest
import requests
import responses
from django.http import HttpResponse
from django.utils.html import escape

from assessments.child_words import focus_area_words
from assessments.models import (
    AssessmentAttempt,
    AssessmentResult,
    AttemptAnswer,
    FocusArea,
    fit,
    needs_help_flagged,
)
from kit.icons import KNOWN_ICONS
from schools.models import PartnerSettings
from tests.factories import make_dsl_on_duty
from tests.hostile import HOSTILE, assert_no_active_content

DATA = Path(__file__).parent / "data" / "hostile"
API_PREFIX = "/plapi/v1/partners"
ASSESSMENT_ID = 9041
GOOD_ICON = "https://cdn.example/icons/moon.png"
GOOD_LINK = "https://help.example/sleep"
State = AssessmentAttempt.State

# Tags an upstream must never get onto a page (the portal's own templates use none of them).
FORBIDDEN_TAGS = {
    "script", "style", "iframe", "frame", "frameset", "object", "embed", "applet", "svg",
    "math", "base", "template", "noscript", "textarea", "video", "audio", "source",
    "isindex", "xmp", "plaintext", "noembed", "noframes",
}  # fmt: skip
RAW_FORBIDDEN = re.compile(r"<\s*/?\s*(" + "|".join(sorted(FORBIDDEN_TAGS)) + r")\b", re.I)
URL_ATTRIBUTES = {"href", "src", "action", "formaction", "srcset", "poster", "data", "xlink:href"}
# Attributes that hold an upstream text as text: what a speak button or an answer's radio reads
# aloud (the script hands it to speech synthesis, never to markup or an address) and a speak
# button's accessible name. Escaped like any text, they may say anything, "javascript:" included;
# only there: the same attribute on any other element is checked like the rest.
SPEAK_BUTTON_TEXTS = {"data-speak", "aria-label"}


def is_spoken_text(tag: str, attributes: dict, name: str) -> bool:
    """Whether this attribute is a text read aloud: on button.speak, or an answer's radio."""
    if tag == "button" and "speak" in (attributes.get("class") or "").split():
        return name in SPEAK_BUTTON_TEXTS
    return tag == "input" and attributes.get("type") == "radio" and name == "data-speak"


def payload(name: str) -> dict:
    return json.loads((DATA / f"{name}.json").read_text())


def by_display_order(items: list[dict]) -> list[dict]:
    return sorted(items, key=lambda item: int(item["DisplayOrder"]))


# The simulated upstream ------------------------------------------------------------------------


class FakeUpstream:
    """Register canned upstream replies at the URLs the portal's client builds from settings."""

    def __init__(self, mock: responses.RequestsMock, base_url: str):
        self.mock = mock
        self.base_url = base_url

    def url(self, path: str) -> str:
        return self.base_url + path

    def next_assessment(self, **reply):
        self.mock.add(responses.GET, self.url("/assessments/next-assessment"), **reply)

    def view_assessment(self, assessment_id: int = ASSESSMENT_ID, **reply):
        path = f"/assessments/view-assessment/{assessment_id}"
        self.mock.add(responses.GET, self.url(path), **reply)

    def submit(self, **reply):
        self.mock.add(responses.POST, self.url("/assessments/submit-assessment"), **reply)

    def results(self, assessment_id: int = ASSESSMENT_ID, **reply):
        self.mock.add(responses.GET, self.url(f"/assessments/results/{assessment_id}"), **reply)

    def calls(self, fragment: str) -> list:
        return [call for call in self.mock.calls if fragment in call.request.url]

    def submissions(self) -> list[dict]:
        return [json.loads(call.request.body) for call in self.calls("/submit-assessment")]


def let_learners_read_every_field() -> None:
    """Show learners their LOA score and risk level too, as a partner may choose to.

    Then every field the upstream sends is checked on the learner's results page as well as on
    the staff pages (by default learners read fewer of them).
    """
    PartnerSettings.current()
    PartnerSettings.objects.update(show_scores_to_learners=True)


@pytest.fixture(autouse=True)
def learners_read_every_field(request):
    if request.node.get_closest_marker("django_db"):
        request.getfixturevalue("db")
        let_learners_read_every_field()


@pytest.fixture
def upstream_api(settings):
    """A simulated upstream; any request without a registered reply fails as a connection error."""
    base_url = settings.PARTNER_API_BASE_URL.strip().rstrip("/")
    if not base_url.endswith(API_PREFIX):
        base_url += API_PREFIX
    with responses.RequestsMock(assert_all_requests_are_fired=False) as mock:
        yield FakeUpstream(mock, base_url)


@pytest.fixture
def hostile_upstream(upstream_api):
    """An upstream whose every reply is the hostile payload, submissions accepted."""
    upstream_api.next_assessment(json=payload("next_assessment"))
    upstream_api.view_assessment(json=payload("view_assessment"))
    upstream_api.submit(json={"status": "received", "x-extra": ["<script>alert(1)</script>"]})
    upstream_api.results(json=payload("results"))
    return upstream_api


# Reading pages ---------------------------------------------------------------------------------


class _Page(HTMLParser):
    """Collect the tags, radios, text and focus-area rows of a rendered page."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None], list[tuple[str, str | None]]]] = []
        self.text: list[str] = []
        self.oddities: list[str] = []
        self.focus_rows: list[dict] = []
        self._in_focus_table = False
        self._row: dict | None = None

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs), attrs))
        attributes = dict(attrs)
        if tag == "table" and "focus-areas" in (attributes.get("class") or ""):
            self._in_focus_table = True
        elif tag == "tr" and self._in_focus_table:
            self._row = {"class": attributes.get("class") or "", "cells": []}
        elif tag in ("th", "td") and self._row is not None:
            self._row["cells"].append("")

    def handle_startendtag(self, tag, attrs):
        self.tags.append((tag, dict(attrs), attrs))

    def handle_endtag(self, tag):
        if tag == "table":
            self._in_focus_table = False
        elif tag == "tr" and self._row is not None:
            self._row["cells"] = [cell.strip() for cell in self._row["cells"]]
            if self._row["cells"] and self._row["cells"][0] != "Focus area":
                self.focus_rows.append(self._row)
            self._row = None

    def handle_data(self, data):
        self.text.append(data)
        if self._row is not None and self._row["cells"]:
            self._row["cells"][-1] += data

    def handle_comment(self, data):
        self.oddities.append(f"comment {data!r}")

    def handle_pi(self, data):
        self.oddities.append(f"processing instruction {data!r}")


def read_page(html: str) -> _Page:
    page = _Page()
    page.feed(html)
    page.close()
    return page


def radios(html: str) -> dict[str, list[str]]:
    """Return each radio group's values (unescaped, as a browser would send them) in page order."""
    groups: dict[str, list[str]] = {}
    for tag, attributes, _ in read_page(html).tags:
        if tag == "input" and attributes.get("type") == "radio":
            groups.setdefault(attributes["name"], []).append(attributes["value"])
    return groups


# The portal's own scripts, if any (a static file, never inline code): the only <script> allowed.
OWN_SCRIPT = re.compile(
    r'<script src="/static/[^"<>]+"(?: (?:defer|async|nonce="[^"<>]*"|type="module"))*></script>'
)

# The portal's own charts (kit/charts.py): inline SVG drawn from numbers and escaped
# labels. Each is checked to hold only drawing elements, then set aside like own scripts.
OWN_CHART = re.compile(r'<svg class="chart[^"<>]*"[^<>]*>.*?</svg>', re.S)
CHART_TAGS = {"svg", "title", "desc", "g", "rect", "text", "tspan", "line", "polyline", "circle"}


def without_own_charts(html: str) -> str:
    """Return the page without the portal's own charts, failing if one holds anything active."""
    for chart in OWN_CHART.findall(html):
        for tag, attributes, pairs in read_page(chart).tags:
            assert tag in CHART_TAGS, f"<{tag}> inside a chart"
            assert len(pairs) == len(attributes), f"duplicate attributes on <{tag}> in a chart"
            for name in attributes:
                assert not name.startswith("on"), f"<{tag} {name}=...> inside a chart"
                assert name not in ("style", "href", "xlink:href", "src"), (tag, name)
    return OWN_CHART.sub("", html)


# The helplines on a learner's results page (the partner's settings, never the upstream's): a
# number to call or text, digits only.
HELPLINE_NUMBER = re.compile(r"(tel|sms):\+?\d+")


def only_the_good_link(href: str) -> bool:
    return href == GOOD_LINK


def any_link_the_policy_allows(href: str) -> bool:
    return href.lower().startswith(("http:", "https:", "mailto:"))


def assert_page_is_inert(response, images=frozenset(), external_link=only_the_good_link) -> str:
    """Fail if the page carries anything active that could have come from the upstream.

    `images` are the only image sources allowed (none: the upstream's icon addresses are never
    shown, so no request leaves the portal's origin), and
    `external_link` says which links off the portal are (the sanitizer keeps http, https and
    mailto links).
    """
    assert response.status_code < 500, response.status_code
    html = response.content.decode()
    without_own_scripts = without_own_charts(OWN_SCRIPT.sub("", html))
    assert "<script" not in without_own_scripts.lower()
    assert not RAW_FORBIDDEN.search(without_own_scripts), RAW_FORBIDDEN.search(html).group(0)
    page = read_page(without_own_scripts)
    assert not page.oddities, page.oddities
    for tag, attributes, pairs in page.tags:
        assert tag not in FORBIDDEN_TAGS, f"<{tag}> on the page"
        assert len(pairs) == len(attributes), f"duplicate attributes on <{tag}>"
        for name, value in attributes.items():
            assert not name.startswith("on"), f"<{tag} {name}=...> on the page"
            assert name not in ("style", "srcdoc", "formaction", "background"), (tag, name)
            if tag == "a" and name == "href" and external_link(value or ""):
                continue  # an http(s) or mailto link: its path may say anything
            if is_spoken_text(tag, attributes, name):
                continue
            compact = re.sub(r"[\s\x00-\x1f]", "", value or "").lower()
            assert "javascript:" not in compact, f"<{tag} {name}={value!r}>"
            assert "vbscript:" not in compact, f"<{tag} {name}={value!r}>"
            if name in URL_ATTRIBUTES:
                assert not compact.startswith("data:"), f"<{tag} {name}={value!r}>"
        if tag == "meta":
            assert "http-equiv" not in attributes, attributes
        if tag == "form":
            action = attributes.get("action") or ""
            assert action == "" or (action.startswith("/") and not action.startswith("//")), action
        if tag == "img":
            assert attributes.get("src") in images, attributes
        if tag == "link":
            assert attributes.get("rel") in ("stylesheet", "icon"), attributes
            assert attributes.get("href", "").startswith("/static/"), attributes
        if tag == "a" and attributes.get("href") is not None:
            href = attributes["href"]
            portal_path = href.startswith(("/", "#", "?")) and not href.startswith("//")
            own_phone_link = HELPLINE_NUMBER.fullmatch(href)
            assert portal_path or own_phone_link or external_link(href), f"link to {href!r}"
        if tag == "input":
            assert attributes.get("type") in ("hidden", "radio", "text", "search"), attributes
    return html


def attribute_values(html: str, skip_radio_values: bool = False) -> str:
    """Return every attribute value of the page but its texts read aloud, joined."""
    return "\n".join(
        value or ""
        for tag, attributes, _ in read_page(html).tags
        for name, value in attributes.items()
        if not is_spoken_text(tag, attributes, name)
        and not (skip_radio_values and tag == "input" and name == "value")
    )


def test_only_speak_buttons_and_answers_radios_may_carry_a_text_read_aloud():
    sneaky = "javascript:alert(1)"
    allowed = (
        f'<button type="button" class="speak" data-speak="{sneaky}" '
        f'aria-label="Read aloud: {sneaky}" hidden></button>'
        f'<input type="radio" name="q1" value="1" data-speak="{sneaky}">'
    )
    assert_page_is_inert(HttpResponse(allowed))
    assert "alert(" not in attribute_values(allowed, skip_radio_values=True)

    for elsewhere in (
        f'<a href="/" aria-label="{sneaky}">Home</a>',
        f'<div data-speak="{sneaky}"></div>',
        f'<button type="button" class="button" aria-label="{sneaky}"></button>',
        f'<input type="text" name="q" data-speak="{sneaky}">',
        f'<input type="radio" name="q1" value="1" aria-label="{sneaky}">',
    ):
        with pytest.raises(AssertionError, match="javascript:"):
            assert_page_is_inert(HttpResponse(elsewhere))
        assert "alert(" in attribute_values(elsewhere), elsewhere


def upstream_html_blocks(html: str) -> list[str]:
    """Return the contents of the page's sanitized upstream HTML blocks."""
    return re.findall(r'<div class="upstream-html">(.*?)</div>', html, re.S)


def assert_shown_as_text(html: str, value: str) -> None:
    """The value appears escaped, so the person reads it as it was sent and nothing runs."""
    assert escape(value) in html, f"{value!r} is not shown escaped"


# Walking the flow --------------------------------------------------------------------------------


def start(client) -> None:
    response = client.post("/me/start/")
    assert response.status_code == 302
    assert response.url == f"/me/assessments/{ASSESSMENT_ID}/", response.url


def answer_every_page(
    client, pick=lambda values: values[0], pages=None, assessment_id=ASSESSMENT_ID
) -> dict[str, str]:
    """Answer each question page in turn; return the form choices and collect the pages."""
    url = client.get(f"/me/assessments/{assessment_id}/").url
    chosen: dict[str, str] = {}
    while "/page/" in url:
        page = client.get(url)
        html = assert_page_is_inert(page)
        if pages is not None:
            pages.append(html)
        data = {name: pick(values) for name, values in radios(html).items()}
        chosen.update(data)
        response = client.post(url, {**data, "continue": ""})
        assert response.status_code == 302, response.content.decode()[:2000]
        url = response.url
    assert url == f"/me/assessments/{assessment_id}/check/"
    return chosen


def walk_to_check(client, pages=None) -> dict[str, str]:
    start(client)
    return answer_every_page(client, pages=pages)


def attempt_of(learner) -> AssessmentAttempt:
    return AssessmentAttempt.objects.get(learner=learner, assessment_id=ASSESSMENT_ID)


def questions_in_display_order() -> list[dict]:
    return by_display_order(payload("view_assessment")["questions"])


# Quirks the spec allows ----------------------------------------------------------------------


@pytest.mark.django_db
def test_question_pages_show_questions_and_answers_in_display_order(
    learner_client, hostile_upstream
):
    pages: list[str] = []
    walk_to_check(learner_client, pages=pages)

    questions = questions_in_display_order()
    assert len(pages) == 2  # one page per Group, in order of first appearance
    for html, on_page in zip(pages, (questions[:2], questions[2:]), strict=True):
        positions = [html.index(escape(question["Question"])) for question in on_page]
        assert positions == sorted(positions)
        for (name, values), question in zip(radios(html).items(), on_page, strict=True):
            answers = by_display_order(question["answers"])
            assert values == [str(answer["id"]) for answer in answers], name
            labels = [html.index(escape(answer["AnswerCopy"])) for answer in answers]
            assert labels == sorted(labels)
    assert f"<h1>{escape(questions[0]['Group'])}</h1>" in pages[0]
    assert f"<h1>{escape(questions[2]['Group'])}</h1>" in pages[1]
    assert "Step 1 of 2" in pages[0] and "Step 2 of 2" in pages[1]


@pytest.mark.django_db
def test_the_check_page_lists_questions_in_display_order(learner_client, hostile_upstream):
    walk_to_check(learner_client)
    html = assert_page_is_inert(learner_client.get(f"/me/assessments/{ASSESSMENT_ID}/check/"))
    positions = [html.index(escape(q["Question"])) for q in questions_in_display_order()]
    assert positions == sorted(positions)
    assert html.count(">Change<") == 4


@pytest.mark.django_db
def test_int_ids_and_odd_ids_go_back_upstream_exactly_as_received(
    learner, learner_client, hostile_upstream
):
    walk_to_check(learner_client, pages=None)
    learner_client.post(f"/me/assessments/{ASSESSMENT_ID}/submit/")

    (submission,) = hostile_upstream.submissions()
    first_answers = {
        str(q["id"]): str(by_display_order(q["answers"])[0]["id"])
        for q in questions_in_display_order()
    }
    assert submission["session"] == 884422
    assert {(r["question_id"], r["answer_id"]) for r in submission["responses"]} == set(
        first_answers.items()
    )
    assert len(submission["responses"]) == 4
    for call in hostile_upstream.mock.calls:
        assert call.request.headers["learnerid"] == "u-lee"


@pytest.mark.django_db
def test_a_learner_finishes_despite_unknown_fields_and_an_unusual_status(
    learner, learner_client, hostile_upstream
):
    walk_to_check(learner_client)
    response = learner_client.post(f"/me/assessments/{ASSESSMENT_ID}/submit/")
    assert response.url == f"/me/assessments/{ASSESSMENT_ID}/results/"

    attempt = attempt_of(learner)
    assert attempt.state == State.COMPLETED
    assert attempt.offer_status == "ready-ish"
    html = assert_page_is_inert(learner_client.get(response.url))
    assert "Amber / watch" in html
    assert "72.5" in html


@pytest.mark.django_db
def test_unusual_needs_help_values_are_flagged_and_shown_as_given(
    learner, learner_client, staff, hostile_upstream
):
    walk_to_check(learner_client)
    learner_client.post(f"/me/assessments/{ASSESSMENT_ID}/submit/")
    mine = assert_page_is_inert(learner_client.get(f"/me/assessments/{ASSESSMENT_ID}/results/"))
    staff_client = type(learner_client)()
    staff_client.force_login(staff)
    html = assert_page_is_inert(
        staff_client.get(f"/learners/{learner.pk}/attempts/{ASSESSMENT_ID}/")
    )

    rows = {row["cells"][0]: row for row in read_page(html).focus_rows}
    areas = payload("results")["focus_areas"]
    # The learner reads the areas flagged as things that could help, in the portal's words
    # (a secondary pupil's), without the values.
    help_list = mine.split('<ul class="help-areas">')[1].split("</ul>")[0]
    for area in areas:
        words = focus_area_words(area["search_filter_name"], primary=False)
        listed = f"<li>{escape(words)}</li>" in help_list
        assert listed == needs_help_flagged(area["needs_help"]), area
    assert set(rows) == {area["search_filter_name"] for area in areas}
    for area in areas:
        row = rows[area["search_filter_name"]]
        needs_help = area["needs_help"]
        if needs_help.strip().lower() == "no":
            assert row["cells"][1].strip() == "No", area
            assert "needs-help" not in row["class"], area
        else:
            assert "Needs help" in row["cells"][1], area
            if needs_help.lower() != "yes":  # the plain value needs no repeating
                assert f"({needs_help})" in row["cells"][1], area
            assert "needs-help" in row["class"], area
        assert row["cells"][2].strip() == str(area["questions_count"])


@pytest.mark.django_db
def test_staff_see_the_offer_status_risk_level_and_areas_needing_help_as_given(
    learner, learner_client, staff, hostile_upstream
):
    walk_to_check(learner_client)
    learner_client.post(f"/me/assessments/{ASSESSMENT_ID}/submit/")
    staff_client = type(learner_client)()
    staff_client.force_login(staff)

    detail = assert_page_is_inert(staff_client.get(f"/learners/{learner.pk}/"))
    assert "Amber / watch" in detail
    assert_shown_as_text(detail, '<script>alert("fa")</script>EXAM ANXIETY')

    page = assert_page_is_inert(
        staff_client.get(f"/learners/{learner.pk}/attempts/{ASSESSMENT_ID}/")
    )
    assert "ready-ish" in page
    assert_shown_as_text(page, payload("next_assessment")["target_group"])
    assert "Amber / watch" in page


# Hostile content in every field ------------------------------------------------------------


def run_whole_journey(learner, learner_client, staff_client, staff) -> dict[str, str]:
    """Walk the learner from start to results and staff through both pages; return each page."""
    pages: dict[str, str] = {}
    pages["me before"] = assert_page_is_inert(learner_client.get("/me/"))
    start(learner_client)
    pages["me during"] = assert_page_is_inert(learner_client.get("/me/"))
    question_pages: list[str] = []
    answer_every_page(learner_client, pick=lambda values: values[1], pages=question_pages)
    pages.update({f"page {n}": html for n, html in enumerate(question_pages, start=1)})
    pages["check"] = assert_page_is_inert(
        learner_client.get(f"/me/assessments/{ASSESSMENT_ID}/check/")
    )
    response = learner_client.post(f"/me/assessments/{ASSESSMENT_ID}/submit/")
    assert response.status_code == 302
    pages["results"] = assert_page_is_inert(learner_client.get(response.url))
    pages["me after"] = assert_page_is_inert(learner_client.get("/me/"))
    assert attempt_of(learner).state == State.COMPLETED

    staff_client.force_login(staff)
    pages["staff detail"] = assert_page_is_inert(staff_client.get(f"/learners/{learner.pk}/"))
    pages["staff attempt"] = assert_page_is_inert(
        staff_client.get(f"/learners/{learner.pk}/attempts/{ASSESSMENT_ID}/")
    )
    pages["staff list"] = assert_page_is_inert(staff_client.get("/learners/"))
    return pages


@pytest.mark.django_db
def test_no_page_of_the_journey_carries_active_content_from_the_upstream(
    learner, client, staff, hostile_upstream
):
    learner_client = client
    learner_client.force_login(learner.user)
    staff_client = type(client)()
    pages = run_whole_journey(learner, learner_client, staff_client, staff)
    assert len(pages) == 10
    for name, html in pages.items():
        # Radio values carry the upstream's answer ids back as sent; nothing else may.
        assert "alert(" not in attribute_values(html, skip_radio_values=True), name


@pytest.mark.django_db
def test_plain_text_fields_are_shown_escaped_as_text(learner, client, staff, hostile_upstream):
    client.force_login(learner.user)
    pages = run_whole_journey(learner, client, type(client)(), staff)
    content = payload("view_assessment")
    questions = by_display_order(content["questions"])
    title = content["assessment_info"]["Title"]

    for number, on_page in ((1, questions[:2]), (2, questions[2:])):
        html = pages[f"page {number}"]
        assert_shown_as_text(html, on_page[0]["Group"])
        for question in on_page:
            assert_shown_as_text(html, question["Question"])
            for answer in question["answers"]:
                assert_shown_as_text(html, answer["AnswerCopy"])
    for question in questions:
        assert_shown_as_text(pages["check"], question["Question"])
        assert_shown_as_text(pages["check"], question["Group"])
        chosen = by_display_order(question["answers"])[1]
        assert_shown_as_text(pages["check"], chosen["AnswerCopy"])

    for name in ("me during", "results", "me after", "staff detail", "staff attempt"):
        assert_shown_as_text(pages[name], title)
    results = payload("results")
    for name in ("results", "staff detail", "staff attempt"):
        html = pages[name]
        assert_shown_as_text(html, results["TraitTitle"])
        assert_shown_as_text(html, results["TraitCopy"])
        assert_shown_as_text(html, results["RiskLevel"])
        for area in results["focus_areas"]:
            # The learner's page lists only the areas that could help them.
            if name != "results":
                assert_shown_as_text(html, area["search_filter_name"])
            elif needs_help_flagged(area["needs_help"]):  # in the portal's words
                assert_shown_as_text(
                    html, focus_area_words(area["search_filter_name"], primary=False)
                )
    assert_shown_as_text(pages["staff attempt"], "<b onmouseover=alert(1)>yes</b>")
    assert "{{ request.user }} {% csrf_token %}" in pages["page 2"]
    assert "&lt;script&gt;alert(&quot;q1&quot;)&lt;/script&gt;" in pages["page 1"]


@pytest.mark.django_db
def test_result_html_keeps_the_allowed_markup_and_loses_the_rest(
    learner, client, staff, hostile_upstream
):
    client.force_login(learner.user)
    pages = run_whole_journey(learner, client, type(client)(), staff)

    for name in ("results", "staff detail", "staff attempt"):
        html = pages[name]
        assert "<li>Yawns in class</li>" in html, name
        assert '<a rel="noopener noreferrer">Bad link</a>' in html, name
        assert f'<a href="{GOOD_LINK}" rel="noopener noreferrer">Sleep guide</a>' in html, name
        assert "<p>Try these steps:</p><ol><li>Keep a <strong>regular</strong> bedtime</li>" in html
        assert "<li>Revise in blocks</li></ol>" in html, name
        assert "<p>Your answers suggest <em>sleep</em> matters.</p>" in html, name
        for dropped in ('alert("signs")', 'alert("desc")', 'alert("math")', 'alert("obj")'):
            assert dropped not in html and escape(dropped) not in html, (name, dropped)
        assert "display:none" not in html, name
        blocks = upstream_html_blocks(html)
        assert len(blocks) == 3, name
        for block in blocks:
            # Stripped markup never turns into visible text.
            assert "&lt;" not in block, (name, block)
            assert "evil.example" not in block, (name, block)


@pytest.mark.django_db
def test_icons_show_only_for_known_names_never_as_images(learner_client, hostile_upstream):
    pages: list[str] = []
    walk_to_check(learner_client, pages=pages)

    images = [
        attributes["src"]
        for html in pages
        for tag, attributes, _ in read_page(html).tags
        if tag == "img"
    ]
    # An icon by address (GOOD_ICON among them) would make the learner's browser call a host
    # the portal does not control.
    assert images == []
    assert all(GOOD_ICON not in html for html in pages)
    assert '<span class="answer-icon" aria-hidden="true">☾</span>' in pages[0]
    for html in pages:
        values = attribute_values(html)
        assert "evil.example" not in values
        assert "cdn.example/x.png" not in values
        assert "cdn.example/icons/x.png" not in values
        assert "data:image" not in values


# The upstream failing during the flow ----------------------------------------------------------

CONTENT_FAILURES = {
    "a server error": (
        {"status": 500, "json": {"error": "boom"}},
        "The assessment service had an internal error.",
    ),
    "a timeout": (
        {"body": requests.exceptions.ReadTimeout("read timed out")},
        "could not be reached or did not answer in time",
    ),
    "a refused connection": (
        {"body": requests.exceptions.ConnectionError("refused")},
        "could not be reached or did not answer in time",
    ),
    "a body that is not JSON": (
        {
            "status": 200,
            "body": "<html><script>alert(1)</script></html>",
            "content_type": "text/html",
        },
        "sent an answer the portal could not read",
    ),
    "a missing session": (
        {
            "json": {
                k: v for k, v in payload("view_assessment").items() if k != "assessment_session"
            }
        },
        "sent an answer the portal could not read",
    ),
    "a question without its text": (
        {
            "json": {
                **payload("view_assessment"),
                "questions": [
                    {k: v for k, v in q.items() if k != "Question"}
                    for q in payload("view_assessment")["questions"]
                ],
            }
        },
        "sent an answer the portal could not read",
    ),
    "an answer that is not an object": (
        {"json": {**payload("view_assessment"), "questions": [{"id": 1, "answers": ["x"]}]}},
        "sent an answer the portal could not read",
    ),
}


@pytest.mark.django_db
@pytest.mark.parametrize("failure", CONTENT_FAILURES)
def test_a_content_failure_shows_a_message_on_my_page_and_a_retry_works(
    failure, learner, learner_client, upstream_api
):
    reply, message = CONTENT_FAILURES[failure]
    upstream_api.next_assessment(json=payload("next_assessment"))
    upstream_api.view_assessment(**reply)
    upstream_api.view_assessment(json=payload("view_assessment"))

    response = learner_client.post("/me/start/")
    assert response.status_code == 302 and response.url == "/me/"
    html = assert_page_is_inert(learner_client.get("/me/"))
    assert message in html
    assert "Start the assessment" in html
    assert 'action="/me/start/"' in html
    assert attempt_of(learner).state == State.AVAILABLE

    start(learner_client)
    assert attempt_of(learner).state == State.IN_PROGRESS
    assert len(upstream_api.calls("/next-assessment")) == 1
    assert len(upstream_api.calls("/view-assessment/")) == 2
    page = learner_client.get(learner_client.get(f"/me/assessments/{ASSESSMENT_ID}/").url)
    assert "Step 1 of 2" in assert_page_is_inert(page)


@pytest.mark.django_db
@pytest.mark.parametrize(
    "reply, message",
    [
        ({"status": 503}, "could not be reached or did not answer in time"),
        ({"body": requests.exceptions.ReadTimeout()}, "could not be reached"),
        ({"status": 200, "body": "not json"}, "could not read"),
        ({"status": 401, "json": {"detail": "<b>bad key</b>"}}, "&lt;b&gt;bad key&lt;/b&gt;"),
    ],
)
def test_a_failed_offer_shows_a_message_and_creates_nothing(
    reply, message, learner, learner_client, upstream_api
):
    upstream_api.next_assessment(**reply)
    response = learner_client.post("/me/start/")
    assert response.url == "/me/"
    html = assert_page_is_inert(learner_client.get("/me/"))
    assert message in html
    assert "Start my assessment" in html
    assert not learner.attempts.exists()


@pytest.mark.django_db
def test_an_offer_without_an_assessment_says_there_is_nothing_to_take(
    learner, learner_client, upstream_api
):
    upstream_api.next_assessment(json={"status": "<b>all-done-ish</b>", "assessment_id": None})
    learner_client.post("/me/start/")
    html = assert_page_is_inert(learner_client.get("/me/"))
    assert "There is no assessment for you to take right now." in html
    assert not learner.attempts.exists()


SUBMIT_FAILURES = {
    "503": {"status": 503, "json": {"error": "maintenance"}},
    "500": {"status": 500, "body": "<h1>Internal Server Error</h1>"},
    "a timeout": {"body": requests.exceptions.ReadTimeout("read timed out")},
    "a dropped connection": {"body": requests.exceptions.ConnectionError("reset")},
    # A refusal that sending the same answers again may cure (a misconfigured key).
    "401": {"status": 401, "json": {"detail": "bad key"}},
}


@pytest.mark.django_db
@pytest.mark.parametrize("failure", SUBMIT_FAILURES)
def test_a_failed_submission_keeps_the_answers_and_offers_to_send_them_again(
    failure, learner, learner_client, upstream_api
):
    upstream_api.next_assessment(json=payload("next_assessment"))
    upstream_api.view_assessment(json=payload("view_assessment"))
    upstream_api.submit(**SUBMIT_FAILURES[failure])
    upstream_api.submit(json={"status": "ok"})
    upstream_api.results(status=404, json={"error": "no such result"})
    upstream_api.results(json=payload("results"))
    walk_to_check(learner_client)

    response = learner_client.post(f"/me/assessments/{ASSESSMENT_ID}/submit/")
    assert response.url == f"/me/assessments/{ASSESSMENT_ID}/results/"
    attempt = attempt_of(learner)
    assert attempt.state == State.SUBMIT_PENDING
    assert AttemptAnswer.objects.filter(attempt=attempt).count() == 4
    html = assert_page_is_inert(learner_client.get(response.url))
    assert "Your answers are saved" in html
    assert "Try sending them now" in html
    assert f'action="/me/assessments/{ASSESSMENT_ID}/resend/"' in html
    assert "Fetch the assessment again" not in html

    response = learner_client.post(f"/me/assessments/{ASSESSMENT_ID}/resend/")
    assert response.url == f"/me/assessments/{ASSESSMENT_ID}/results/"
    assert attempt_of(learner).state == State.COMPLETED
    first, second = upstream_api.submissions()
    assert first == second
    html = assert_page_is_inert(learner_client.get(response.url))
    assert "Amber / watch" in html


@pytest.mark.django_db
def test_resending_does_not_submit_twice_when_the_first_submission_arrived(
    learner, learner_client, upstream_api
):
    upstream_api.next_assessment(json=payload("next_assessment"))
    upstream_api.view_assessment(json=payload("view_assessment"))
    upstream_api.submit(body=requests.exceptions.ReadTimeout())
    upstream_api.results(json=payload("results"))
    walk_to_check(learner_client)
    learner_client.post(f"/me/assessments/{ASSESSMENT_ID}/submit/")
    assert attempt_of(learner).state == State.SUBMIT_PENDING

    learner_client.post(f"/me/assessments/{ASSESSMENT_ID}/resend/")
    assert attempt_of(learner).state == State.COMPLETED
    assert len(upstream_api.submissions()) == 1


@pytest.mark.django_db
def test_a_resend_that_fails_again_still_keeps_the_answers(learner, learner_client, upstream_api):
    upstream_api.next_assessment(json=payload("next_assessment"))
    upstream_api.view_assessment(json=payload("view_assessment"))
    upstream_api.submit(status=503)
    upstream_api.results(body=requests.exceptions.ConnectTimeout())
    walk_to_check(learner_client)
    learner_client.post(f"/me/assessments/{ASSESSMENT_ID}/submit/")

    response = learner_client.post(f"/me/assessments/{ASSESSMENT_ID}/resend/")
    attempt = attempt_of(learner)
    assert attempt.state == State.SUBMIT_PENDING
    assert attempt.answers.count() == 4
    html = assert_page_is_inert(learner_client.get(response.url))
    assert "Try sending them now" in html


def refetched_content() -> dict:
    """The same assessment fetched again: a new session, and new answer ids for one question."""
    content = copy.deepcopy(payload("view_assessment"))
    content["assessment_session"] = "551100"
    for question in content["questions"]:
        if question["id"] == "q-3":
            for answer in question["answers"]:
                answer["id"] = answer["id"].replace("a3-", "b3-")
    return content


@pytest.mark.django_db
def test_a_refused_submission_shows_the_reason_and_a_refetch_keeps_matching_answers(
    learner, learner_client, upstream_api
):
    upstream_api.next_assessment(json=payload("next_assessment"))
    upstream_api.view_assessment(json=payload("view_assessment"))
    upstream_api.view_assessment(json=refetched_content())
    upstream_api.submit(status=400, json={"error": "<script>alert(1)</script>session expired"})
    upstream_api.submit(json={"status": "ok"})
    upstream_api.results(json=payload("results"))
    chosen = walk_to_check(learner_client)

    response = learner_client.post(f"/me/assessments/{ASSESSMENT_ID}/submit/")
    assert attempt_of(learner).state == State.REJECTED
    html = assert_page_is_inert(learner_client.get(response.url))
    assert "did not accept your answers" in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;session expired" in html
    assert "Fetch the assessment again" in html
    assert f'action="/me/assessments/{ASSESSMENT_ID}/refresh/"' in html

    response = learner_client.post(f"/me/assessments/{ASSESSMENT_ID}/refresh/")
    assert response.url == f"/me/assessments/{ASSESSMENT_ID}/"
    attempt = attempt_of(learner)
    assert attempt.state == State.IN_PROGRESS
    assert attempt.session == "551100"
    kept = dict(attempt.answers.values_list("question_id", "answer_id"))
    assert set(kept) == {"7301", 'q2"><script>alert("id")</script>', "7304"}

    # The learner lands on the page with the question whose answers changed, the rest filled in.
    page_url = learner_client.get(response.url).url
    assert page_url == f"/me/assessments/{ASSESSMENT_ID}/page/2/"
    page = assert_page_is_inert(learner_client.get(page_url))
    assert page.count(" checked>") == 1
    assert "fetched the assessment again" in page
    response = learner_client.post(page_url, {"q3": "b3-1", "q4": chosen["q4"], "continue": ""})
    assert response.url == f"/me/assessments/{ASSESSMENT_ID}/check/"
    learner_client.post(f"/me/assessments/{ASSESSMENT_ID}/submit/")

    assert attempt_of(learner).state == State.COMPLETED
    first, second = upstream_api.submissions()
    assert second["session"] == 551100
    assert ("q-3", "b3-1") in {(r["question_id"], r["answer_id"]) for r in second["responses"]}
    kept_items = {(r["question_id"], r["answer_id"]) for r in first["responses"]}
    kept_items.discard(("q-3", "a3-1"))
    assert kept_items <= {(r["question_id"], r["answer_id"]) for r in second["responses"]}


@pytest.mark.django_db
def test_a_failed_refetch_keeps_the_answers_and_the_way_forward(
    learner, learner_client, upstream_api
):
    upstream_api.next_assessment(json=payload("next_assessment"))
    upstream_api.view_assessment(json=payload("view_assessment"))
    upstream_api.view_assessment(status=502)
    upstream_api.submit(status=422, json={"message": "session unknown"})
    walk_to_check(learner_client)
    learner_client.post(f"/me/assessments/{ASSESSMENT_ID}/submit/")

    response = learner_client.post(f"/me/assessments/{ASSESSMENT_ID}/refresh/")
    assert response.url == f"/me/assessments/{ASSESSMENT_ID}/results/"
    attempt = attempt_of(learner)
    assert attempt.state == State.REJECTED
    assert attempt.answers.count() == 4
    html = assert_page_is_inert(learner_client.get(response.url))
    assert "could not be reached or did not answer in time" in html
    assert "Fetch the assessment again" in html


@pytest.mark.django_db
@pytest.mark.parametrize(
    "reply",
    [
        {"status": 404, "json": {"detail": "not ready"}},
        {"status": 500},
        {"status": 200, "body": "<html>nope</html>"},
        {"status": 200, "json": {"LOAScore": "high", "focus_areas": []}},
        {"body": requests.exceptions.ReadTimeout()},
    ],
    ids=["404", "500", "not JSON", "wrong shape", "timeout"],
)
def test_results_that_are_not_there_yet_show_a_not_ready_page(
    reply, learner, learner_client, upstream_api
):
    upstream_api.next_assessment(json=payload("next_assessment"))
    upstream_api.view_assessment(json=payload("view_assessment"))
    upstream_api.submit(json={"status": "ok"})
    upstream_api.results(**reply)
    upstream_api.results(**reply)
    upstream_api.results(json=payload("results"))
    walk_to_check(learner_client)

    response = learner_client.post(f"/me/assessments/{ASSESSMENT_ID}/submit/")
    assert response.url == f"/me/assessments/{ASSESSMENT_ID}/results/"
    attempt = attempt_of(learner)
    assert attempt.state == State.SUBMITTED
    assert attempt.answers.count() == 4
    html = assert_page_is_inert(learner_client.get(response.url))
    assert "Your results are not ready yet" in html
    assert "Check for results" in html
    assert "Try sending them now" not in html

    # Reading the page never calls the upstream; "Check for results" (a POST) does.
    calls = len(upstream_api.calls("/results/"))
    assert_page_is_inert(learner_client.get(response.url))
    assert len(upstream_api.calls("/results/")) == calls
    html = assert_page_is_inert(learner_client.post(response.url, follow=True))
    assert "Your results are not ready yet" in html
    html = assert_page_is_inert(learner_client.post(response.url, follow=True))
    assert "Amber / watch" in html
    assert attempt_of(learner).state == State.COMPLETED
    assert len(upstream_api.submissions()) == 1


# Values out of the range the portal stores -----------------------------------------------------


def with_info(**info) -> dict:
    content = copy.deepcopy(payload("view_assessment"))
    content["assessment_info"].update(info)
    return content


def with_area(**area) -> dict:
    results = copy.deepcopy(payload("results"))
    results["focus_areas"][0].update(area)
    return results


OUT_OF_RANGE = {
    "a negative assessment id": ("next", lambda: {"status": "ok", "assessment_id": -5}),
    "an assessment id over 64 bits": ("next", lambda: {"status": "ok", "assessment_id": 2**64}),
    "a 150-character status": (
        "next",
        lambda: {**payload("next_assessment"), "status": "ready " * 25},
    ),
    "a 400-character title": ("view", lambda: with_info(Title="Study habits " * 31)),
    "a version of 12 digits": ("view", lambda: with_info(Version=123456789012.5)),
    "a score of 12 digits": ("results", lambda: {**payload("results"), "LOAScore": 123456789012.5}),
    "a 250-character risk level": (
        "results",
        lambda: {**payload("results"), "RiskLevel": "Amber / watch " * 18},
    ),
    "a 150-character needs_help": ("results", lambda: with_area(needs_help="Yes, " * 30)),
    "a 250-character focus area": ("results", lambda: with_area(search_filter_name="SLEEP " * 42)),
}


@pytest.mark.django_db
@pytest.mark.parametrize("case", OUT_OF_RANGE)
def test_an_out_of_range_value_from_the_upstream_never_breaks_a_page(
    case, learner, learner_client, staff, upstream_api
):
    # Django's test client raises the view's exception, so a 500 fails here with its traceback.
    # SQLite does not enforce max_length, so the long-text cases can only fail on PostgreSQL.
    where, make = OUT_OF_RANGE[case]
    offer = make() if where == "next" else payload("next_assessment")
    upstream_api.next_assessment(json=offer)
    assessment_id = offer["assessment_id"]
    upstream_api.view_assessment(
        assessment_id, json=make() if where == "view" else payload("view_assessment")
    )
    upstream_api.submit(json={"status": "ok"})
    upstream_api.results(assessment_id, json=make() if where == "results" else payload("results"))

    response = learner_client.post("/me/start/")
    assert response.status_code == 302
    assert_page_is_inert(learner_client.get("/me/"))
    attempt = learner.attempts.first()
    if attempt is not None and attempt.has_content:
        base = f"/me/assessments/{attempt.assessment_id}"
        answer_every_page(learner_client, assessment_id=attempt.assessment_id)
        response = learner_client.post(f"{base}/submit/")
        assert response.status_code == 302
        assert attempt.answers.count() == 4
        assert_page_is_inert(learner_client.get(f"{base}/results/"))
        assert_page_is_inert(learner_client.get("/me/"))

    staff_client = type(learner_client)()
    staff_client.force_login(staff)
    assert_page_is_inert(staff_client.get(f"/learners/{learner.pk}/"))
    if attempt is not None:
        url = f"/learners/{learner.pk}/attempts/{attempt.assessment_id}/"
        assert_page_is_inert(staff_client.get(url))


# Every vector of the corpus in every field ---------------------------------------------------
#
# tests/data/hostile_vectors.json (loaded by tests/hostile.py) goes through every upstream field:
# plain-text fields must show each vector as text, the HTML fields must store and show nothing
# active, and `Icon` must show nothing but a known icon or an https image. To stay fast, a
# field that is a list (questions, answers, focus areas) carries the whole corpus in one reply,
# one item per vector; the single-valued fields (title, level, offer status, target group, risk
# level, trait title and copy, and the three HTML fields) get an assessment for every three
# vectors, all taken by one learner in one run shared by the tests below. Each plain value
# carries a marker ("[q12]") naming its field and vector, so a failure says which one.


def arrived(value: str) -> str:
    """Return a value as the portal keeps it: the client drops NUL, which no database stores."""
    return value.replace("\x00", "")


def marked(tag: str, number: int, vector: str) -> str:
    return f"[{tag}{number}]{vector}"


def text_problem(html: str, value: str, where: str) -> str | None:
    """Say what is wrong unless the value is on the page as escaped text and never as markup."""
    if escape(value) not in html:
        return f"{where}: {value!r} is not shown as escaped text"
    if "<" in value and value in html:
        return f"{where}: {value!r} is on the page unescaped"
    return None


def assert_no_problems(problems: list[str]) -> None:
    shown = "\n".join(problems[:25])
    more = f"\n... and {len(problems) - 25} more" if len(problems) > 25 else ""
    assert not problems, f"{len(problems)} problem(s):\n{shown}{more}"


def inert_problem(response, where: str, images=frozenset()) -> str | None:
    try:
        assert_page_is_inert(response, images=images, external_link=any_link_the_policy_allows)
    except AssertionError as failure:
        return f"{where}: {failure}"
    return None


BENIGN_OFFER = {"status": "ready", "assessment_id": ASSESSMENT_ID, "target_group": "Year 10"}


def question_item(
    number: int, *, text: str = "", group: str = "Habits", copy: str = "", icon: str | None = None
) -> dict:
    """One question with one answer; ids Q<n> and A<n>, form field q<n+1> (its position)."""
    return {
        "id": f"Q{number}",
        "Question": text or f"Question {number}",
        "Group": group,
        "DisplayOrder": number + 1,
        "answers": [
            {
                "id": f"A{number}",
                "DisplayOrder": 1,
                "AnswerCopy": copy or f"Answer {number}",
                "Icon": icon,
            }
        ],
    }


def content_of(questions: list[dict], *, title="Study habits", level="LOA_PARTNER_LEVEL2") -> dict:
    return {
        "questions": questions,
        "assessment_session": 5150,
        "assessment_info": {
            "Title": title,
            "Level": level,
            "Preassess": False,
            "Version": 1,
            "id": ASSESSMENT_ID,
        },
    }


def results_of(**fields) -> dict:
    return {
        "LOAScore": 50,
        "RiskLevel": "Green",
        "TraitTitle": "The Steady One",
        "TraitCopy": "You keep going.",
        "TraitSigns": "<ul><li>Sleeps well</li></ul>",
        "TraitTips": "<p>Keep it up</p>",
        "ResultDescription": "<p>All fine.</p>",
        "focus_areas": [{"search_filter_name": "SLEEP", "needs_help": "Yes", "questions_count": 1}],
        **fields,
    }


def serve(upstream_api, content: dict, results: dict | None = None) -> None:
    upstream_api.next_assessment(json=BENIGN_OFFER)
    upstream_api.view_assessment(json=content)
    upstream_api.submit(json={"status": "ok"})
    upstream_api.results(json=results or results_of())


def flow_url(tail: str = "") -> str:
    return f"/me/assessments/{ASSESSMENT_ID}/{tail}"


def answer_all_and_submit(client, questions: int) -> None:
    choices = {f"q{number + 1}": f"A{number}" for number in range(questions)}
    response = client.post(flow_url("page/1/"), {**choices, "continue": ""})
    assert response.status_code == 302, response.status_code
    response = client.post(flow_url("submit/"))
    assert response.url == flow_url("results/"), response.url


# A list field's run returns (page name, response, values the page must show as text).
Pages = list[tuple[str, object, list[str]]]


def question_text_pages(client, staff_client, learner, upstream_api) -> Pages:
    values = [marked("q", n, vector) for n, vector in enumerate(HOSTILE)]
    serve(upstream_api, content_of([question_item(n, text=v) for n, v in enumerate(values)]))
    start(client)
    shown = [arrived(value) for value in values]
    return [
        ("question page", client.get(flow_url("page/1/")), shown),
        # Every question unanswered: the error summary repeats each question's text.
        ("question page with errors", client.post(flow_url("page/1/"), {"continue": ""}), shown),
        ("check page", client.get(flow_url("check/")), shown),
        ("check page listing what is missing", client.post(flow_url("submit/")), shown),
    ]


def group_pages(client, staff_client, learner, upstream_api) -> Pages:
    values = [marked("g", n, vector) for n, vector in enumerate(HOSTILE)]
    serve(upstream_api, content_of([question_item(n, group=v) for n, v in enumerate(values)]))
    start(client)
    # A page's heading is its Group without surrounding spaces; one page per Group.
    shown = [arrived(value).strip() for value in values]
    pages: Pages = [
        (f"question page {n + 1}", client.get(flow_url(f"page/{n + 1}/")), [group])
        for n, group in enumerate(shown)
    ]
    pages.append(("check page", client.get(flow_url("check/")), shown))
    return pages


def answer_copy_pages(client, staff_client, learner, upstream_api) -> Pages:
    values = [marked("a", n, vector) for n, vector in enumerate(HOSTILE)]
    serve(upstream_api, content_of([question_item(n, copy=v) for n, v in enumerate(values)]))
    start(client)
    shown = [arrived(value) for value in values]
    pages: Pages = [("question page", client.get(flow_url("page/1/")), shown)]
    choices = {f"q{n + 1}": f"A{n}" for n in range(len(values))}
    client.post(flow_url("page/1/"), {**choices, "continue": ""})
    pages.append(("check page", client.get(flow_url("check/")), shown))
    return pages


def focus_area_pages(field: str):
    def run(client, staff_client, learner, upstream_api) -> Pages:
        values = [marked("f", n, vector) for n, vector in enumerate(HOSTILE)]
        if field == "search_filter_name":
            areas = [
                {"search_filter_name": v, "needs_help": "Yes", "questions_count": 1} for v in values
            ]
        else:
            areas = [
                {"search_filter_name": f"AREA {n}", "needs_help": v, "questions_count": 1}
                for n, v in enumerate(values)
            ]
        serve(upstream_api, content_of([question_item(0)]), results_of(focus_areas=areas))
        start(client)
        answer_all_and_submit(client, 1)
        model_field = "name" if field == "search_filter_name" else "needs_help"
        shown = [fit(FocusArea, model_field, arrived(value)) for value in values]
        # A learner reads the areas that could help them, in the portal's words for their age
        # (an unknown name in sentence case), not the needs_help values.
        learner_reads = (
            [focus_area_words(name, primary=False) for name in shown]
            if field == "search_filter_name"
            else []
        )
        pages: Pages = [
            ("results page", client.get(flow_url("results/")), learner_reads),
            (
                "staff attempt page",
                staff_client.get(f"/learners/{learner.pk}/attempts/{ASSESSMENT_ID}/"),
                shown,
            ),
        ]
        if field == "search_filter_name":  # the learner's page lists the areas needing help
            pages.append(
                ("staff learner page", staff_client.get(f"/learners/{learner.pk}/"), shown)
            )
        return pages

    return run


PLAIN_LIST_FIELDS = {
    "Question": question_text_pages,
    "Group": group_pages,
    "AnswerCopy": answer_copy_pages,
    "focus area search_filter_name": focus_area_pages("search_filter_name"),
    "focus area needs_help": focus_area_pages("needs_help"),
}


@pytest.mark.django_db
@pytest.mark.parametrize("field", PLAIN_LIST_FIELDS)
def test_every_vector_in_a_plain_text_list_field_is_shown_as_text(
    field, learner, client, staff, upstream_api
):
    client.force_login(learner.user)
    staff_client = type(client)()
    staff_client.force_login(staff)
    pages = PLAIN_LIST_FIELDS[field](client, staff_client, learner, upstream_api)

    problems = []
    for name, response, values in pages:
        problem = inert_problem(response, name)
        if problem:
            problems.append(problem)
            continue
        html = response.content.decode()
        problems += filter(None, (text_problem(html, value, name) for value in values))
    assert_no_problems(problems)


# Icons: only a known icon name or an https URL shows anything.

LABEL = re.compile(r'<label for="[^"]*">(.*?)\[icon(\d+)\]</label>', re.S)


def expected_icon(icon: str) -> str | None:
    """What a label may show for an Icon: a known name's symbol, or nothing."""
    value = arrived(icon).strip()
    return KNOWN_ICONS.get(value.lower())


@pytest.mark.django_db
def test_every_vector_as_an_icon_shows_only_a_known_icon_and_never_an_image(
    learner_client, upstream_api
):
    icons = [*HOSTILE, "  moon  ", "Sun", "https://cdn.example/icons/ok.png"]
    questions = [question_item(n, copy=f"[icon{n}]", icon=icon) for n, icon in enumerate(icons)]
    serve(upstream_api, content_of(questions))
    start(learner_client)
    response = learner_client.get(flow_url("page/1/"))
    assert inert_problem(response, "question page") is None

    labels = {int(number): inner for inner, number in LABEL.findall(response.content.decode())}
    assert sorted(labels) == list(range(len(icons)))
    problems = []
    for number, icon in enumerate(icons):
        tags = read_page(labels[number]).tags
        expected = expected_icon(icon)
        if expected is None:
            if tags:
                problems.append(f"Icon {icon!r} shows {labels[number]!r}")
        elif f'aria-hidden="true">{expected}</span>' not in labels[number]:
            problems.append(f"known icon {icon!r} shows {labels[number]!r}")
    assert_no_problems(problems)
    # Known names do show; a clean https address does not (no request may leave the origin).
    html = response.content.decode()
    assert html.count('class="answer-icon"') == sum(1 for i in icons if expected_icon(i))
    assert html.count('class="answer-icon"') >= 2
    assert "cdn.example" not in html


# Single-valued fields: one learner takes an assessment for every three vectors, in one run
# shared by the tests below. The three HTML fields of an assessment's results take one vector
# each, so every vector is stored through the portal's results service on its own. The plain
# fields carry the same three vectors one after the other (escaping works character by
# character, so three in a row test what each tests alone); a field the portal keeps to a length
# (status, target group, level, risk level) is cut there, so their order turns from field to
# field, and each vector comes first in one of them.

HTML_FIELDS = ("TraitSigns", "TraitTips", "ResultDescription")
PER_ASSESSMENT = len(HTML_FIELDS)
ASSESSMENTS = range((len(HOSTILE) + PER_ASSESSMENT - 1) // PER_ASSESSMENT)
FIRST_ID = 70000
SINGLE_FIELDS = {
    # field: (marker, turn of the three vectors, (model, field) keeping it to a length)
    "status": ("s", 0, (AssessmentAttempt, "offer_status")),
    "target_group": ("t", 1, (AssessmentAttempt, "target_group")),
    "Level": ("L", 2, (AssessmentAttempt, "level")),
    "RiskLevel": ("R", 1, (AssessmentResult, "risk_level")),
    "Title": ("T", 0, None),
    "TraitTitle": ("TT", 0, None),
    "TraitCopy": ("TC", 0, None),
}
STORED_HTML = {
    "TraitSigns": "trait_signs",
    "TraitTips": "trait_tips",
    "ResultDescription": "result_description",
}


def vectors_of(assessment: int) -> list[int]:
    """Return the numbers of the vectors an assessment of the run carries."""
    first = assessment * PER_ASSESSMENT
    return list(range(first, min(first + PER_ASSESSMENT, len(HOSTILE))))


def single_value(field: str, assessment: int) -> str:
    marker, turn, _ = SINGLE_FIELDS[field]
    numbers = vectors_of(assessment)
    turn %= len(numbers)
    return "".join(marked(marker, n, HOSTILE[n]) for n in numbers[turn:] + numbers[:turn])


def single_value_shown(field: str, assessment: int) -> str:
    value = arrived(single_value(field, assessment))
    kept_in = SINGLE_FIELDS[field][2]
    return fit(*kept_in, value) if kept_in else value


def html_vector(field: str, assessment: int) -> int | None:
    numbers = vectors_of(assessment)
    index = HTML_FIELDS.index(field)
    return numbers[index] if index < len(numbers) else None


@dataclass
class SingleValueRun:
    """What the run left: pages and stored values, by assessment of the run."""

    results_pages: list[str] = field(default_factory=list)  # the learner's
    staff_pages: list[str] = field(default_factory=list)  # staff's page of the assessment
    shared_pages: dict[str, str] = field(default_factory=dict)  # pages listing every one
    stored: list[dict[str, str]] = field(default_factory=list)  # HTML fields, raw and clean
    inert_problems: list[str] = field(default_factory=list)


def _single_value_callbacks(mock: responses.RequestsMock, base_url: str) -> None:
    offers = iter(ASSESSMENTS)

    def number_in(request) -> int:
        return int(request.url.rsplit("/", 1)[1]) - FIRST_ID

    def offer(request):
        number = next(offers)
        body = {
            "status": single_value("status", number),
            "assessment_id": FIRST_ID + number,
            "target_group": single_value("target_group", number),
        }
        return 200, {}, json.dumps(body)

    def content(request):
        number = number_in(request)
        title, level = single_value("Title", number), single_value("Level", number)
        return 200, {}, json.dumps(content_of([question_item(0)], title=title, level=level))

    def results(request):
        number = number_in(request)
        fields = {name: single_value(name, number) for name in ("RiskLevel", "TraitTitle")}
        fields["TraitCopy"] = single_value("TraitCopy", number)
        for name in HTML_FIELDS:
            vector = html_vector(name, number)
            fields[name] = "" if vector is None else HOSTILE[vector]
        return 200, {}, json.dumps(results_of(**fields))

    prefix = re.escape(base_url) + "/assessments/"
    mock.add_callback(responses.GET, base_url + "/assessments/next-assessment", offer)
    mock.add_callback(responses.GET, re.compile(prefix + r"view-assessment/\d+"), content)
    mock.add_callback(responses.GET, re.compile(prefix + r"results/\d+"), results)


def _take_every_assessment(run: SingleValueRun, base_url: str) -> None:
    from django.contrib.auth.models import User
    from django.test import Client

    from tests.factories import make_learner, make_staff

    learner = make_learner("vera.vectors", "u-vera")
    staff = make_staff("stan.single", password=None)
    clients = {"learner": Client(), "staff": Client(), "admin": Client()}
    clients["learner"].force_login(learner.user)
    clients["staff"].force_login(staff)
    clients["admin"].force_login(User.objects.create_superuser("ada.admin"))

    def read(who: str, name: str, url: str, method: str = "get") -> str:
        response = getattr(clients[who], method)(url)
        assert response.status_code == 200, (name, response.status_code)
        if who != "admin":
            run.inert_problems.append(inert_problem(response, name))
        return response.content.decode()

    with responses.RequestsMock(assert_all_requests_are_fired=False) as mock:
        _single_value_callbacks(mock, base_url)
        for number in ASSESSMENTS:
            assessment_id = FIRST_ID + number
            response = clients["learner"].post("/me/start/")
            assert response.url == f"/me/assessments/{assessment_id}/", response.url
            # Answering is not what this run is about: mark the answers sent, then ask for the
            # results with the learner's "Check for results".
            AssessmentAttempt.objects.filter(learner=learner, assessment_id=assessment_id).update(
                state=State.SUBMITTED
            )
            url = f"/me/assessments/{assessment_id}/results/"
            clients["learner"].post(url)
            run.results_pages.append(read("learner", f"results page {number}", url))
            url = f"/learners/{learner.pk}/attempts/{assessment_id}/"
            run.staff_pages.append(read("staff", f"staff attempt page {number}", url))
    results = AssessmentResult.objects.filter(attempt__learner=learner)
    for result in results.order_by("attempt__assessment_id"):
        run.stored.append(
            {name: getattr(result, f"{column}_html") for name, column in STORED_HTML.items()}
            | {
                f"{name} raw": getattr(result, f"{column}_raw")
                for name, column in STORED_HTML.items()
            }
        )
    run.shared_pages = {
        "my assessments": read("learner", "my assessments", "/me/"),
        "staff learner page": read("staff", "staff learner page", f"/learners/{learner.pk}/"),
        "admin attempts": read("admin", "", "/admin/assessments/assessmentattempt/"),
        "admin results": read("admin", "", "/admin/assessments/assessmentresult/"),
    }


@pytest.fixture(scope="module")
def single_value_run(django_db_setup, django_db_blocker) -> SingleValueRun:
    """Run once for the module, in a transaction rolled back at the end (only text is kept).

    Every test using it is marked django_db: that is also what has pytest-django set up the
    test database, which the run must not go without.
    """
    from django.conf import settings
    from django.db import transaction
    from django.test import override_settings

    quick = override_settings(
        PASSWORD_HASHERS=["django.contrib.auth.hashers.MD5PasswordHasher"],
        PARTNER_API_RETRY_MAX_ATTEMPTS=1,
        PARTNER_API_BREAKER_THRESHOLD=0,
        TASKS={"default": {"BACKEND": "django_tasks.backends.immediate.ImmediateBackend"}},
    )
    run = SingleValueRun()
    with django_db_blocker.unblock(), quick, transaction.atomic():
        base_url = settings.PARTNER_API_BASE_URL.strip().rstrip("/")
        if not base_url.endswith(API_PREFIX):
            base_url += API_PREFIX
        let_learners_read_every_field()
        # Assessments start only once a DSL can be emailed (tests/conftest.py makes one for
        # every other test; this run sets up its own database).
        make_dsl_on_duty()
        _take_every_assessment(run, base_url)
        transaction.set_rollback(True)
    run.inert_problems = [problem for problem in run.inert_problems if problem]
    return run


@pytest.mark.django_db
def test_every_page_of_the_single_valued_run_is_inert(single_value_run):
    assert len(single_value_run.results_pages) == len(ASSESSMENTS)
    assert_no_problems(single_value_run.inert_problems)


# Where each single-valued field shows: on each assessment's own pages, or on a page listing
# every assessment of the run (the admin's list filters list every distinct value).
SINGLE_FIELD_PAGES = {
    "status": ["staff attempt page"],
    "target_group": ["staff attempt page", "admin attempts"],
    "Level": ["admin attempts"],
    "RiskLevel": ["results page", "staff attempt page", "staff learner page", "admin results"],
    "Title": ["results page", "staff attempt page", "my assessments", "staff learner page"],
    "TraitTitle": ["results page", "staff attempt page"],
    "TraitCopy": ["results page", "staff attempt page"],
}


@pytest.mark.django_db
@pytest.mark.parametrize("field", SINGLE_FIELDS)
def test_every_vector_in_a_single_valued_plain_field_is_shown_as_text(field, single_value_run):
    run = single_value_run
    problems = []
    for page_name in SINGLE_FIELD_PAGES[field]:
        for number in ASSESSMENTS:
            if page_name == "results page":
                html = run.results_pages[number]
            elif page_name == "staff attempt page":
                html = run.staff_pages[number]
            else:
                html = run.shared_pages[page_name]
            where = f"{page_name}, vectors {vectors_of(number)}"
            problem = text_problem(html, single_value_shown(field, number), where)
            if problem:
                problems.append(problem)
    assert_no_problems(problems)


@pytest.mark.django_db
@pytest.mark.parametrize("field", HTML_FIELDS)
def test_every_vector_in_an_html_field_is_stored_and_shown_without_active_content(
    field, single_value_run
):
    run = single_value_run
    problems = []
    for number in ASSESSMENTS:
        vector = html_vector(field, number)
        if vector is None:
            continue
        stored = run.stored[number]
        where = f"{field} vector {vector} {HOSTILE[vector]!r}"
        if stored[f"{field} raw"] != arrived(HOSTILE[vector]):
            problems.append(f"{where}: the raw value is not kept as it came")
        clean = stored[field]
        try:
            assert_no_active_content(clean)
        except AssertionError as failure:
            problems.append(f"{where}: stored {clean!r}: {failure}")
        for page in (run.results_pages[number], run.staff_pages[number]):
            if clean and f'<div class="upstream-html">{clean}</div>' not in page:
                problems.append(f"{where}: the page does not show the stored {clean!r}")
    assert_no_problems(problems)


ADMIN_OWN_SCRIPT = re.compile(r'<script src="/static/admin/[^"<>]+"(?: defer)?></script>')
# The admin's own inline SVG: the theme toggle's icons and the sprite they use.
ADMIN_OWN_SVG = {
    "theme-icon-when-auto",
    "theme-icon-when-dark",
    "theme-icon-when-light",
    "base-svgs",
}
ADMIN_RAW_FORBIDDEN = re.compile(
    r"<\s*/?\s*(" + "|".join(sorted(FORBIDDEN_TAGS - {"svg"})) + r")\b", re.I
)


def admin_page_problem(html: str, where: str) -> str | None:
    """Say what is active on an admin page beyond the admin's own scripts and icons, if anything."""
    rest = ADMIN_OWN_SCRIPT.sub("", html)
    raw = ADMIN_RAW_FORBIDDEN.search(rest)
    if raw:
        return f"{where}: {raw[0]}"
    for tag, attributes, pairs in read_page(rest).tags:
        if tag == "svg" and attributes.get("class") in ADMIN_OWN_SVG:
            continue
        if tag in FORBIDDEN_TAGS or len(pairs) != len(attributes):
            return f"{where}: <{tag} {attributes}>"
        if tag == "meta" and "http-equiv" in attributes:
            return f"{where}: <meta {attributes}>"
        if tag == "use" and not (attributes.get("xlink:href") or "").startswith("#"):
            return f"{where}: <use {attributes}>"
        for name, value in attributes.items():
            compact = re.sub(r"[\s\x00-\x1f]", "", value or "").lower()
            if name.startswith("on") or name in ("srcdoc", "formaction"):
                return f"{where}: <{tag} {name}={value!r}>"
            if name in URL_ATTRIBUTES and compact.startswith(("javascript:", "vbscript:", "data:")):
                return f"{where}: <{tag} {name}={value!r}>"
    return None


@pytest.mark.django_db
def test_the_admin_lists_every_single_valued_vector_inertly(single_value_run):
    problems = [
        admin_page_problem(single_value_run.shared_pages[name], name)
        for name in ("admin attempts", "admin results")
    ]
    assert_no_problems([problem for problem in problems if problem])
