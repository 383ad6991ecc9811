"""What the tests of a learner's pages in words for their age share (issue 31, part 5).

The states a learner's pages can be in each arrange the learner's records, then ask; the test
files check each state's page for every level with `check_worded_for_age`.
"""

import re
from dataclasses import dataclass
from html.parser import HTMLParser

from django.test import Client
from django.utils import timezone

from assessments.models import AssessmentAttempt
from learners.models import Learner, Level
from schools.models import PartnerSettings, School
from tests.factories import make_attempt, make_dsl_on_duty, make_result

State = AssessmentAttempt.State

SCHOOL = "Hazel Grove School"
LEVELS = (Level.PRIMARY, Level.SECONDARY, Level.FURTHER_EDUCATION)
# Words a primary pupil should never read (case-insensitive), and the name the staff's pages carry.
ADULT_WORDS = (
    "assessment service",
    "upstream",
    "portal",
    "session",
    "submission",
    "submit",
    "LOA",
    "risk level",
    "deliver",
    "error",
    "Partner portal",
)
ATTEMPT = 41
ME = "/me/"
RESULTS = f"/me/assessments/{ATTEMPT}/results/"
CHECK = f"/me/assessments/{ATTEMPT}/check/"


class _Text(HTMLParser):
    """Collect what a reader sees: the text outside scripts and styles, and the title."""

    def __init__(self) -> None:
        super().__init__()
        self.text: list[str] = []
        self.title: list[str] = []
        self.header: list[str] = []
        self._skip = 0
        self._in_title = False
        self._in_header = 0

    def handle_starttag(self, tag, attrs):
        if tag in ("script", "style", "template"):
            self._skip += 1
        self._in_title = self._in_title or tag == "title"
        if tag == "header" or self._in_header:
            self._in_header += 1

    def handle_endtag(self, tag):
        if tag in ("script", "style", "template"):
            self._skip -= 1
        if tag == "title":
            self._in_title = False
        if self._in_header:
            self._in_header -= 1

    def handle_data(self, data):
        if self._skip:
            return
        (self.title if self._in_title else self.text).append(data)
        if self._in_header:
            self.header.append(data)


def visible(html: str) -> tuple[str, str, str]:
    """Return a page's visible text, its title and its header's text, spaces tidied."""
    parser = _Text()
    parser.feed(html)
    tidy = lambda parts: " ".join(" ".join(parts).split())  # noqa: E731
    return tidy(parser.text), tidy(parser.title), tidy(parser.header)


def adult_words_in(text: str) -> list[str]:
    """Return the adult words in a text: from the start of a word, any case ("LOA" as itself)."""
    found = []
    for word in ADULT_WORDS:
        flags = 0 if word.isupper() else re.IGNORECASE
        if re.search(
            rf"(?<!\w){re.escape(word)}" + (r"(?!\w)" if word.isupper() else ""), text, flags
        ):
            found.append(word)
    return found


@dataclass
class Seen:
    status: int
    html: str


# The states a learner's pages can be in: each arranges the learner's records, then asks.
def ask(client: Client, method: str, path: str, **kwargs) -> Seen:
    response = getattr(client, method)(path, follow=method == "post", **kwargs)
    return Seen(response.status_code, response.content.decode())


def attempt(learner: Learner, state: str, **fields) -> AssessmentAttempt:
    made = make_attempt(learner, assessment_id=ATTEMPT, state=state)
    if fields:
        AssessmentAttempt.objects.filter(pk=made.pk).update(**fields)
    return made


def with_result(learner: Learner) -> None:
    made = attempt(learner, State.SUBMITTED, completed_at=timezone.now())
    make_result(made)


# Drawn without the header (they may not ask the database): only their title names the school.
NO_HEADER = {"bad_request", "server_error", "database_away"}
NO_SCHOOL_NAME = {"database_away"}  # the school's name is in the database that failed
# The pages that tell of something gone wrong: a primary pupil reads a step they can take.
FAULTS = {
    "forbidden",
    "outage_on_start",
    "refusal_on_start",
    "results_refresh_failed",
    "bad_request",
    "server_error",
    "database_away",
}


def make_pupil(learner: Learner, level: str) -> Learner:
    """Put the learner at this level, at a school with its own name and a DSL on duty."""
    make_dsl_on_duty()
    School.objects.filter(pk=learner.school_id).update(name=SCHOOL)
    PartnerSettings.of(learner.school_id)
    Learner.objects.filter(pk=learner.pk).update(level=level)
    return Learner.objects.get(pk=learner.pk)


def check_worded_for_age(name: str, seen: Seen, marker: str, status: int, level: str) -> None:
    """Check a state's page: its status and marker, the school named, words for the age."""
    assert seen.status == status, seen.html[:3000]
    assert marker in seen.html, seen.html[:3000]
    text, title, header = visible(seen.html)
    if name not in NO_HEADER:
        assert SCHOOL in header and "Partner portal" not in header, header
        assert title.endswith(f"– {SCHOOL}"), title
    elif name not in NO_SCHOOL_NAME:
        assert title.endswith(f"– {SCHOOL}"), title
    if level == Level.PRIMARY:
        assert adult_words_in(text) == [], text
        assert adult_words_in(title) == [], title
        assert "tell your teacher" in text.lower() or name not in FAULTS, text
    else:
        assert "upstream" not in text.lower() and "Partner portal" not in title
