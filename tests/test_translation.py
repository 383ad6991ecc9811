"""Ready for other languages: every string a person reads goes through Django's translation.

The portal is rendered in a pseudo-language whose "translation" of each message is the message
with its vowels accented, wrapped in ⟪ ⟫. Any visible word left outside the brackets was never
translated, unless it is data (a name, a username, upstream content), which is read from the
database. The pages are reached by following links, as each kind of visitor, plus the states a
link does not reach (form errors).
"""

import gettext as gettext_module
import re
from collections.abc import Iterator
from datetime import date
from html.parser import HTMLParser
from urllib.parse import urljoin, urlsplit

import pytest
from django.apps import apps
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import models
from django.test import Client
from django.utils import timezone, translation
from django.utils.translation import trans_real
from django_tasks_db.models import DBTaskResult

from accounts.models import StaffRole
from assessments.models import AssessmentAttempt
from imports.models import ImportJob
from imports.services import import_job_confirm, import_job_create_from_csv
from learners.registration import TAKEN_UPSTREAM
from partner_api import get_client
from partner_api.models import UpstreamFailure
from privacy.holds import records_hold_place
from schools.context import working_in
from schools.models import PartnerSettings, School
from tests.factories import (
    GOOD_PASSWORD,
    HEADER,
    cohort_learner,
    completed,
    good_rows,
    make_learner,
    make_staff,
    mid_way,
    upload_file,
)
from tests.journeys import answer_pages, attempt_url, ready_to_send, register_pupil

PSEUDO = "en-xa"
OPEN, CLOSE = "⟪", "⟫"
ACCENTS = str.maketrans("aeiouyAEIOUYcnCN", "áéíóúýÁÉÍÓÚÝçñÇÑ")
# Parts of a message a translator must keep: placeholders, markup and entities.
KEPT = re.compile(r"(%\(\w+\)[sdif]|%[sdif%]|\{\w*\}|<[^>]*>|&#?\w+;)")
CONTEXT_SEPARATOR = "\x04"


def pseudo(message: str) -> str:
    """The pseudo-language's translation: vowels accented, placeholders kept, bracketed."""
    message = message.split(CONTEXT_SEPARATOR, 1)[-1]
    parts = KEPT.split(message)
    return OPEN + "".join(p if KEPT.fullmatch(p) else p.translate(ACCENTS) for p in parts) + CLOSE


class PseudoTranslation(gettext_module.NullTranslations):
    """A catalogue that 'translates' every message, Django's own included."""

    def gettext(self, message: str) -> str:
        return pseudo(message)

    def ngettext(self, singular: str, plural: str, n: int) -> str:
        return pseudo(singular if n == 1 else plural)

    def to_language(self) -> str:
        return PSEUDO


@pytest.fixture
def in_pseudo_language(settings):
    """Serve every request, and run the test, in the pseudo-language."""
    settings.LANGUAGE_CODE = PSEUDO
    settings.LANGUAGES = [(PSEUDO, "Pseudo")]
    trans_real._translations[PSEUDO] = PseudoTranslation()
    with translation.override(PSEUDO):
        yield
    trans_real._translations.pop(PSEUDO, None)


def test_the_pseudo_language_is_what_pages_are_served_in(in_pseudo_language, client, db):
    page = client.get("/accounts/login/").content.decode()
    assert f'lang="{PSEUDO}"' in page
    assert OPEN in page


# Reading a page as a person does ----------------------------------------------------------------

# Attributes a person reads or hears.
READ_ATTRIBUTES = {"alt", "title", "aria-label", "placeholder", "aria-description"}
BUTTON_TYPES = {"submit", "button", "reset"}
# Not words to translate: scripts and styles, and <code> (field names, file names, identifiers).
UNSEEN = {"script", "style", "code"}


class ReadableText(HTMLParser):
    """Collect the text a person sees or hears on a page, and the page's links."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.texts: list[str] = []  # attribute texts, one each
        self.flow: list[str] = []  # the page's text in order (a message may span markup)
        self.links: list[str] = []
        self._unseen = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {name: value or "" for name, value in attrs}
        if tag in UNSEEN:
            self._unseen += 1
        if tag == "a" and values.get("href"):
            self.links.append(values["href"])
        for name, value in values.items():
            button_text = tag == "input" and name == "value" and values.get("type") in BUTTON_TYPES
            spoken = name in READ_ATTRIBUTES or button_text
            # Strings a script shows (data-* attributes) are sentences; ids and URLs are not.
            shown_by_script = name.startswith("data-") and " " in value.strip()
            if spoken or shown_by_script:
                self.texts.append(value)

    def handle_endtag(self, tag: str) -> None:
        if tag in UNSEEN and self._unseen:
            self._unseen -= 1

    def handle_data(self, data: str) -> None:
        if not self._unseen and data.strip():
            self.flow.append(data)

    def readable(self) -> list[str]:
        """Each attribute text, and the page's text as one piece."""
        return [*self.texts, "\n".join(self.flow)]


BRACKETED = re.compile(f"{OPEN}[^{OPEN}{CLOSE}]*{CLOSE}")
WORD = re.compile(r"[A-Za-z]{2,}")


def outside_messages(text: str) -> str:
    """What is left of a text once every translated message (nested ones too) is taken out."""
    while BRACKETED.search(text):
        text = BRACKETED.sub(" ", text)
    return text


def data_words() -> set[str]:
    """Every word stored in the database: names, usernames, upstream content, ids."""
    words: set[str] = set()
    for model in apps.get_models():
        text_fields = [
            f.attname
            for f in model._meta.concrete_fields
            if isinstance(f, models.CharField | models.TextField | models.JSONField)
        ]
        if not text_fields:
            continue
        for row in model.objects.values_list(*text_fields):
            for value in row:
                if value:
                    words.update(WORD.findall(str(value)))
    return words


# Going through the portal -----------------------------------------------------------------------

SKIPPED_PATHS = ("/admin/", "/static/", "/accounts/logout/")
NOT_PAGES = (".csv", ".json")
MOST_PAGES = 120


def same_site_links(page_url: str, links: list[str]) -> Iterator[str]:
    for href in links:
        url = urljoin(page_url, href)
        parts = urlsplit(url)
        if parts.scheme or parts.netloc or not parts.path.startswith("/"):
            continue
        if parts.path.startswith(SKIPPED_PATHS) or parts.path.endswith(NOT_PAGES):
            continue
        yield parts.path + (f"?{parts.query}" if parts.query else "")


def read(response) -> ReadableText:
    reader = ReadableText()
    reader.feed(response.content.decode())
    return reader


def crawl(client: Client, start: str) -> dict[str, ReadableText]:
    """Every page reachable by links from `start`, read (query strings count as pages)."""
    seen: dict[str, ReadableText] = {}
    queue = [start]
    while queue and len(seen) < MOST_PAGES:
        url = queue.pop(0)
        if url in seen:
            continue
        response = client.get(url, follow=True)
        if "text/html" not in response.get("Content-Type", ""):
            continue
        seen[url] = read(response)
        queue.extend(u for u in same_site_links(url, seen[url].links) if u not in seen)
    return seen


def problems(pages: dict[str, ReadableText], known: set[str]) -> list[str]:
    """Each untranslated text once, with the first page it was seen on."""
    found: dict[str, str] = {}
    for url, reader in pages.items():
        for text in reader.readable():
            for line in outside_messages(text).splitlines():
                words = [w for w in WORD.findall(line) if w not in known]
                line = " ".join(line.split())[:160]
                if words and line not in found:
                    found[line] = f"{url}: {line!r} ({', '.join(words)})"
    return sorted(found.values())


@pytest.fixture
def cohort(upstream, staff, client):
    """A learner with results, one part-way through, one not started, and an import preview."""
    finished = register_pupil(staff, "pia.pupil")
    attempt = ready_to_send(client, finished)
    client.post(attempt_url(attempt, "submit/"))
    halfway = register_pupil(staff, "hal.halfway")
    client.force_login(halfway.user)
    client.post("/me/start/")
    answer_pages(client, AssessmentAttempt.objects.get(learner=halfway), upto=1)
    register_pupil(staff, "nell.new")
    client.force_login(staff)
    bad_rows = (
        "username,password,dob,email,first_name,last_name,level\n"
        "ok.row,Sturdy-Lamp-Garden-7,2011-04-05,,Oka,Row,LOA_PARTNER_LEVEL1\n"
        "pia.pupil,short,2090-01-01,not-an-email,,,LEVEL9\n"
    )
    client.post(
        "/learners/import/",
        {"file": SimpleUploadedFile("cohort.csv", bad_rows.encode(), "text/csv")},
    )
    client.logout()
    return {"finished": finished, "halfway": halfway}


@pytest.mark.django_db
def test_every_page_a_visitor_reaches_is_translated(in_pseudo_language, cohort, staff, superuser):
    pages: dict[str, ReadableText] = {}
    anonymous = Client()
    pages.update(crawl(anonymous, "/accounts/login/"))
    for user in (staff, superuser):
        visitor = Client()
        visitor.force_login(user)
        pages.update(crawl(visitor, "/"))
        for job in ImportJob.objects.all():
            pages.update(crawl(visitor, f"/learners/import/{job.pk}/"))
    for learner in cohort.values():
        visitor = Client()
        visitor.force_login(learner.user)
        starts = ["/"] + [
            attempt_url(attempt, tail)
            for attempt in AssessmentAttempt.objects.filter(learner=learner)
            for tail in ("page/1/", "page/2/", "check/")
        ]
        for start in starts:
            found = crawl(visitor, start)
            pages.update({f"{learner.username} {u}": r for u, r in found.items()})

    assert len(pages) > 20, sorted(pages)
    found = problems(pages, data_words())
    assert not found, "Text that never went through translation:\n" + "\n".join(found)


@pytest.mark.django_db
def test_the_trust_dashboard_and_the_withholding_setting_are_translated(
    in_pseudo_language, settings
):
    settings.DASHBOARD_MIN_GROUP_SIZE = 3
    beech = School.objects.create(code="BEECH", name="Beech Academy")
    rowan = School.objects.create(code="ROWAN", name="Rowan Primary")
    for school, count in ((beech, 3), (rowan, 1)):
        with working_in(school.pk):
            for _ in range(count):
                completed(cohort_learner(), "2026-09-10", areas={"SLEEP": "yes"})
    PartnerSettings.objects.filter(pk=PartnerSettings.of(School.default().pk).pk).update(
        withhold_from_trust=True
    )
    pages: dict[str, ReadableText] = {}
    for role, paths in (
        (StaffRole.TRUST_VIEWER, ["/"]),
        (StaffRole.TRUST_ADMIN, ["/trust/", "/dashboard/"]),
    ):
        visitor = Client()
        visitor.force_login(make_staff(f"trust.{role}", role=role))
        for path in paths:
            pages[f"{role} {path}"] = read(visitor.get(path, follow=True))
    admin = Client()
    admin.force_login(make_staff("ada.admin", role=StaffRole.ADMIN, school=rowan))
    response = admin.get("/settings/")
    assert 'name="withhold_from_trust"' in response.content.decode()
    pages["admin /settings/"] = read(response)

    assert any("Wíthhéld" in text for text in pages["trust_viewer /"].readable())
    found = problems(pages, data_words())
    assert not found, "Text that never went through translation:\n" + "\n".join(found)


@pytest.mark.django_db
def test_form_errors_and_error_pages_are_translated(in_pseudo_language, cohort, staff):
    visitor = Client()
    pages = {"sign-in error": read(visitor.post("/accounts/login/", {"username": "x"}))}
    pages["not found"] = read(visitor.get("/no-such-page/"))
    latin_1 = "application/x-www-form-urlencoded; charset=latin-1"
    unreadable = visitor.generic("POST", "/accounts/login/", b"username=caf\xe9", latin_1)
    assert unreadable.status_code == 400
    pages["unreadable form"] = read(unreadable)
    visitor.force_login(staff)
    pages["registration errors"] = read(visitor.post("/learners/new/", {"dob": "2090-13-01"}))
    for dob_boxes in [{"dob_day": "27", "dob_year": "2009"}, {"dob_day": "31", "dob_month": "2"}]:
        pages[f"date of birth errors {dob_boxes}"] = read(visitor.post("/learners/new/", dob_boxes))
    pages["dashboard date errors"] = read(
        visitor.get("/dashboard/", {"from_day": "31", "from_month": "2", "from_year": "26"})
    )
    pages["upload errors"] = read(visitor.post("/learners/import/", {}))
    learner = cohort["finished"]
    pages["password errors"] = read(visitor.post(f"/learners/{learner.pk}/password/", {}))
    pages["erase errors"] = read(visitor.post(f"/learners/{learner.pk}/erase/", {}))
    records_hold_place(learner=learner, placed_by=staff)
    lift = visitor.post(f"/learners/{learner.pk}/erase/", {"lift": "yes", "lift-reason": ""})
    assert b'name="lift-reason"' in lift.content
    pages["lifting a hold without a reason"] = read(lift)
    pages["edit errors"] = read(visitor.post(f"/learners/{learner.pk}/edit/", {"dob": "2090-1-1"}))
    visitor.post(f"/learners/{learner.pk}/password/", {"make_password": "on"})
    made = visitor.get(f"/learners/{learner.pk}/")
    assert b'class="password-made"' in made.content
    pages["password made"] = read(made)
    halfway = cohort["halfway"]
    visitor.force_login(halfway.user)
    attempt = AssessmentAttempt.objects.get(learner=halfway)
    pages["unanswered page"] = read(
        visitor.post(attempt_url(attempt, "page/2/"), {"continue": ""}, follow=True)
    )

    found = problems(pages, data_words())
    assert not found, "Text that never went through translation:\n" + "\n".join(found)


@pytest.mark.django_db
def test_an_imports_progress_and_the_list_of_imports_are_translated(in_pseudo_language, staff):
    job = import_job_create_from_csv(
        file=upload_file(HEADER + "\n" + good_rows(10)), created_by=staff
    )
    mid_way(job)
    visitor = Client()
    visitor.force_login(staff)
    url = f"/learners/import/{job.pk}/"
    pages = {"sending": read(visitor.get(url))}
    summaries = [visitor.get(url + "progress.json").json()["summary"]]
    job.rows.filter(state__in=["queued", "sending"]).update(state="registered")
    pages["setting up sign-in"] = read(visitor.get(url))
    summaries.append(visitor.get(url + "progress.json").json()["summary"])
    pages["list"] = read(visitor.get("/learners/imports/"))

    found = problems(pages, data_words())
    assert not found, "Text that never went through translation:\n" + "\n".join(found)
    # The summary is made of messages inside messages: an untranslated part would hide inside
    # the outer brackets, but not its vowels, which the pseudo-language accents.
    for summary in summaries:
        assert summary.startswith(OPEN) and not re.search("[aeiouyAEIOUY]", summary), summary


@pytest.mark.django_db
def test_the_roster_pages_are_translated(in_pseudo_language):
    from classes.models import SchoolGroup
    from roster.models import RosterSync
    from tests.factories import make_group
    from tests.roster_syncs import make_sync, registered_with_slips

    held = make_sync(state=RosterSync.State.HELD, joiners=60)
    applied = make_sync(state=RosterSync.State.APPLIED, filename="earlier.zip")
    form = make_group("7A")
    registered_with_slips(applied, [form, make_group("Y7", kind=SchoolGroup.Kind.YEAR_GROUP)])
    failed = RosterSync.objects.create(
        origin=RosterSync.Origin.DROP, state=RosterSync.State.FAILED, error="broken"
    )
    reading = make_sync(state=RosterSync.State.READING, filename="uploaded.zip")
    visitor = Client()
    visitor.force_login(make_staff("ada.admin", role=StaffRole.ADMIN))
    pages = {
        "list": read(visitor.get("/roster/")),
        "upload error": read(visitor.post("/roster/")),
        "held": read(visitor.get(f"/roster/{held.pk}/")),
        "applied": read(visitor.get(f"/roster/{applied.pk}/")),
        "failed": read(visitor.get(f"/roster/{failed.pk}/")),
        "being read": read(visitor.get(f"/roster/{reading.pk}/")),
        "grades": read(visitor.post("/roster/grades/", {"roster_grade_levels": "Y7 == 8"})),
        "slips": read(visitor.get(f"/roster/{applied.pk}/slips/")),
        "printed": read(visitor.post(f"/roster/{applied.pk}/slips/", {"group": form.pk})),
    }

    # The slips' sign-in address is the site's own: data, not a message.
    found = problems(pages, data_words() | {"http", "testserver", "accounts", "login"})
    assert not found, "Text that never went through translation:\n" + "\n".join(found)


@pytest.mark.django_db
def test_dates_follow_the_locale(cohort, staff, client):
    client.force_login(staff)
    learner = cohort["finished"]
    learner.dob = date(2010, 2, 3)
    learner.save(update_fields=["dob"])
    assert "3 February 2010" in client.get(f"/learners/{learner.pk}/").content.decode()


@pytest.mark.django_db
def test_a_failed_calls_outcome_is_named_in_the_readers_language(in_pseudo_language, staff):
    UpstreamFailure.objects.create(
        endpoint="results", method="GET", outcome="timed out connecting", at=timezone.now()
    )
    visitor = Client()
    visitor.force_login(staff)
    page = visitor.get("/operations/").content.decode()
    assert pseudo("timed out connecting") in page


@pytest.mark.django_db
def test_a_csv_download_is_written_in_the_language_of_its_request(in_pseudo_language, staff):
    make_learner("sam.secondary", "u-sam")
    visitor = Client()
    visitor.force_login(staff)
    response = visitor.get("/learners/learners.csv")
    # The server reads a streamed file after the view has returned, when another language may
    # be active in its thread.
    with translation.override("en"):
        text = b"".join(response.streaming_content).decode()
    assert pseudo("Secondary") in text.splitlines()[1]
    assert text.splitlines()[0].startswith("\ufeffusername,")  # the header is a data interface


def run_queued(task_path: str) -> None:
    """Run the queued task of that path in this process, as a worker does."""
    queued = DBTaskResult.objects.get(task_path=task_path)
    queued.task.call(*queued.task_result.args, **queued.task_result.kwargs)


@pytest.mark.django_db(transaction=True)
def test_an_imports_rows_are_failed_in_the_language_it_was_confirmed_in(
    in_pseudo_language, staff, upstream, settings
):
    settings.TASKS = {
        "default": {
            "BACKEND": "django_tasks_db.DatabaseBackend",
            "QUEUES": ["default", "imports", "media"],
        }
    }
    get_client().create_learner(username="pupil0", password=GOOD_PASSWORD, dob=date(2010, 1, 1))
    job = import_job_create_from_csv(
        file=upload_file(HEADER + "\n" + good_rows(1)), created_by=staff
    )
    import_job_confirm(job=job, confirmed_by=staff)  # queued, by a reader of the pseudo-language
    settings.LANGUAGE_CODE = "en"  # the site's language, a worker's without one given

    with translation.override("en"):  # as a worker starts
        run_queued("imports.tasks.run_import_job")
        run_queued("imports.tasks.register_import_row")
        english = str(TAKEN_UPSTREAM)

    assert job.rows.get().reason == pseudo(english)


@pytest.mark.django_db
def test_a_kept_problem_is_stored_in_the_source_language_and_shown_in_the_readers(
    in_pseudo_language, upstream, staff, client
):
    attempt = ready_to_send(client, register_pupil(staff))
    upstream.state.inject_failure("submit-assessment", status=503, times=5)
    client.post(attempt_url(attempt, "submit/"))

    attempt.refresh_from_db()
    assert attempt.state == AssessmentAttempt.State.SUBMIT_PENDING
    # Written while a reader of the pseudo-language was sending: kept in English all the same.
    assert attempt.last_error.startswith("The assessment service")
    page = client.get(attempt_url(attempt, "results/")).content.decode()
    assert pseudo(attempt.last_error) in page
