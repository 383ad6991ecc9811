"""Every page scoped by school: another school's records are not there (issue 28, item 3).

Two schools, Alpha and Bravo, each with a DSL, a teacher (with a class and a learner in it) and
an admin, and one of everything a URL can name; a trust admin, a trust safeguarding lead and a
trust viewer above them. Alpha's people, and the trust's working in Alpha, try every URL of the
portal with Bravo's ids, by GET and POST: each is a 404 (or refused before any lookup), and no
page or download shows a word of Bravo's. Lists, search, dashboards and downloads show Alpha's
rows and never Bravo's; the trust's people see Bravo's records in Bravo, and both schools' under
"All schools".
"""

from dataclasses import dataclass
from urllib.parse import quote

import pytest
import responses
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from accounts.access import ALL_SCHOOLS
from accounts.models import StaffRole
from accounts.school_choice import SESSION_KEY
from followups.models import FollowUp
from imports.models import ImportJob
from learners.models import Learner
from roster.models import RosterSync
from schools.models import School
from tests.factories import GOOD_PASSWORD, HEADER, VALID, make_learner, make_staff, upload_file
from tests.portal_urls import portal_urls
from tests.roster_syncs import make_sync
from tests.school_records import SchoolRecords, school_records

LOGIN_URL = "/accounts/login/"


@dataclass
class Trust:
    """Two schools and the trust's people above them."""

    alpha: SchoolRecords
    bravo: SchoolRecords
    trust_admin: User
    trust_lead: User
    trust_viewer: User
    alpha_sync: RosterSync
    bravo_sync: RosterSync


@pytest.fixture
def trust(db) -> Trust:
    alpha_school = School.default()
    bravo_school = School.objects.create(code="BRAVO", name="Bravo Academy")
    alpha = school_records(
        alpha_school,
        tag="alpha",
        first="Alfie",
        last="Alphington",
        group="Alpha Form 7A",
        assessment_id=5100,
    )
    bravo = school_records(
        bravo_school,
        tag="bravo",
        first="Zelda",
        last="Bravington",
        group="Bravo Form 9Z",
        assessment_id=5200,
    )
    # Each school's roster sync; its file's name is the school's own to read.
    alpha_sync = make_sync(school=alpha_school, filename="alpha-records.zip")
    bravo_sync = make_sync(school=bravo_school, filename="bravo-records.zip")
    bravo.markers.append(bravo_sync.filename)
    return Trust(
        alpha=alpha,
        bravo=bravo,
        trust_admin=make_staff("tia.trust", role=StaffRole.TRUST_ADMIN),
        trust_lead=make_staff("tess.trust", role=StaffRole.TRUST_SAFEGUARDING_LEAD),
        trust_viewer=make_staff("val.trust", role=StaffRole.TRUST_VIEWER),
        alpha_sync=alpha_sync,
        bravo_sync=bravo_sync,
    )


@pytest.fixture(autouse=True)
def no_upstream():
    """Fail any request that reaches the upstream: access checks come before every call."""
    with responses.RequestsMock(assert_all_requests_are_fired=False) as mock:
        yield mock
        assert not mock.calls, f"the upstream was called: {[c.request.url for c in mock.calls]}"


def client_of(user: User, school: School | str) -> Client:
    """Return a client signed in as the user, working in the school (or "all")."""
    client = Client(raise_request_exception=False)
    client.force_login(user)
    session = client.session
    session[SESSION_KEY] = school if isinstance(school, str) else school.pk
    session.save()
    return client


def body_of(response) -> str:
    """Return the whole body, downloads (streamed) included."""
    return response.getvalue().decode(errors="replace")


def someone(trust: Trust, person: str) -> tuple[User, School | str]:
    """Return the user behind a person's name and the school they work in."""
    people = {
        "alpha_dsl": (trust.alpha.dsl, trust.alpha.school),
        "alpha_teacher": (trust.alpha.teacher, trust.alpha.school),
        "alpha_admin": (trust.alpha.admin, trust.alpha.school),
        "trust_admin_in_alpha": (trust.trust_admin, trust.alpha.school),
        "trust_lead_in_alpha": (trust.trust_lead, trust.alpha.school),
        "trust_viewer": (trust.trust_viewer, ALL_SCHOOLS),
    }
    return people[person]


# Every URL with Bravo's ids ---------------------------------------------------------------------


def bravo_paths(name: str, params: list[str], trust: Trust) -> list[str]:
    """Return the paths of a URL filled with Bravo's ids, and with Alpha's and Bravo's mixed."""
    if not params:
        return [reverse(name)]
    a, b = trust.alpha, trust.bravo
    by_kind = {
        "staff:staff_edit": b.teacher.pk,
        "staff:staff_identity_unlink": b.teacher.pk,
        "staff:staff_second_factor_reset": b.teacher.pk,
        "staff:staff_sessions_end": b.teacher.pk,
        "staff:sign_in_lock_lift": b.lock.pk,
        "followups:detail": b.follow_up.pk,
        "lessons:learner_card": b.learner.pk,
        "lessons:learner_card_reissue": b.learner.pk,
        "safeguarding:entry_amend": b.entry.pk,
        "safeguarding:entry_correct": b.entry.pk,
    }
    prefixes = {
        "classes:": b.group.pk,
        "lessons:": b.group.pk,
        "imports:": b.job.pk,
        "roster:": trust.bravo_sync.pk,
        "safeguarding:": b.alert.pk,
        "learners:": b.learner.pk,
        "privacy:": b.learner.pk,
    }
    pk = by_kind.get(name) or next((v for p, v in prefixes.items() if name.startswith(p)), None)
    values = {
        "pk": pk if pk is not None else b.learner.pk,
        "learner_pk": b.learner.pk,
        "session_pk": b.card_session.pk,
        "assessment_id": b.attempt.assessment_id,
        "attempt_pk": b.stuck.pk,
        "number": 1,
        "provider_id": "oidc",  # no provider is set up here: a 404 in every school
        # Pictures and recordings belong to no school; none is stored under this digest.
        "digest": "0" * 64,
    }
    unknown = set(params) - set(values)
    assert not unknown, f"{name}: no value for path parameter(s) {sorted(unknown)}"
    paths = [reverse(name, kwargs={p: values[p] for p in params})]
    # Forged: one of Alpha's own records with one of Bravo's inside it.
    mixed = {
        "classes:remove_learner": {"pk": a.group.pk},
        "lessons:session_end": {"pk": a.group.pk},
        "learners:attempt": {"pk": a.learner.pk},
    }
    if name in mixed:
        paths.append(reverse(name, kwargs={p: mixed[name].get(p, values[p]) for p in params}))
    return paths


def judged(response, path: str, with_ids: bool) -> tuple[str, bool]:
    """Name what came back, and whether it is an answer that gives nothing away."""
    status = response.status_code
    if status in (301, 302):
        actual = f"-> {response.url}"
        if response.url.startswith(LOGIN_URL):
            # Signing out does that; anywhere else the walk lost its session and proves nothing.
            return "sign in", path == reverse("logout")
        if response.url == f"/accounts/reauthenticate/?next={quote(path, safe='')}":
            # allauth asks for the password again before any lookup: it says nothing of the id.
            return "password again", True
        # A page without ids may send on elsewhere (home, the dashboard, back to itself).
        return actual, not with_ids
    # With Bravo's ids: not there (404), or refused before any lookup (405).
    if with_ids:
        return str(status), status in (404, 405)
    return str(status), status < 500


# The pages of one member of staff that a trust admin reaches in any school.
TRUST_MANAGES = {
    "staff:staff_edit",
    "staff:staff_identity_unlink",
    "staff:staff_second_factor_reset",
    "staff:staff_sessions_end",
}

# Alpha's own people, and the trust's working in Alpha; the trust viewer reads no learner.
OUTSIDERS = [
    "alpha_dsl",
    "alpha_teacher",
    "alpha_admin",
    "trust_admin_in_alpha",
    "trust_lead_in_alpha",
    "trust_viewer",
]


@pytest.mark.parametrize("person", OUTSIDERS)
def test_no_url_shows_anything_of_the_other_school(trust, person):
    user, school = someone(trust, person)
    forbidden = trust.bravo.markers
    bravo = trust.bravo
    staff_names = {bravo.teacher.username, bravo.admin.username, bravo.dsl.username}
    rows: list[str] = []
    failures: list[str] = []

    client = client_of(user, school)
    # Signed in, working in Alpha: Alpha's learner is there (the trust viewer sees no learner).
    own = client.get(reverse("learners:detail", args=[trust.alpha.learner.pk]))
    if person == "trust_viewer":
        assert own.status_code == 404
    else:
        assert own.status_code == 200
        assert trust.alpha.learner.last_name in body_of(own)

    for name, params in portal_urls():
        for path in bravo_paths(name, params, trust):
            for method in ("GET", "POST"):
                response = getattr(client, method.lower())(path)
                actual, ok = judged(response, path, with_ids=bool(params))
                body = body_of(response)
                hidden = forbidden
                if person == "trust_admin_in_alpha" and name.startswith("staff:staff_"):
                    # A trust admin manages every school's staff accounts (a teacher of Bravo
                    # is given a role in Alpha here): their names are no leak; the pupils' are.
                    hidden = [marker for marker in forbidden if marker not in staff_names]
                    # (Their sign-in too: its pages ask to confirm first.)
                    ok = ok or (response.status_code in (200, 302) and name in TRUST_MANAGES)
                leaks = [marker for marker in hidden if marker in body]
                line = f"{'ok ' if ok and not leaks else 'BAD'} {method:<4} {path:<45} {actual}"
                line += f"  LEAKS {leaks}" if leaks else ""
                rows.append(line)
                if not ok or leaks:
                    failures.append(f"{name}: {line}")
        if name in ("logout", "account_logout"):
            client = client_of(user, school)  # its POST signed out: a new session

    print(f"\n--- {person}: {len(rows)} requests, {len(failures)} leaks ---")
    print("\n".join(rows))
    assert not failures, "\n".join(failures)


# Lists, search, dashboards and downloads: the school's own rows, never the other's ------------

DSL, TEACHER, ADMIN = "alpha_dsl", "alpha_teacher", "alpha_admin"


def alpha_lists(trust: Trust) -> list[tuple[str, set[str], str]]:
    """Return each list (URL), who of Alpha's people reads it, and an Alpha word it shows."""
    a = trust.alpha
    everyone = {DSL, TEACHER, ADMIN}
    return [
        (reverse("learners:list"), everyone, a.learner.last_name),
        # A search both schools' learners match ("Alphington", "Bravington").
        (reverse("learners:list") + "?q=ington", everyone, a.learner.last_name),
        (reverse("learners:csv_learners"), everyone, a.learner.username),
        (reverse("dashboard:results_csv"), {DSL}, a.learner.username),
        (reverse("classes:list"), everyone, a.group.name),
        # The class page's search for learners to add: the school's only.
        (reverse("classes:detail", args=[a.group.pk]) + "?q=ington", {ADMIN}, a.group.name),
        (reverse("lessons:roster", args=[a.group.pk]), {TEACHER, ADMIN}, a.learner.last_name),
        # The board names the class, never a pupil.
        (reverse("lessons:board", args=[a.group.pk]), {TEACHER, ADMIN}, a.group.name),
        # Cards carry the first name only.
        (reverse("lessons:group_cards", args=[a.group.pk]), {TEACHER, ADMIN}, a.learner.first_name),
        (reverse("followups:queue"), {DSL}, a.learner.last_name),
        (reverse("safeguarding:alerts"), {DSL}, a.learner.last_name),
        (reverse("imports:list"), {DSL, ADMIN}, a.job.filename),
        (reverse("staff:sign_in_locks"), everyone, a.learner.last_name),
        (reverse("staff:staff_list"), {ADMIN}, a.teacher.username),
        (reverse("operations"), {DSL, ADMIN}, a.learner.last_name),
        (reverse("roster:index"), {ADMIN}, trust.alpha_sync.filename),
        (reverse("roster:sync", args=[trust.alpha_sync.pk]), {ADMIN}, "alpha-records.zip"),
        (reverse("roster:result", args=[trust.alpha_sync.pk]), {ADMIN}, "Our school"),
    ]


@pytest.mark.parametrize("person", [DSL, TEACHER, ADMIN])
def test_lists_show_the_own_schools_rows_and_never_the_others(trust, person):
    user, school = someone(trust, person)
    client = client_of(user, school)
    checked = 0

    for url, readers, alpha_word in alpha_lists(trust):
        if person not in readers:
            continue
        response = client.get(url)
        body = body_of(response)

        assert response.status_code == 200, url
        assert alpha_word in body, f"{url}: {alpha_word!r} missing"
        assert [m for m in trust.bravo.markers if m in body] == [], url
        checked += 1
    assert checked >= 5


def test_the_dashboard_counts_the_own_schools_learners_only(trust):
    for person in (DSL, TEACHER, ADMIN):
        user, school = someone(trust, person)
        response = client_of(user, school).get(reverse("dashboard:home"))

        assert response.status_code == 200
        registered = response.context["summary"].headline[0]
        assert str(registered.label) == "Learners registered"
        assert registered.value == 1, person  # Alfie; Zelda is Bravo's


# The trust's people: Bravo's records in Bravo, both schools' under "All schools" --------------


def test_the_trust_sees_the_other_schools_records_when_working_in_it(trust):
    a, b = trust.alpha, trust.bravo
    seen = {
        trust.trust_admin: [
            reverse("learners:detail", args=[b.learner.pk]),
            reverse("classes:detail", args=[b.group.pk]),
            reverse("imports:job", args=[b.job.pk]),
            reverse("lessons:roster", args=[b.group.pk]),
            reverse("roster:sync", args=[trust.bravo_sync.pk]),
        ],
        trust.trust_lead: [
            reverse("learners:detail", args=[b.learner.pk]),
            reverse("safeguarding:alert", args=[b.alert.pk]),
            reverse("followups:detail", args=[b.follow_up.pk]),
        ],
    }
    for user, urls in seen.items():
        client = client_of(user, b.school)
        for url in urls:
            response = client.get(url)
            body = body_of(response)

            assert response.status_code == 200, (user, url)
            bravo_words = (b.learner.last_name, b.job.filename, trust.bravo_sync.filename)
            assert any(word in body for word in bravo_words), (user, url)
            assert a.learner.last_name not in body, (user, url)


def test_the_trust_sees_both_schools_under_all_schools(trust):
    a, b = trust.alpha, trust.bravo
    lists = {
        trust.trust_admin: [
            (reverse("learners:list"), "last_name"),
            (reverse("learners:csv_learners"), "username"),
            (reverse("classes:list"), "group"),
            (reverse("imports:list"), "job"),
            (reverse("staff:sign_in_locks"), "last_name"),
            (reverse("operations"), "last_name"),
            (reverse("roster:index"), "sync"),
        ],
        trust.trust_lead: [
            (reverse("learners:list"), "last_name"),
            (reverse("safeguarding:alerts"), "last_name"),
            (reverse("followups:queue"), "last_name"),
            (reverse("dashboard:results_csv"), "username"),
        ],
    }
    words = {
        "last_name": lambda s: s.learner.last_name,
        "username": lambda s: s.learner.username,
        "group": lambda s: s.group.name,
        "job": lambda s: s.job.filename,
        "sync": lambda s: (trust.alpha_sync if s is a else trust.bravo_sync).filename,
    }
    for user, urls in lists.items():
        client = client_of(user, ALL_SCHOOLS)
        for url, word in urls:
            response = client.get(url)
            body = body_of(response)

            assert response.status_code == 200, (user, url)
            assert words[word](a) in body, (user, url)
            assert words[word](b) in body, (user, url)

    dashboard = client_of(trust.trust_admin, ALL_SCHOOLS).get(reverse("dashboard:home"))
    assert dashboard.context["summary"].headline[0].value == 2


# Another school's ids inside a form ------------------------------------------------------------


def test_an_admin_cannot_put_the_other_schools_learner_in_a_class(trust):
    a, b = trust.alpha, trust.bravo
    client = client_of(a.admin, a.school)
    add = reverse("classes:add_learners", args=[a.group.pk])
    spare = make_learner("amos.alpha", "u-amos", school=a.school)

    client.post(add, {"learners": [spare.pk]})
    response = client.post(add, {"learners": [b.learner.pk]})

    assert a.group.memberships.filter(learner=spare).exists()
    assert response.status_code == 302
    assert not a.group.memberships.filter(learner=b.learner).exists()


def test_a_learner_cannot_be_registered_into_the_other_schools_class(trust):
    a, b = trust.alpha, trust.bravo
    client = client_of(a.admin, a.school)
    form = {**VALID, "school_class": b.group.pk}

    response = client.post(reverse("learners:new"), form)

    assert response.status_code == 200
    assert "Select a valid choice" in body_of(response)
    assert not Learner.objects.filter(username=VALID["username"]).exists()


def test_a_follow_up_cannot_be_given_to_the_other_schools_lead(trust):
    a, b = trust.alpha, trust.bravo
    client = client_of(a.dsl, a.school)
    url = reverse("followups:detail", args=[a.follow_up.pk])

    fields = {"status": a.follow_up.status, "due_date": a.follow_up.due_date.isoformat()}

    refused = client.post(url, {**fields, "assignee": b.dsl.pk})
    assert refused.status_code == 200
    assert "Choose a member of staff from the list" in body_of(refused)
    assert FollowUp.objects.get(pk=a.follow_up.pk).assignee_id is None
    client.post(url, {**fields, "assignee": a.dsl.pk})
    assert FollowUp.objects.get(pk=a.follow_up.pk).assignee_id == a.dsl.pk


def test_a_file_cannot_put_learners_in_the_other_schools_class(trust):
    a, b = trust.alpha, trust.bravo
    client = client_of(a.admin, a.school)
    text = f"{HEADER},class\nnew.pupil,{GOOD_PASSWORD},2010-01-01,,New,Pupil,,{b.group.name}\n"

    response = client.post(reverse("imports:upload"), {"file": upload_file(text)}, follow=True)

    assert response.status_code == 200
    job = ImportJob.objects.exclude(pk__in=[a.job.pk, b.job.pk]).get()
    row = job.rows.get()
    assert row.state == "invalid"
    assert f"There is no group called “{b.group.name}”" in str(row.problems)
