"""Who may see which page: every URL of the portal, for every role (docs/architecture.md)."""

import re
from dataclasses import dataclass, fields, replace
from datetime import timedelta
from decimal import Decimal
from urllib.parse import quote

import pytest
import responses
from django.contrib.auth.models import Group, User
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from accounts.access import STAFF_GROUP
from accounts.models import SignInLock, StaffRole
from assessments.content import questions_to_json
from assessments.models import AssessmentAttempt, AssessmentResult, AttemptAnswer, FocusArea
from classes.models import SchoolGroup
from followups.models import FollowUp
from followups.services import followup_open_for_result
from imports.models import ImportJob
from learners.models import Learner
from lessons.models import CardSession, SignInCard, SignInWindow
from lessons.services import learner_card_print
from partner_api import Answer, Question
from pictures.models import Picture
from roster.models import RosterSync
from safeguarding.models import Alert, ChronologyEntry
from speech.models import Recording
from tests.factories import make_group, make_learner, make_staff, put_in_group
from tests.portal_urls import portal_urls

State = AssessmentAttempt.State

LOGIN_URL = "/accounts/login/"

# What a request may get back. A redirect is written "-> <location>".
OK = "200"
NOT_FOUND = "404"
NOT_ALLOWED = "405"
SIGN_IN = "sign in"  # 302 to the login page with ?next= the requested path
TO_LOGIN = f"-> {LOGIN_URL}"
TO_HOME = "-> /"
TO_ME = "-> /me/"
TO_DASHBOARD = "-> /dashboard/"
TO_SETTINGS = "-> /settings/"
TO_LOCKS = "-> /sign-in-locks/"
TO_ROSTER_SYNC = "-> /roster/<sync>/"
TO_ROSTER_SLIPS = "-> /roster/<sync>/slips/"
# The requester's own page: 200 (or 400 when a POST re-shows a form with errors), possibly
# after redirects that never leave the requester's own /me/ pages.
MINE = "mine"


@dataclass(frozen=True)
class Row:
    """What each kind of visitor gets from one URL and method.

    `learner` is the learner whose objects fill the path; `other_learner` is a different
    learner using that same path. For a URL without objects both are simply a learner. The
    same goes for staff who work with groups: `teacher` teaches the class of the learner whose
    objects fill the path, `other_teacher` teaches another class; `head_of_year` leads the
    year group that learner is in, `other_head_of_year` one they are not in. The partner's
    settings are the defaults: teachers and admins do not read results.
    """

    anonymous: str
    learner: str
    other_learner: str
    admin: str
    teacher: str
    other_teacher: str
    head_of_year: str
    other_head_of_year: str
    dsl: str
    superuser: str


COLUMNS = [field.name for field in fields(Row)]
# The people the matrix signs in as (issue: admin, teacher A, teacher B, head of year, DSL,
# learner, other learner, anonymous), and a superuser, who counts as a partner admin.
PEOPLE = [
    "anonymous",
    "learner",
    "other_learner",
    "admin",
    "teacher_a",
    "teacher_b",
    "head_of_year",
    "dsl",
    "superuser",
]


STAFF_COLUMNS = ("admin", "teacher", "other_teacher", "head_of_year", "other_head_of_year", "dsl")


def staff_row(otherwise: str = NOT_FOUND, *, learners: str = NOT_FOUND, **answers: str) -> Row:
    """Return a staff URL's row: named staff columns get their answer, the rest `otherwise`."""
    # Anonymous visitors sign in, learners get `learners`, a superuser what an admin gets.
    unknown = set(answers) - set(STAFF_COLUMNS)
    assert not unknown, f"not staff columns: {unknown}"
    cells = {column: answers.get(column, otherwise) for column in STAFF_COLUMNS}
    return Row(SIGN_IN, learners, learners, **cells, superuser=cells["admin"])


def everyone_on_staff(answer: str) -> Row:
    return staff_row(answer)


def whole_school(answer: str) -> Row:
    """Admins and safeguarding leads only (bulk registration, personal data, operations)."""
    return staff_row(admin=answer, dsl=answer)


def admins_only(answer: str) -> Row:
    """Accounts, groups, settings."""
    return staff_row(admin=answer)


# Any member of staff, each seeing what their role allows (the list, the dashboard).
STAFF_PAGE = everyone_on_staff(OK)
# One learner's record: staff of their groups and the whole-school roles.
LEARNER_RECORD = staff_row(admin=OK, teacher=OK, head_of_year=OK, dsl=OK)
TO_RECORD = "-> /learners/<learner>/"
LEARNER_EDIT_BY_POST = replace(LEARNER_RECORD, teacher=TO_RECORD, head_of_year=TO_RECORD)
# Results and follow-ups across the learners a role sees: pastoral staff and the DSLs.
RESULTS_PAGE = staff_row(head_of_year=OK, other_head_of_year=OK, dsl=OK)
RESULTS_EXPORT = staff_row(dsl=OK)
RESULTS_EXPORT_BY_POST = replace(RESULTS_EXPORT, dsl=NOT_ALLOWED)
# One learner's follow-up.
FOLLOW_UP = staff_row(head_of_year=OK, dsl=OK)
# One class: its staff, and the whole-school roles (a head of year leads the year group).
CLASS_PAGE = staff_row(admin=OK, teacher=OK, dsl=OK)
LEARNER_PAGE = Row(SIGN_IN, MINE, NOT_FOUND, *[NOT_FOUND] * 7)
# Safeguarding alerts: the DSLs (and deputies, not in the matrix).
SAFEGUARDING_PAGE = staff_row(dsl=OK)
LEARNERS_ONLY = Row(SIGN_IN, MINE, MINE, *[NOT_FOUND] * 7)
# The trust's figures: trust roles only (a superuser counts as a trust admin); no school role.
TRUST_PAGE = Row(SIGN_IN, *[NOT_FOUND] * 8, OK)
# A member of staff's own sign-in pages (the second factor): never a learner's.
STAFF_ACCOUNT_PAGE = Row(SIGN_IN, NOT_FOUND, NOT_FOUND, *[OK] * 7)
STAFF_ACCOUNT_PAGE_BY_POST = Row(SIGN_IN, NOT_FOUND, NOT_FOUND, *[NOT_ALLOWED] * 7)
NO_FACTOR = Row(SIGN_IN, NOT_FOUND, NOT_FOUND, *[NOT_FOUND] * 7)
# allauth's second-factor step with no sign-in under way goes back to the start.
NO_SIGN_IN_UNDER_WAY = Row(TO_LOGIN, NOT_FOUND, NOT_FOUND, *[TO_HOME] * 7)
TO_PASSWORD_AGAIN = "-> /accounts/reauthenticate/"
NO_FACTOR_TO_GIVE = Row(SIGN_IN, NOT_FOUND, NOT_FOUND, *[TO_PASSWORD_AGAIN] * 7)
# require_POST sits inside learner_required: a learner's GET is refused before any lookup,
# so it reveals nothing about whose attempt the id is.
POST_ONLY_BY_GET = Row(SIGN_IN, NOT_ALLOWED, NOT_ALLOWED, *[NOT_FOUND] * 7)
# And require_GET the same way round.
GET_ONLY_BY_POST = POST_ONLY_BY_GET

TO_IMPORT_JOB = "-> /learners/import/<job>/"
TO_CLASS = "-> /classes/<class>/"
TO_LESSON = "-> /classes/<class>/#lesson"
TO_CARD = "-> /learners/<learner>/card/"


def lesson_staff(answer: str) -> Row:
    """The class's own teacher and admins (for cover): not the whole-school pastoral roles."""
    return staff_row(admin=answer, teacher=answer)


LESSON_PAGE = lesson_staff(OK)

# Every URL name of the portal (the admin apart) with what GET and POST must answer.
# A new URL pattern must be added here, or test_the_matrix_knows_every_url_of_the_portal fails.
EXPECTED: dict[str, dict[str, Row]] = {
    "home": {
        "GET": Row(TO_LOGIN, TO_ME, TO_ME, *[TO_DASHBOARD] * 7),
        "POST": Row(TO_LOGIN, TO_ME, TO_ME, *[TO_DASHBOARD] * 7),
    },
    "login": {
        "GET": Row(OK, *[TO_HOME] * 9),
        "POST": Row(OK, *[TO_HOME] * 9),
    },
    "logout": {
        # A typed or bookmarked sign-out address asks to confirm; only POST signs out.
        "GET": Row(TO_LOGIN, *[OK] * 9),
        "POST": Row(TO_LOGIN, *[TO_LOGIN] * 9),
    },
    # Choosing the school worked in: a form posted from the header, back to the page or home.
    # allauth's names for the same two pages.
    "account_login": {
        "GET": Row(OK, *[TO_HOME] * 9),
        "POST": Row(OK, *[TO_HOME] * 9),
    },
    "account_logout": {
        "GET": Row(TO_LOGIN, *[OK] * 9),
        "POST": Row(TO_LOGIN, *[TO_LOGIN] * 9),
    },
    # allauth's page for an inactive account and a provider sign-in given up or failed: words
    # for anyone, nobody's data.
    "account_inactive": {"GET": Row(*[OK] * 10), "POST": Row(*[NOT_ALLOWED] * 10)},
    "socialaccount_login_cancelled": {"GET": Row(*[OK] * 10), "POST": Row(*[NOT_ALLOWED] * 10)},
    "socialaccount_login_error": {"GET": Row(*["401"] * 10), "POST": Row(*[NOT_ALLOWED] * 10)},
    # No school identity provider is set up here: their pages are not found.
    "google_login": {"GET": Row(*[NOT_FOUND] * 10), "POST": Row(*[NOT_FOUND] * 10)},
    "google_callback": {"GET": Row(*[NOT_FOUND] * 10), "POST": Row(*[NOT_FOUND] * 10)},
    "openid_connect_login": {"GET": Row(*[NOT_FOUND] * 10), "POST": Row(*[NOT_FOUND] * 10)},
    "openid_connect_callback": {"GET": Row(*[NOT_FOUND] * 10), "POST": Row(*[NOT_FOUND] * 10)},
    # The second factor is staff's (STAFF_MFA_REQUIRED is off here, and nobody has one yet): a
    # learner finds none of its pages; staff set up their first without signing in again.
    "account_reauthenticate": {"GET": STAFF_ACCOUNT_PAGE, "POST": STAFF_ACCOUNT_PAGE},
    "mfa_index": {"GET": STAFF_ACCOUNT_PAGE, "POST": STAFF_ACCOUNT_PAGE_BY_POST},
    "mfa_list_webauthn": {"GET": STAFF_ACCOUNT_PAGE, "POST": STAFF_ACCOUNT_PAGE_BY_POST},
    "mfa_authenticate": {"GET": NO_SIGN_IN_UNDER_WAY, "POST": NO_SIGN_IN_UNDER_WAY},
    "mfa_reauthenticate": {"GET": NO_FACTOR_TO_GIVE, "POST": NO_FACTOR_TO_GIVE},
    "mfa_reauthenticate_webauthn": {"GET": NO_FACTOR_TO_GIVE, "POST": NO_FACTOR_TO_GIVE},
    "mfa_activate_totp": {"GET": STAFF_ACCOUNT_PAGE, "POST": STAFF_ACCOUNT_PAGE},
    "mfa_add_webauthn": {"GET": STAFF_ACCOUNT_PAGE, "POST": STAFF_ACCOUNT_PAGE},
    "mfa_generate_recovery_codes": {"GET": STAFF_ACCOUNT_PAGE, "POST": STAFF_ACCOUNT_PAGE},
    "mfa_edit_webauthn": {"GET": NO_FACTOR, "POST": NO_FACTOR},
    "mfa_remove_webauthn": {"GET": NO_FACTOR, "POST": NO_FACTOR},
    # Nothing to show or turn off without a factor.
    "mfa_view_recovery_codes": {"GET": NO_FACTOR, "POST": STAFF_ACCOUNT_PAGE_BY_POST},
    "mfa_download_recovery_codes": {"GET": NO_FACTOR, "POST": NO_FACTOR},
    "mfa_deactivate_totp": {"GET": NO_FACTOR, "POST": NO_FACTOR},
    "school_choose": {
        "GET": Row(*[NOT_ALLOWED] * 10),
        "POST": Row(*[TO_HOME] * 10),
    },
    "learners:list": {"GET": STAFF_PAGE, "POST": STAFF_PAGE},
    "learners:new": {"GET": STAFF_PAGE, "POST": STAFF_PAGE},
    "learners:detail": {"GET": LEARNER_RECORD, "POST": LEARNER_RECORD},
    "learners:attempt": {"GET": LEARNER_RECORD, "POST": LEARNER_RECORD},
    "learners:password_reset": {"GET": LEARNER_RECORD, "POST": LEARNER_RECORD},
    # Correcting the record: whoever sees it. An empty POST shows whole-school staff the
    # form's errors (a date of birth is required); teachers and heads of year, who may not
    # change it or the level, have the optional names emptied and go back to the record.
    "learners:edit": {"GET": LEARNER_RECORD, "POST": LEARNER_EDIT_BY_POST},
    # A download of everything held, results included, for a subject access request: GET
    # only, by the whole-school roles that read results.
    "privacy:export": {"GET": RESULTS_EXPORT, "POST": RESULTS_EXPORT_BY_POST},
    # A POST without the confirmation button only shows the confirmation page again.
    "privacy:erase": {"GET": whole_school(OK), "POST": whole_school(OK)},
    # The safeguarding hold: a POST without the place or lift button only shows the page.
    "privacy:hold": {"GET": whole_school(OK), "POST": whole_school(OK)},
    # The learner's own privacy page: read only.
    "privacy:my_privacy": {
        "GET": LEARNERS_ONLY,
        "POST": Row(SIGN_IN, NOT_ALLOWED, NOT_ALLOWED, *[NOT_FOUND] * 7),
    },
    # Safeguarding alerts: the DSLs and deputies only (never admins). A learner asks for help
    # from any of their pages.
    "safeguarding:alerts": {"GET": SAFEGUARDING_PAGE, "POST": SAFEGUARDING_PAGE},
    "safeguarding:alert": {"GET": SAFEGUARDING_PAGE, "POST": SAFEGUARDING_PAGE},
    # Acknowledging asks what was done and the category: an empty POST shows the alert page
    # again with the errors, acknowledging nothing.
    "safeguarding:acknowledge": {
        "GET": staff_row(dsl=NOT_ALLOWED),
        "POST": staff_row(dsl=OK),
    },
    # A later action on a concern: one not yet acknowledged sends back to its page.
    "safeguarding:add_action": {
        "GET": staff_row(dsl=NOT_ALLOWED),
        "POST": staff_row(dsl="-> /safeguarding/alerts/<alert>/"),
    },
    # A child's safeguarding chronology and its printed record: the leads only (never admins).
    # Reading (and printing) the record is audited: only a GET is a reading of it.
    "safeguarding:chronology": {"GET": SAFEGUARDING_PAGE, "POST": staff_row(dsl=NOT_ALLOWED)},
    "safeguarding:chronology_print": {
        "GET": SAFEGUARDING_PAGE,
        "POST": staff_row(dsl=NOT_ALLOWED),
    },
    # An empty note re-shows the chronology with the error.
    "safeguarding:add_note": {"GET": staff_row(dsl=NOT_ALLOWED), "POST": SAFEGUARDING_PAGE},
    # The DSL's own entry of today: amending or correcting it shows the form (an empty POST
    # shows it again with the error).
    "safeguarding:entry_amend": {"GET": SAFEGUARDING_PAGE, "POST": SAFEGUARDING_PAGE},
    "safeguarding:entry_correct": {"GET": SAFEGUARDING_PAGE, "POST": SAFEGUARDING_PAGE},
    "safeguarding:talk": {"GET": LEARNERS_ONLY, "POST": LEARNERS_ONLY},
    "assessments:my_assessments": {"GET": LEARNERS_ONLY, "POST": LEARNERS_ONLY},
    "assessments:start": {"GET": POST_ONLY_BY_GET, "POST": LEARNERS_ONLY},
    "assessments:take": {"GET": LEARNER_PAGE, "POST": LEARNER_PAGE},
    "assessments:page": {"GET": LEARNER_PAGE, "POST": LEARNER_PAGE},
    "assessments:check": {"GET": LEARNER_PAGE, "POST": LEARNER_PAGE},
    "assessments:submit": {"GET": POST_ONLY_BY_GET, "POST": LEARNER_PAGE},
    "assessments:results": {"GET": LEARNER_PAGE, "POST": LEARNER_PAGE},
    # Where the answers stand (static/js/results_wait.js): JSON of the learner's own attempt.
    "assessments:status": {"GET": LEARNER_PAGE, "POST": GET_ONLY_BY_POST},
    "assessments:resend": {"GET": POST_ONLY_BY_GET, "POST": LEARNER_PAGE},
    "assessments:refresh": {"GET": POST_ONLY_BY_GET, "POST": LEARNER_PAGE},
    # Autosave of one answer (static/js/autosave.js): JSON, POST only. The matrix's empty
    # POST is a 400 on an open attempt and a 409 on one already sent.
    "assessments:save_answer": {"GET": POST_ONLY_BY_GET, "POST": LEARNER_PAGE},
    # "Stay signed in" (static/js/session_timeout.js): any learner's own session.
    "assessments:keep_alive": {
        "GET": POST_ONLY_BY_GET,
        "POST": Row(SIGN_IN, OK, OK, *[NOT_FOUND] * 7),
    },
    "operations": {"GET": whole_school(OK), "POST": whole_school(OK)},
    "dashboard:home": {"GET": STAFF_PAGE, "POST": STAFF_PAGE},
    "dashboard:trust": {"GET": TRUST_PAGE, "POST": TRUST_PAGE},
    "followups:queue": {"GET": RESULTS_PAGE, "POST": RESULTS_PAGE},
    # A POST without changes or a note shows the item again with a message.
    "followups:detail": {"GET": FOLLOW_UP, "POST": FOLLOW_UP},
    "imports:list": {"GET": whole_school(OK), "POST": whole_school(OK)},
    "imports:upload": {"GET": whole_school(OK), "POST": whole_school(OK)},
    "imports:template": {"GET": whole_school(OK), "POST": whole_school(OK)},
    "imports:job": {"GET": whole_school(OK), "POST": whole_school(OK)},
    "imports:progress": {"GET": whole_school(OK), "POST": whole_school(OK)},
    "imports:results": {"GET": whole_school(OK), "POST": whole_school(OK)},
    # Actions on a job are POSTs that come back to the job's page; a finished job can no
    # longer be confirmed or discarded, and this one generated no passwords to download.
    "imports:confirm": {"GET": whole_school(NOT_ALLOWED), "POST": whole_school(TO_IMPORT_JOB)},
    "imports:discard": {"GET": whole_school(NOT_ALLOWED), "POST": whole_school(TO_IMPORT_JOB)},
    "imports:credentials": {
        "GET": whole_school(NOT_ALLOWED),
        "POST": whole_school(TO_IMPORT_JOB),
    },
    # Downloads: GET only.
    "learners:csv_learners": {
        "GET": STAFF_PAGE,
        "POST": everyone_on_staff(NOT_ALLOWED),
    },
    "dashboard:results_csv": {
        "GET": RESULTS_PAGE,
        "POST": staff_row(
            head_of_year=NOT_ALLOWED, other_head_of_year=NOT_ALLOWED, dsl=NOT_ALLOWED
        ),
    },
    # Staff retry any learner's stuck attempt, then come back to the operations page.
    "operations_retry": {
        "GET": whole_school(NOT_ALLOWED),
        "POST": whole_school("-> /operations/"),
    },
    # Groups. Everyone on staff lists the groups they see; admins make and change them.
    "classes:list": {"GET": STAFF_PAGE, "POST": STAFF_PAGE},
    "classes:new": {"GET": admins_only(OK), "POST": admins_only(OK)},
    "classes:detail": {"GET": CLASS_PAGE, "POST": CLASS_PAGE},
    "classes:edit": {"GET": admins_only(OK), "POST": admins_only(OK)},
    # Moving learners in and out: POSTs that come back to the class's page (an empty choice
    # says so there).
    "classes:add_learners": {"GET": admins_only(NOT_ALLOWED), "POST": admins_only(TO_CLASS)},
    "classes:remove_learner": {"GET": admins_only(NOT_ALLOWED), "POST": admins_only(TO_CLASS)},
    # Staff accounts and the partner's settings: admins only.
    "staff:staff_list": {"GET": admins_only(OK), "POST": admins_only(OK)},
    "staff:staff_new": {"GET": admins_only(OK), "POST": admins_only(OK)},
    "staff:staff_edit": {"GET": admins_only(OK), "POST": admins_only(OK)},
    # How a member of staff signs in: pages that ask to confirm; a POST without the confirming
    # button shows the page again (tests/test_staff_sign_in_admin.py acts on them).
    "staff:staff_identity_unlink": {"GET": admins_only(OK), "POST": admins_only(OK)},
    "staff:staff_second_factor_reset": {"GET": admins_only(OK), "POST": admins_only(OK)},
    "staff:staff_sessions_end": {"GET": admins_only(OK), "POST": admins_only(OK)},
    # Signing oneself out everywhere: anyone on staff, never a learner.
    "staff:sign_out_everywhere": {"GET": STAFF_PAGE, "POST": STAFF_PAGE},
    # An empty POST shows the form again: the helplines learners are shown may not be emptied.
    # A POST that leaves fields out keeps them as they were: it saves, and comes back.
    "staff:settings": {"GET": admins_only(OK), "POST": admins_only(TO_SETTINGS)},
    # The school's records: admins only. A POST without a file or choice re-shows the page.
    "roster:index": {"GET": admins_only(OK), "POST": admins_only(OK)},
    "roster:grades": {"GET": admins_only(OK), "POST": admins_only(OK)},
    "roster:sync": {"GET": admins_only(OK), "POST": admins_only(NOT_ALLOWED)},
    "roster:result": {"GET": admins_only(OK), "POST": admins_only(NOT_ALLOWED)},
    # Approving or discarding a sync that is not held changes nothing: back to its page.
    "roster:approve": {"GET": admins_only(NOT_ALLOWED), "POST": admins_only(TO_ROSTER_SYNC)},
    "roster:discard": {"GET": admins_only(NOT_ALLOWED), "POST": admins_only(TO_ROSTER_SYNC)},
    # Printing a class's slips is a POST naming the class; without one, back to the list.
    "roster:slips": {"GET": admins_only(OK), "POST": admins_only(TO_ROSTER_SLIPS)},
    "staff:sign_in_locks": {"GET": STAFF_PAGE, "POST": STAFF_PAGE},
    # Staff lift the lock of a learner they see (a second lift says it has ended), then come
    # back; a GET is refused before any lookup, so it reveals nothing.
    "staff:sign_in_lock_lift": {
        "GET": everyone_on_staff(NOT_ALLOWED),
        "POST": staff_row(admin=TO_LOCKS, teacher=TO_LOCKS, head_of_year=TO_LOCKS, dsl=TO_LOCKS),
    },
    # Sign-in cards. Anyone reaches the card page (an empty POST re-shows it with an error).
    "lessons:card": {"GET": Row(*[OK] * 10), "POST": Row(*[OK] * 10)},
    # Answer pictures and read-aloud audio, served by their content's digest: no one's data.
    "pictures:picture": {"GET": Row(*[OK] * 10), "POST": Row(*[NOT_ALLOWED] * 10)},
    "speech:recording": {"GET": Row(*[OK] * 10), "POST": Row(*[NOT_ALLOWED] * 10)},
    # A class's cards and lessons: its own staff, and admins for cover; a GET that prints and
    # the roster the lesson page fetches, then POSTs that come back to the page they act on.
    "lessons:group_cards": {"GET": LESSON_PAGE, "POST": everyone_on_staff(NOT_ALLOWED)},
    "lessons:roster": {"GET": LESSON_PAGE, "POST": everyone_on_staff(NOT_ALLOWED)},
    # The board for the classroom projector: the same staff as the lesson itself.
    "lessons:board": {"GET": LESSON_PAGE, "POST": everyone_on_staff(NOT_ALLOWED)},
    # One learner's card: staff of any group the learner is in (a head of year leads theirs).
    "lessons:learner_card": {
        "GET": staff_row(admin=OK, teacher=OK, head_of_year=OK),
        "POST": everyone_on_staff(NOT_ALLOWED),
    },
    "lessons:group_cards_reissue": {
        "GET": everyone_on_staff(NOT_ALLOWED),
        "POST": lesson_staff("-> /classes/<class>/cards/"),
    },
    "lessons:learner_card_reissue": {
        "GET": everyone_on_staff(NOT_ALLOWED),
        "POST": staff_row(**dict.fromkeys(("admin", "teacher", "head_of_year"), TO_CARD)),
    },
    "lessons:sign_in_open": {
        "GET": everyone_on_staff(NOT_ALLOWED),
        "POST": lesson_staff(TO_LESSON),
    },
    "lessons:sign_in_close": {
        "GET": everyone_on_staff(NOT_ALLOWED),
        "POST": lesson_staff(TO_LESSON),
    },
    "lessons:session_end": {
        "GET": everyone_on_staff(NOT_ALLOWED),
        "POST": lesson_staff(TO_LESSON),
    },
}


def answer_copy(assessment_id: int, question: int, choice: int) -> str:
    return f"Answer {choice} to question {question} of attempt {assessment_id}"


def stored_content(assessment_id: int) -> dict:
    """Return questions as `_attempt_store_content` keeps them: two groups, two pages."""
    groups = {1: "SLEEP & TIREDNESS", 2: "SLEEP & TIREDNESS", 3: "EXAM ANXIETY"}
    return questions_to_json(
        Question(
            id=f"q-{number}",
            text=f"Question {number} of attempt {assessment_id}",
            group=group,
            display_order=number,
            created=None,
            updated=None,
            answers=[
                Answer(
                    id=f"a-{number}-{choice}",
                    question_id=f"q-{number}",
                    display_order=choice,
                    copy=answer_copy(assessment_id, number, choice),
                    icon="",
                )
                for choice in (1, 2)
            ],
        )
        for number, group in groups.items()
    )


def trait_title(assessment_id: int) -> str:
    return f"The night owl of attempt {assessment_id}"


def make_attempt(learner: Learner, assessment_id: int, *, completed: bool) -> AssessmentAttempt:
    """Store an attempt as the services leave it: in progress (one answer) or with results."""
    now = timezone.now()
    attempt = AssessmentAttempt.objects.create(
        learner=learner,
        assessment_id=assessment_id,
        assessment_version=1,
        target_group="Year 10",
        offer_status="Assessment available",
        title=f"Learning habits check {assessment_id}",
        level="LOA_PARTNER_LEVEL2",
        version=Decimal("1.1"),
        content=stored_content(assessment_id),
        session=f"session-{assessment_id}",
        state=State.COMPLETED if completed else State.IN_PROGRESS,
        started_at=now,
        last_saved_at=now,
        submitted_at=now if completed else None,
        completed_at=now if completed else None,
    )
    for number in (1, 2, 3) if completed else (1,):
        AttemptAnswer.objects.create(
            attempt=attempt, question_id=f"q-{number}", answer_id=f"a-{number}-2"
        )
    if completed:
        result = AssessmentResult.objects.create(
            attempt=attempt,
            loa_score=Decimal("72.35"),
            risk_level="Moderate",
            trait_title=trait_title(assessment_id),
            trait_copy="You do your best thinking late.",
            trait_signs_raw="<ul><li>Tired in the morning</li></ul>",
            trait_signs_html="<ul><li>Tired in the morning</li></ul>",
            trait_tips_raw="<p>Keep a regular bedtime</p><script>x()</script>",
            trait_tips_html="<p>Keep a regular bedtime</p>",
            result_description_raw="<p>Sleep affects your learning.</p>",
            result_description_html="<p>Sleep affects your learning.</p>",
        )
        FocusArea.objects.bulk_create(
            [
                FocusArea(
                    result=result,
                    name=name,
                    needs_help=needs_help,
                    questions_count=count,
                    position=position,
                )
                for position, (name, needs_help, count) in enumerate(
                    [("SLEEP & TIREDNESS", "yes", 2), ("EXAM ANXIETY", "no", 1)]
                )
            ]
        )
    return attempt


@pytest.fixture
def attempts(learner, other_learner) -> dict[Learner, list[AssessmentAttempt]]:
    """Give each learner a completed attempt with results (and a follow-up) and one under way."""
    made = {
        learner: [
            make_attempt(learner, 9101, completed=True),
            make_attempt(learner, 9102, completed=False),
        ],
        other_learner: [
            make_attempt(other_learner, 9201, completed=True),
            make_attempt(other_learner, 9202, completed=False),
        ],
    }
    for completed in (made[learner][0], made[other_learner][0]):
        followup_open_for_result(result=completed.result)
    return made


@pytest.fixture(autouse=True)
def no_upstream():
    """Fail any request that reaches the upstream: access checks come before every call."""
    with responses.RequestsMock(assert_all_requests_are_fired=False) as mock:
        yield mock
        assert not mock.calls, f"the upstream was called: {[c.request.url for c in mock.calls]}"


def private_details(owner: Learner, owner_attempts: list[AssessmentAttempt]) -> list[str]:
    """Return what only the owner and staff may read: name, username, titles and answers."""
    details = [owner.username, owner.display_name]
    for attempt in owner_attempts:
        details.append(attempt.title)
        chosen = dict(attempt.answers.values_list("question_id", "answer_id"))
        for question in attempt.questions:
            if question.id in chosen:
                number = int(question.id.removeprefix("q-"))
                choice = int(chosen[question.id].rsplit("-", 1)[1])
                details.append(answer_copy(attempt.assessment_id, number, choice))
        if attempt.state == State.COMPLETED:
            details.append(trait_title(attempt.assessment_id))
    return details


def object_pk(name: str, owner: Learner) -> int:
    """Return the pk a `<pk>` path takes for this URL: the owner's own object of that kind."""
    if name.startswith("safeguarding:entry_"):
        # A note the DSL wrote today in the owner's safeguarding chronology.
        return ChronologyEntry.objects.get_or_create(
            learner=owner,
            defaults={
                "kind": ChronologyEntry.Kind.NOTE,
                "text": "Seen at break",
                "author": User.objects.get(username="dee.dsl"),
                "author_name": "Dee DSL",
            },
        )[0].pk
    if name.startswith("safeguarding:"):
        # An alert about the owner: they asked to talk to someone.
        return Alert.objects.get_or_create(
            learner=owner,
            kind=Alert.Kind.ASKED,
            defaults={
                "reason": Alert.Reason.ASKED,
                "raised_at": timezone.now(),
                "escalate_at": timezone.now() + timedelta(minutes=30),
            },
        )[0].pk
    if name.startswith("lessons:learner_card"):
        # A learner's card shows their class: back in it if an admin's POST took them out.
        group = (
            SchoolGroup.objects.filter(
                kind=SchoolGroup.Kind.TEACHING_CLASS, memberships__learner=owner
            )
            .distinct()
            .get()
        )
        if not group.memberships.filter(learner=owner, left_at__isnull=True).exists():
            put_in_group(group, owner)
        return owner.pk
    if name.startswith(("classes:", "lessons:")):
        # The owner's teaching class (fixture `school`).
        return (
            SchoolGroup.objects.filter(
                kind=SchoolGroup.Kind.TEACHING_CLASS, memberships__learner=owner
            )
            .distinct()
            .get()
            .pk
        )
    if name.startswith("staff:staff"):
        # Staff accounts belong to the partner: every role tries the same one.
        return User.objects.get(username="tara.teacher").pk
    if name.startswith("followups:"):
        return FollowUp.objects.get(learner=owner, source=FollowUp.Source.RESULT).pk
    if name.startswith("staff:sign_in_lock"):
        # A sign-in lock on the owner's account, as the throttle records one.
        return SignInLock.objects.get_or_create(
            user=owner.user,
            kind=SignInLock.Kind.ACCOUNT,
            defaults={
                "scope_ref": f"account:{owner.pk}",
                "locked_until": timezone.now() + timedelta(minutes=15),
            },
        )[0].pk
    if name.startswith("roster:"):
        # Roster syncs belong to the partner: every role tries the same one, applied.
        return RosterSync.objects.get_or_create(
            filename="oneroster.zip",
            defaults={"state": RosterSync.State.APPLIED, "origin": RosterSync.Origin.UPLOAD},
        )[0].pk
    if name.startswith("imports:"):
        # Import jobs belong to the partner, not to a learner: every role tries the same one.
        return ImportJob.objects.get_or_create(
            filename="class-7b.csv",
            defaults={"state": ImportJob.State.FINISHED, "created_at": timezone.now()},
        )[0].pk
    return owner.pk


def stored_file_digest(name: str) -> str:
    """Return the digest of a ready answer picture or recording (they hold no one's data)."""
    digest = "a" * 64
    if name == "pictures:picture":
        Picture.objects.get_or_create(
            address_hash="b" * 64,
            defaults={"address": "https://upstream.example/icon.png", "state": "ready",
                      "image": b"\x89PNG", "content_type": "image/png", "digest": digest},
        )  # fmt: skip
    else:
        Recording.objects.get_or_create(
            text_hash="b" * 64,
            defaults={"text": "Never", "language": "en-gb", "state": "ready",
                      "audio": b"RIFF", "content_type": "audio/wav", "digest": digest},
        )  # fmt: skip
    return digest


def card_session_of(owner: Learner) -> CardSession:
    """Return a live card session of the owner's, in an open window of their class."""
    group = (
        SchoolGroup.objects.filter(kind=SchoolGroup.Kind.TEACHING_CLASS, memberships__learner=owner)
        .distinct()
        .get()
    )
    learner_card_print(learner=owner, group_name=group.name, printed_by=None, address=None)
    card = SignInCard.objects.get(learner=owner, voided_at__isnull=True)
    window = SignInWindow.objects.filter(group=group, closed_at__isnull=True).first()
    if window is None:
        window = SignInWindow.objects.create(
            group=group, closes_at=timezone.now() + timedelta(minutes=30)
        )
    return CardSession.objects.get_or_create(
        card=card, ended_at=None, defaults={"learner": owner, "window": window}
    )[0]


def paths_for(
    name: str, params: list[str], owner: Learner, owner_attempts: list[AssessmentAttempt]
) -> list[str]:
    """Fill the URL's parameters with the owner's objects: one path per attempt if it takes one."""
    chosen: list[AssessmentAttempt | None] = (
        list(owner_attempts) if {"assessment_id", "attempt_pk"} & set(params) else [None]
    )
    paths = []
    for attempt in chosen:
        values = {
            "pk": object_pk(name, owner),
            "number": 1,
            "learner_pk": owner.pk,
            "provider_id": "oidc",  # no provider is set up here: a 404 for everyone
        }
        if "session_pk" in params:
            values["session_pk"] = card_session_of(owner).pk
        if "digest" in params:
            values["digest"] = stored_file_digest(name)
        if attempt is not None:
            values["assessment_id"] = attempt.assessment_id
            values["attempt_pk"] = attempt.pk
        unknown = set(params) - set(values)
        if unknown:
            pytest.fail(f"{name}: the matrix has no value for path parameter(s) {sorted(unknown)}")
        paths.append(reverse(name, kwargs={param: values[param] for param in params}))
    return paths


def describe(response, path: str) -> str:
    """Name a response the way the EXPECTED table does."""
    if response.status_code in (301, 302):
        # allauth's views quote the address they come back to; the portal's do not.
        if response.url in (f"{LOGIN_URL}?next={path}", f"{LOGIN_URL}?next={quote(path, safe='')}"):
            return SIGN_IN
        # Import jobs get new ids in each test: the table names the job page by its role.
        location = re.sub(r"^/learners/import/\d+/$", "/learners/import/<job>/", response.url)
        location = re.sub(r"^/learners/\d+/card/$", "/learners/<learner>/card/", location)
        location = re.sub(r"^/roster/\d+/", "/roster/<sync>/", location)
        location = re.sub(r"^/learners/\d+/$", "/learners/<learner>/", location)
        location = re.sub(r"^/safeguarding/alerts/\d+/$", "/safeguarding/alerts/<alert>/", location)
        return "-> " + re.sub(r"^/classes/\d+/", "/classes/<class>/", location)
    if response.status_code == 500 and getattr(response, "exc_info", None):
        error = response.exc_info[1]
        return f"500 ({type(error).__name__}: {error})"
    return str(response.status_code)


def is_own_page(url: str, own_ids: set[int]) -> bool:
    """Return whether a URL is one of the requester's own /me/ pages."""
    if not url.startswith("/me/"):
        return False
    match = re.match(r"/me/assessments/(\d+)/", url)
    return match is None or int(match[1]) in own_ids


def request_and_judge(
    client: Client, method: str, path: str, expected: str, own_ids: set[int]
) -> tuple[str, bool, list[bytes]]:
    """Make the request; return what it got, whether that matches, and every body seen."""
    response = getattr(client, method.lower())(path)
    bodies = [response.getvalue()]  # streamed downloads (CSV) have no .content
    actual = describe(response, path)
    if expected != MINE:
        return actual, actual == expected, bodies

    steps = [actual] if response.status_code in (301, 302) else []
    while response.status_code in (301, 302) and is_own_page(response.url, own_ids):
        if len(steps) > 5:
            return " ".join([*steps, "(redirect loop)"]), False, bodies
        location = response.url
        response = client.get(location)
        bodies.append(response.getvalue())
        steps.append(describe(response, location))
    actual = " ".join(steps) if steps else actual
    # A form re-shown with errors (submit with unanswered questions) answers 400; an answer
    # saved to an attempt already sent, 409.
    allowed = {OK, "400", "409"} if method == "POST" and not steps else {OK}
    return actual, describe(response, path) in allowed, bodies


@pytest.fixture
def school(learner, other_learner) -> dict[str, User]:
    """Two classes, a year group and the staff of each; the learner and other learner apart.

    The learner is in class 10A (taught by Tara) and year group Year 10 (led by Hugo); the
    other learner is in class 10B (taught by Tom) only.
    """
    class_a, class_b = make_group("10A"), make_group("10B")
    year = make_group("Year 10", kind=SchoolGroup.Kind.YEAR_GROUP)
    put_in_group(class_a, learner)
    put_in_group(class_b, other_learner)
    put_in_group(year, learner)
    return {
        "admin": make_staff("ada.admin", role=StaffRole.ADMIN),
        "teacher_a": make_staff("tara.teacher", role=StaffRole.TEACHER, groups=[class_a]),
        "teacher_b": make_staff("tom.teacher", role=StaffRole.TEACHER, groups=[class_b]),
        "head_of_year": make_staff("hugo.hoy", role=StaffRole.HEAD_OF_YEAR, groups=[year]),
        "dsl": make_staff("dee.dsl", role=StaffRole.DSL),
    }


def column_for(person: str, owner: Learner, learners: list[Learner]) -> str:
    """Return the matrix column of a person towards the learner whose objects fill the path."""
    owns = owner == learners[0]  # the learner (class 10A, Year 10); else the other learner
    if person == "teacher_a":
        return "teacher" if owns else "other_teacher"
    if person == "teacher_b":
        return "other_teacher" if owns else "teacher"
    if person == "head_of_year":
        return "head_of_year" if owns else "other_head_of_year"
    return person


def results_of(owner: Learner, owner_attempts: list[AssessmentAttempt]) -> list[str]:
    """Return what only readers of results may see: the trait titles and chosen answers."""
    return [
        detail
        for detail in private_details(owner, owner_attempts)
        if detail not in (owner.username, owner.display_name)
        and not any(detail == attempt.title for attempt in owner_attempts)
    ]


# Columns that see the owner's record but not their results (the partner's defaults).
RECORD_WITHOUT_RESULTS = {"admin", "superuser", "teacher"}
# Columns for whom the owner is a learner of another group: nothing of them may show.
OTHER_GROUP = {"other_teacher", "other_head_of_year"}


@pytest.mark.parametrize("person", PEOPLE)
def test_every_portal_url_answers_each_role_as_the_design_says(
    person, attempts, learner, other_learner, superuser, school
):
    people = {"learner": learner.user, "other_learner": other_learner.user}
    people |= {"superuser": superuser, "anonymous": None, **school}
    requester = people[person]
    learners = [learner, other_learner]
    rows: list[str] = []
    failures: list[str] = []

    for owner in learners:
        own_ids: set[int] = set()
        if person in ("learner", "other_learner"):
            column = "learner" if requester == owner.user else "other_learner"
            me = next(someone for someone in learners if someone.user == requester)
            own_ids = {attempt.assessment_id for attempt in attempts[me]}
            forbidden = [
                detail
                for someone in learners
                if someone != me
                for detail in private_details(someone, attempts[someone])
            ]
        else:
            column = column_for(person, owner, learners)
            forbidden = []
            if person == "anonymous":
                forbidden = [
                    d for someone in learners for d in private_details(someone, attempts[someone])
                ]
            elif column in OTHER_GROUP:
                forbidden = private_details(owner, attempts[owner])
            elif column in RECORD_WITHOUT_RESULTS:
                forbidden = results_of(owner, attempts[owner])

        for name, params in portal_urls():
            for path in paths_for(name, params, owner, attempts[owner]):
                for method in ("GET", "POST"):
                    expected = getattr(EXPECTED[name][method], column) if name in EXPECTED else "?"
                    client = Client(raise_request_exception=False)
                    if requester is not None:
                        client.force_login(requester)
                    actual, ok, bodies = request_and_judge(client, method, path, expected, own_ids)
                    leaks = [d for d in forbidden if any(d.encode() in body for body in bodies)]
                    ok = ok and not leaks
                    line = (
                        f"{'ok ' if ok else 'BAD'} {column:<18} {method:<4} {path:<38} "
                        f"expected {expected:<20} got {actual}"
                        + (f"  LEAKS {leaks}" if leaks else "")
                    )
                    rows.append(line)
                    if not ok:
                        failures.append(f"{name}: {line}")

    print(f"\n--- {person} (requests as {requester or 'nobody'}) ---")
    print("\n".join(rows))
    assert not failures, "\n".join(failures)


def test_the_matrix_knows_every_url_of_the_portal():
    names = [name for name, _params in portal_urls()]
    print("\nURL name                     method " + " ".join(f"{c:<18}" for c in COLUMNS))
    for name, methods in EXPECTED.items():
        for method, row in methods.items():
            cells = " ".join(f"{getattr(row, column):<18}" for column in COLUMNS)
            print(f"{name:<28} {method:<6} {cells}")

    assert len(names) == len(set(names)), "two URL patterns share a name"
    assert set(names) == set(EXPECTED), (
        f"patterns the matrix does not know: {sorted(set(names) - set(EXPECTED))}; "
        f"table entries with no pattern: {sorted(set(EXPECTED) - set(names))}"
    )


def test_a_learner_cannot_change_another_learners_answers(learner_client, attempts, other_learner):
    open_attempt = attempts[other_learner][1]
    before = dict(open_attempt.answers.values_list("question_id", "answer_id"))

    response = learner_client.post(
        f"/me/assessments/{open_attempt.assessment_id}/page/1/", {"q-1": "a-1-1", "q-2": "a-2-1"}
    )

    assert response.status_code == 404
    assert dict(open_attempt.answers.values_list("question_id", "answer_id")) == before


def test_a_learner_posting_a_page_with_no_fields_gets_the_page_back_not_an_error(learner, attempts):
    # A POST that passes the CSRF check by header (as an autosave script would send it)
    # can carry no form fields at all.
    client = Client(enforce_csrf_checks=True)
    client.force_login(learner.user)
    page = "/me/assessments/9102/page/1/"
    client.get(page)

    response = client.post(page, headers={"X-CSRFToken": client.cookies["csrftoken"].value})

    assert response.status_code == 200


# The admin is Django's own: superusers only.

ADMIN_MODELS = [
    (Learner, "learners", "learner"),
    (AssessmentAttempt, "assessments", "assessmentattempt"),
    (AttemptAnswer, "assessments", "attemptanswer"),
    (AssessmentResult, "assessments", "assessmentresult"),
    (FocusArea, "assessments", "focusarea"),
]


def test_anonymous_is_sent_to_the_admin_login(client):
    response = client.get("/admin/")

    assert response.status_code == 302
    assert response.url == "/admin/login/?next=/admin/"


@pytest.mark.parametrize("person", ["learner", "staff"])
def test_learners_and_partner_staff_cannot_reach_the_admin(client, request, attempts, person):
    user = request.getfixturevalue(person)
    client.force_login(user.user if isinstance(user, Learner) else user)

    for path in ["/admin/", "/admin/learners/learner/", "/admin/assessments/assessmentattempt/"]:
        response = client.get(path)
        assert response.status_code == 302, path
        assert response.url == f"/admin/login/?next={path}"


def test_superuser_sees_the_admin_index_every_changelist_and_every_record(
    client, superuser, attempts
):
    client.force_login(superuser)
    assert client.get("/admin/").status_code == 200

    for model, app, model_name in ADMIN_MODELS:
        changelist = reverse(f"admin:{app}_{model_name}_changelist")
        assert client.get(changelist).status_code == 200, changelist
        records = list(model.objects.all())
        assert records, f"no {model_name} to open"
        for record in records:
            change = reverse(f"admin:{app}_{model_name}_change", args=[record.pk])
            response = client.get(change)
            assert response.status_code == 200, change


# The start page sends each role to its place.


@pytest.mark.parametrize("person", ["staff", "superuser"])
def test_home_sends_staff_to_the_cohort_dashboard(client, request, person):
    client.force_login(request.getfixturevalue(person))

    response = client.get("/")

    assert response.status_code == 302
    assert response.url == "/dashboard/"


def test_home_sends_a_learner_to_their_assessments(learner_client):
    response = learner_client.get("/")

    assert response.status_code == 302
    assert response.url == "/me/"


def test_home_sends_anonymous_to_the_login_page(client):
    response = client.get("/")

    assert response.status_code == 302
    assert response.url == LOGIN_URL


def test_home_tells_a_user_with_neither_role_they_cannot_use_the_portal(client, db):
    client.force_login(User.objects.create_user("nobody.special", password="x"))

    response = client.get("/")

    assert response.status_code == 403
    assert b"cannot use this portal" in response.content


def test_home_tells_a_learner_whose_registration_never_completed_they_cannot_use_it(client, db):
    pending = make_learner("pat.pending", "u-pat")
    pending.status = Learner.Status.PENDING
    pending.save()
    client.force_login(pending.user)

    response = client.get("/")

    assert response.status_code == 403
    assert b"cannot use this portal" in response.content
    assert client.get("/me/").status_code == 404


# Signing out.


@pytest.mark.parametrize("person", ["staff", "learner"])
def test_it_signs_out_by_post(client, request, person):
    user = request.getfixturevalue(person)
    client.force_login(user.user if isinstance(user, Learner) else user)
    home = client.get("/", follow=True)
    assert b'<form method="post" action="/accounts/logout/"' in home.content

    response = client.post("/accounts/logout/")

    assert response.status_code == 302
    assert response.url == LOGIN_URL
    assert client.get("/").url == LOGIN_URL
    assert "You have signed out." in client.get(LOGIN_URL).content.decode()


def test_signing_out_by_get_only_asks_to_confirm_and_keeps_the_session(staff_client):
    response = staff_client.get("/accounts/logout/")

    assert response.status_code == 200
    assert b'<form method="post" action="/accounts/logout/">' in response.content
    assert staff_client.get("/learners/").status_code == 200


def test_a_learner_account_put_in_the_staff_group_still_sees_no_staff_page(client, learner):
    learner.user.groups.add(Group.objects.get_or_create(name=STAFF_GROUP)[0])
    client.force_login(learner.user)

    assert client.get("/learners/").status_code == 404
    assert client.get("/dashboard/").status_code == 404
    assert client.get("/").url == "/me/"


@pytest.mark.parametrize("address", ["/no-such-page/", "/dashboard/", "/learners/999999/"])
def test_with_debug_on_a_missing_page_is_the_portals_own_not_djangos_debug_page(
    learner_client, settings, address
):
    # `make run` has DEBUG on: a learner trying a staff address (or a mistyped one) must not
    # meet Django's page listing every URL pattern, but the one production shows.
    settings.DEBUG = True
    response = learner_client.get(address)
    assert response.status_code == 404
    page = response.content.decode()
    assert "<h1>Page not found</h1>" in page
    assert "URLconf" not in page and "DEBUG = True" not in page
    assert 'href="#main"' in page  # the portal's layout: skip link, navigation
