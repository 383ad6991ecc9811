"""A tour of the portal: a page in each state, who visits it, and how to reach it in a browser."""

from collections.abc import Callable, Iterator
from dataclasses import dataclass

from django.utils import timezone

from accounts.models import StaffRole
from classes.models import GroupMembership
from imports.services import import_job_create_from_csv
from learners.models import Level
from lessons.models import CardRefusal, CardSession, SignInCard
from lessons.services import group_cards_print, window_open
from tests.browsing import browser_sign_in, fill_date
from tests.factories import (
    GOOD_PASSWORD,
    HEADER,
    SLEEP,
    cohort_learner,
    completed,
    flagged,
    good_rows,
    make_attempt,
    make_group,
    make_result,
    make_staff,
    put_in_group,
    upload_file,
)


@dataclass(frozen=True)
class Stop:
    """One page in one state: a name for the screenshot and how to get there."""

    name: str
    path: str
    then: Callable | None = None  # what to do on the page to reach the state, such as submit
    status: int = 200  # what the path itself answers (a page of an error answers its code)


def submit_without_browser_checks(page, selector: str = "main button[type=submit]") -> None:
    """Submit the main form as it is, past the browser's own `required` checks, to see ours."""
    page.eval_on_selector("main form", "form => { form.noValidate = true; }")
    page.click(selector)
    page.wait_for_load_state()


def register_without_a_month(page) -> None:
    """Type a date of birth without its month, to reach the error on one of its three boxes."""
    fill_date(page, "dob", 27, "", 2009)
    submit_without_browser_checks(page)


def fill_bad_email(page) -> None:
    """Save a learner's details with an email address that is not one, to see the error."""
    page.fill("#id_email", "not-an-email")
    submit_without_browser_checks(page)


def make_a_password(page) -> None:
    """Have the portal make a learner's new password: the record then shows it, once."""
    page.check("#id_make_password")
    page.click("main button[type=submit]")
    page.wait_for_load_state()
    assert page.is_visible(".password-made")


def fill_wrong_password(page) -> None:
    """Try to sign in as nobody, to reach the sign-in page's error."""
    page.fill("#id_username", "nobody.here")
    page.fill("#id_password", "not-the-password")
    submit_without_browser_checks(page)


# The pages of someone not signed in.
ANONYMOUS = [
    Stop("login", "/accounts/login/"),
    Stop("login-error", "/accounts/login/", fill_wrong_password),
]


def staff_stops(
    *, trend_pk: int, followup_pk: int, import_pk: int, new_password_pk: int
) -> list[Stop]:
    """Return the staff pages fill_portal gives something to show."""
    return [
        Stop("dashboard", "/dashboard/"),
        Stop("dashboard-filter-error", "/dashboard/?from=2026-09-30&to=2026-09-01"),
        Stop("learner-list-empty", "/learners/?q=nobody-by-that-name"),
        Stop("learner-list", "/learners/"),
        Stop("learner-list-filtered", "/learners/?status=completed&needs_help=yes&sort=risk"),
        Stop("learner-detail-trend", f"/learners/{trend_pk}/"),
        Stop("learner-edit", f"/learners/{trend_pk}/edit/"),
        Stop("learner-edit-errors", f"/learners/{trend_pk}/edit/", fill_bad_email),
        Stop("password-made", f"/learners/{new_password_pk}/password/", make_a_password),
        Stop("register-errors", "/learners/new/", submit_without_browser_checks),
        Stop("register-date-error", "/learners/new/", register_without_a_month),
        Stop("dashboard-date-error", "/dashboard/?from_day=31&from_month=2&from_year=2026"),
        Stop("followup-queue", "/follow-ups/"),
        Stop("followup-item", f"/follow-ups/{followup_pk}/"),
        Stop("import-upload", "/learners/import/"),
        Stop("import-preview-bad-rows", f"/learners/import/{import_pk}/"),
        Stop("import-list", "/learners/imports/"),
        Stop("operations", "/operations/"),
    ]


# The pages of the learner fill_portal gives an attempt (41) and results (42).
LEARNER = [
    Stop("my-assessments", "/me/"),
    Stop("question", "/me/assessments/41/page/1/"),
    Stop(
        "question-error",
        "/me/assessments/41/page/1/",
        lambda page: submit_without_browser_checks(page, "main button[name=continue]"),
    ),
    Stop("check-answers", "/me/assessments/41/check/"),
    Stop("results", "/me/assessments/42/results/"),
    Stop("my-privacy", "/me/privacy/"),
]


def add_another_level(page) -> None:
    """Tick the one learner found (of another level than the class) and add them: asked first."""
    form = "main form[action$='/learners/']"
    page.check(f"{form} input[name=learners]")
    page.click(f"{form} button[type=submit]")
    page.wait_for_load_state()
    assert page.is_visible("text=Nobody has been added yet.")


def school_stops(*, group_pk: int, teacher_pk: int) -> list[Stop]:
    """Return the admin's pages: classes, staff accounts, settings."""
    return [
        Stop("classes", "/classes/"),
        Stop("class-new-errors", "/classes/new/", submit_without_browser_checks),
        Stop("class", f"/classes/{group_pk}/"),
        Stop("class-find-learners", f"/classes/{group_pk}/?q=pupil"),
        Stop("class-add-other-level", f"/classes/{group_pk}/?q=nico", add_another_level),
        Stop("class-edit", f"/classes/{group_pk}/edit/"),
        Stop("staff-accounts", "/staff/"),
        Stop("staff-new-errors", "/staff/new/", submit_without_browser_checks),
        Stop("staff-edit", f"/staff/{teacher_pk}/"),
        Stop("settings", "/settings/"),
    ]


def teacher_stops(*, group_pk: int, closed_group_pk: int, learner_pk: int) -> list[Stop]:
    """Return a teacher's pages: their classes (one in a lesson), a learner, sign-in cards."""
    return [
        Stop("teacher-dashboard", "/dashboard/"),
        Stop("teacher-classes", "/classes/"),
        Stop("teacher-class-lesson", f"/classes/{group_pk}/"),
        Stop("teacher-class-closed", f"/classes/{closed_group_pk}/"),
        Stop("teacher-board", f"/classes/{group_pk}/board/"),
        Stop("teacher-board-closed", f"/classes/{closed_group_pk}/board/"),
        Stop("teacher-learner", f"/learners/{learner_pk}/"),
        Stop("teacher-cards", f"/classes/{group_pk}/cards/"),
        Stop("teacher-learner-card", f"/learners/{learner_pk}/card/"),
    ]


def type_card_code(code: str) -> Callable:
    """Type a card's code on /card/ and press Enter, as a pupil without a camera does."""

    def typing(page) -> None:
        page.fill("#id_code", code)
        page.press("#id_code", "Enter")
        page.wait_for_load_state()

    return typing


def card_stops(*, code: str) -> list[Stop]:
    """Return the card sign-in pages: the page, a typing error, a refusal, "That's me"."""
    return [
        Stop("card", "/card/"),
        Stop("card-code-error", "/card/", type_card_code("AB")),
        Stop("card-refused", "/card/", type_card_code("AAAAA-AAAAA")),
        Stop("card-thats-me", "/card/", type_card_code(code)),
    ]


def fill_school(*, learner, other_learner) -> list[tuple[object, list[Stop]]]:
    """Make a class with a teacher, a former member and an admin; return their visits."""
    group = make_group("7B")
    put_in_group(group, learner, other_learner)
    leaver = cohort_learner(name="lena.leaver")
    GroupMembership.objects.create(group=group, learner=leaver, left_at=timezone.now())
    # Outside the class, found by the admin's search: primary, so adding them to 7B asks first.
    cohort_learner(name="nico.pupil", level=Level.PRIMARY)
    closed = make_group("3P", level=Level.PRIMARY)
    teacher = make_staff("tara.teacher", role=StaffRole.TEACHER, groups=[group, closed])
    admin = make_staff("ada.admin", role=StaffRole.ADMIN)
    # 7B is in a lesson: the learner came in by card, and their card was refused elsewhere.
    window = window_open(group=group, minutes=30, opened_by=teacher, address=None)
    cards = group_cards_print(
        group=group, learners=[learner, other_learner], printed_by=teacher, address=None
    )
    card = SignInCard.objects.get(learner=learner, voided_at__isnull=True)
    CardSession.objects.create(
        card=card, learner=learner, window=window, device="Chrome on a Chromebook"
    )
    CardRefusal.objects.create(card=card, learner=learner, window=window, device="an iPad")
    return [
        (admin, school_stops(group_pk=group.pk, teacher_pk=teacher.pk)),
        (
            teacher,
            teacher_stops(
                group_pk=group.pk, closed_group_pk=closed.pk, learner_pk=other_learner.pk
            ),
        ),
        (None, card_stops(code=cards[1].code)),
    ]


def fill_portal(*, staff, learner, other_learner) -> list[tuple[object, list[Stop]]]:
    """Put something on every page; return who visits which pages (None: a visitor)."""
    make_attempt(learner, assessment_id=41)
    make_result(make_attempt(learner, assessment_id=42, state="submitted"))
    for day, score, risk in [("2026-09-10", "40.25", "HIGH"), ("2026-10-10", "71.5", "LOW")]:
        completed(other_learner, day, score=score, risk=risk)
    followup = flagged(other_learner, SLEEP)
    bad_rows = (
        "bad name!,plum-kettle-river-42,2010-01-02,,,,\n"
        f"email.bad,{GOOD_PASSWORD},2010-01-02,not-an-email,,,\n"
    )
    job = import_job_create_from_csv(
        file=upload_file(HEADER + "\n" + good_rows(2) + bad_rows), created_by=staff
    )
    # Someone nobody signs in as in the tour, whose password staff have made anew.
    forgetful = cohort_learner(name="fran.forgetful")
    staff_visits = staff_stops(
        trend_pk=other_learner.pk,
        followup_pk=followup.pk,
        import_pk=job.pk,
        new_password_pk=forgetful.pk,
    )
    return [
        (None, ANONYMOUS),
        (staff, staff_visits),
        (learner.user, LEARNER),
        *fill_school(learner=learner, other_learner=other_learner),
    ]


def visit_as(page, base: str, user, stops: list[Stop]) -> Iterator:
    """Sign the user in (unless None), then reach each stop in turn; yield (stop, page)."""
    if user is not None:
        browser_sign_in(page, base, user.username)
    for stop in stops:
        response = page.goto(base + stop.path)
        assert response.status == stop.status, f"{stop.name}: {response.status} {page.url}"
        if stop.then:
            stop.then(page)
        yield stop, page
