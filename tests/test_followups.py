"""Needs-help follow-up: from a flag in a learner's results to a person who acts on it."""

import importlib
import re
from datetime import timedelta

import pytest
from django.apps import apps as django_apps
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from django.utils.formats import date_format

from assessments.delivery import attempt_submit
from assessments.models import AssessmentAttempt, AssessmentResult
from assessments.signals import result_stored
from audit.models import AuditEvent
from followups.models import FollowUp, FollowUpHistory, FollowUpNote
from followups.services import (
    followup_open_for_result,
    followup_update,
    followups_open_missing,
)
from learners.models import Learner, Level
from privacy.holds import records_hold_lift
from privacy.services import learner_erase
from tests.factories import (
    FOCUS,
    SLEEP,
    STRESS,
    complete_attempt,
    flagged,
    make_learner,
    make_staff,
)
from tests.journeys import ready_to_send, register_pupil

State = AssessmentAttempt.State
Status = FollowUp.Status


def item_links(page: str) -> list[str]:
    return re.findall(r'href="/follow-ups/\d+/"', page)


def queue_rows(client, query: str = "") -> str:
    response = client.get(f"/follow-ups/{query}")
    assert response.status_code == 200
    assert "<h1>Follow-ups</h1>" in response.content.decode()
    return response.content.decode()


# Opening items ---------------------------------------------------------------------------------


def test_a_result_flagging_a_focus_area_opens_a_follow_up_due_after_the_set_days(learner, settings):
    settings.FOLLOW_UP_DUE_DAYS = 10

    result = complete_attempt(learner, {SLEEP: "yes", FOCUS: "no", STRESS: "Somewhat"},
                              risk_level="HIGH")  # fmt: skip

    item = FollowUp.objects.get()
    assert item.learner == learner and item.attempt == result.attempt
    assert [area.name for area in item.areas.all()] == [SLEEP, STRESS]
    assert item.risk_level == "HIGH"
    assert item.status == Status.NEW and item.assignee is None
    assert item.due_date == timezone.localdate() + timedelta(days=10)


def test_a_result_where_every_area_says_no_in_any_case_opens_nothing(learner):
    complete_attempt(learner, {SLEEP: "no", FOCUS: "NO", STRESS: " No "})

    assert not FollowUp.objects.exists()
    # The same delivery with one area flagged does open one: nothing was missed on the way.
    flagged_result = complete_attempt(learner, {SLEEP: "no", FOCUS: "yes", STRESS: " No "})
    assert FollowUp.objects.get().attempt == flagged_result.attempt


def test_opening_again_for_the_same_attempt_keeps_one_item(learner):
    result = complete_attempt(learner, {SLEEP: "yes"})

    again = followup_open_for_result(result=result)
    result_stored.send(sender=AssessmentResult, result=result)

    assert FollowUp.objects.get() == again
    assert again.areas.count() == 1


def test_each_completed_attempt_of_a_learner_opens_its_own_item(learner):
    complete_attempt(learner, {SLEEP: "yes"})
    complete_attempt(learner, {FOCUS: "yes"})

    assert FollowUp.objects.filter(learner=learner).count() == 2


def test_results_stored_before_follow_ups_existed_get_their_items(learner, other_learner):
    complete_attempt(learner, {SLEEP: "yes"}, signal=False)
    complete_attempt(other_learner, {SLEEP: "no"}, signal=False)

    assert followups_open_missing() == 1
    assert followups_open_missing() == 0
    assert FollowUp.objects.get().learner == learner


@pytest.mark.backend  # a data migration
def test_the_backfill_migration_opens_items_for_earlier_results_dated_from_their_arrival(
    learner, settings
):
    settings.FOLLOW_UP_DUE_DAYS = 7
    result = complete_attempt(learner, {FOCUS: "yes"}, signal=False)
    long_ago = timezone.now() - timedelta(days=30)
    AssessmentResult.objects.filter(pk=result.pk).update(received_at=long_ago)
    migration = importlib.import_module(
        "followups.migrations.0002_open_follow_ups_for_earlier_results"
    )

    migration.open_missing(django_apps, None)
    migration.open_missing(django_apps, None)

    item = FollowUp.objects.get()
    assert [area.name for area in item.areas.all()] == [FOCUS]
    assert item.due_date == timezone.localdate(long_ago) + timedelta(days=7)
    assert item.is_overdue


def test_a_learner_who_completes_an_assessment_through_the_upstream_is_followed_up(
    client, staff, upstream
):
    pupil = register_pupil(staff)
    attempt = ready_to_send(client, pupil)  # the first answer everywhere

    attempt_submit(attempt=attempt)

    result = AssessmentResult.objects.get(attempt=attempt)
    needing_help = [area.name for area in result.areas_needing_help]
    assert needing_help, "the journey's answers are expected to flag some area"
    item = FollowUp.objects.get(attempt=attempt)
    assert [area.name for area in item.areas.all()] == needing_help
    assert item.risk_level == result.risk_level


# The queue --------------------------------------------------------------------------------------


def test_learners_get_not_found_and_visitors_are_sent_to_sign_in(learner, learner_client):
    item = flagged(learner, SLEEP)

    assert learner_client.get("/follow-ups/").status_code == 404
    assert learner_client.get(f"/follow-ups/{item.pk}/").status_code == 404
    assert learner_client.post(f"/follow-ups/{item.pk}/", {"status": "resolved"}).status_code == 404
    learner_client.logout()
    response = learner_client.get(f"/follow-ups/{item.pk}/")
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]


@pytest.mark.backend  # list query
def test_the_queue_shows_open_items_by_default_with_what_each_row_needs(
    staff_client, learner, other_learner
):
    open_item = flagged(learner, SLEEP, STRESS, risk_level="HIGH")
    FollowUp.objects.filter(pk=open_item.pk).update(due_date=timezone.localdate() - timedelta(1))
    resolved = flagged(other_learner, FOCUS)
    FollowUp.objects.filter(pk=resolved.pk).update(status=Status.RESOLVED)

    page = queue_rows(staff_client)

    assert f'href="/learners/{learner.pk}/"' in page
    assert f"{SLEEP}, {STRESS}".replace("&", "&amp;") in page
    assert "HIGH" in page and "New" in page and "Unassigned" in page
    assert "Overdue" in page
    assert f'href="/follow-ups/{open_item.pk}/"' in page
    assert other_learner.display_name not in page
    assert other_learner.display_name in queue_rows(staff_client, "?status=all")
    assert learner.display_name not in queue_rows(staff_client, "?status=resolved")


@pytest.mark.backend  # list query
def test_staff_filter_by_assignee_including_me_and_unassigned(
    staff_client, staff, learner, other_learner
):
    colleague = make_staff("cat.colleague")
    third = make_learner("tia.third", "u-tia")
    FollowUp.objects.filter(pk=flagged(learner, SLEEP).pk).update(assignee=staff)
    FollowUp.objects.filter(pk=flagged(other_learner, SLEEP).pk).update(assignee=colleague)
    flagged(third, SLEEP)

    mine = queue_rows(staff_client, "?assignee=me")
    unassigned = queue_rows(staff_client, "?assignee=none")
    colleagues = queue_rows(staff_client, f"?assignee={colleague.pk}")

    assert learner.display_name in mine and other_learner.display_name not in mine
    assert third.display_name in unassigned and learner.display_name not in unassigned
    assert other_learner.display_name in colleagues and third.display_name not in colleagues


def staff_option(page: str, select_name: str, user) -> str:
    """Return the label of a member of staff in a page's <select name=...>."""
    select = re.search(rf'<select name="{select_name}".*?</select>', page, re.DOTALL).group()
    return re.search(rf'<option value="{user.pk}"[^>]*>([^<]*)</option>', select).group(1)


def test_the_filter_and_the_assign_menu_name_each_member_of_staff_the_same_way(
    staff_client, learner
):
    named = make_staff("cat.colleague")
    named.first_name, named.last_name = "Cat", "Colleague"
    named.save()
    unnamed = make_staff("dev.nameless")
    item = flagged(learner, SLEEP)

    queue = queue_rows(staff_client)
    detail = staff_client.get(f"/follow-ups/{item.pk}/").content.decode()

    assert staff_option(queue, "assignee", named) == "Cat Colleague"
    assert staff_option(detail, "assignee", named) == "Cat Colleague"
    assert staff_option(queue, "assignee", unnamed) == "dev.nameless"
    assert staff_option(detail, "assignee", unnamed) == "dev.nameless"


@pytest.mark.backend  # ordering
def test_two_members_of_staff_with_one_name_are_told_apart_by_username(staff_client, learner):
    twins = [make_staff(username) for username in ("sam.smith", "sam.smith2")]
    for twin in twins:
        twin.first_name, twin.last_name = "Sam", "Smith"
        twin.save()
    item = flagged(learner, SLEEP)

    queue = queue_rows(staff_client)
    detail = staff_client.get(f"/follow-ups/{item.pk}/").content.decode()

    for page in (queue, detail):
        names = [staff_option(page, "assignee", twin) for twin in twins]
        assert names == ["Sam Smith (sam.smith)", "Sam Smith (sam.smith2)"]


@pytest.mark.backend  # list query
def test_staff_filter_by_focus_area_risk_level_level_and_overdue(
    staff_client, learner, other_learner
):
    Learner.objects.filter(pk=other_learner.pk).update(level=Level.PRIMARY)
    sleepy = flagged(learner, SLEEP, risk_level="HIGH")
    flagged(other_learner, FOCUS, risk_level="LOW")
    FollowUp.objects.filter(pk=sleepy.pk).update(due_date=timezone.localdate() - timedelta(1))

    by_area = queue_rows(staff_client, "?area=" + FOCUS.replace("&", "%26"))
    by_risk = queue_rows(staff_client, "?risk_level=HIGH")
    by_level = queue_rows(staff_client, f"?level={Level.PRIMARY}")
    overdue = queue_rows(staff_client, "?overdue=on")

    assert other_learner.display_name in by_area and learner.display_name not in by_area
    assert learner.display_name in by_risk and other_learner.display_name not in by_risk
    assert other_learner.display_name in by_level and learner.display_name not in by_level
    assert learner.display_name in overdue and other_learner.display_name not in overdue


@pytest.mark.backend  # ordering
def test_the_queue_sorts_by_due_date_newest_or_risk_level(staff_client, learner, other_learner):
    third = make_learner("tia.third", "u-tia")
    low = flagged(learner, SLEEP, risk_level="LOW")
    high = flagged(other_learner, SLEEP, risk_level="HIGH")
    moderate = flagged(third, SLEEP, risk_level="MODERATE")
    today = timezone.localdate()
    FollowUp.objects.filter(pk=low.pk).update(due_date=today + timedelta(2))
    FollowUp.objects.filter(pk=high.pk).update(due_date=today + timedelta(9))
    FollowUp.objects.filter(pk=moderate.pk).update(due_date=today + timedelta(5))

    def order(query: str) -> list[str]:
        page = queue_rows(staff_client, query)
        names = [learner.display_name, other_learner.display_name, third.display_name]
        return sorted(names, key=page.index)

    lee, olive, tia = learner.display_name, other_learner.display_name, third.display_name
    # A HIGH risk level is a priority (a safeguarding alert went out): first in every sort.
    assert order("") == [olive, lee, tia]
    assert order("?sort=risk") == [olive, tia, lee]
    assert order("?sort=newest") == [olive, tia, lee]


def test_an_unknown_filter_value_is_ignored_rather_than_an_error(staff_client, learner):
    flagged(learner, SLEEP)

    page = queue_rows(staff_client, "?status=bogus&sort=sideways&assignee=x&area=nowhere&level=L9")

    assert learner.display_name in page


@pytest.mark.backend  # list query
def test_the_queue_pages_by_25(staff_client, staff):
    for number in range(27):
        flagged(make_learner(f"p{number:02d}.pupil", f"u-{number}"), SLEEP)

    first = queue_rows(staff_client)
    second = queue_rows(staff_client, "?page=2")

    assert "27 items" in first and "Page 1 of 2" in first
    assert len(item_links(first)) == 25 and len(item_links(second)) == 2


@pytest.mark.backend  # query count
def test_the_queue_runs_a_fixed_number_of_queries_whatever_the_page_size(
    staff_client, staff, monkeypatch, django_assert_num_queries
):
    colleague = make_staff("cat.colleague")
    for number in range(30):
        item = flagged(make_learner(f"p{number:02d}.pupil", f"u-{number}"), SLEEP, FOCUS)
        FollowUp.objects.filter(pk=item.pk).update(assignee=(staff, colleague)[number % 2])
    query = "?status=open&sort=risk&area=" + SLEEP.replace("&", "%26")
    staff_client.get("/follow-ups/")  # warm the session

    monkeypatch.setattr("followups.views.PAGE_SIZE", 5)
    with CaptureQueriesContext(connection) as small:
        queue_rows(staff_client, query)
    monkeypatch.setattr("followups.views.PAGE_SIZE", 25)
    with django_assert_num_queries(len(small)):
        page = queue_rows(staff_client, query)

    # The page's own: staff list, area names, risk levels, count, rows, their areas; the rest
    # (session, user, staff check, banner) belongs to every page.
    own = [q["sql"] for q in small.captured_queries if "followups_" in q["sql"]]
    # The staff who may be assigned an item: those whose role reads results.
    assert len(own) == 5 and any("portal_staffprofile" in q["sql"] for q in small.captured_queries)
    assert page.count("cat.colleague") >= 12 and len(item_links(page)) == 25


# One item ---------------------------------------------------------------------------------------


def test_the_item_page_shows_the_learner_the_results_link_and_the_focus_areas(
    staff_client, learner
):
    item = flagged(learner, SLEEP, STRESS)

    page = staff_client.get(f"/follow-ups/{item.pk}/").content.decode()

    assert f'href="/learners/{learner.pk}/"' in page
    assert f'href="/learners/{learner.pk}/attempts/{item.attempt.assessment_id}/"' in page
    assert SLEEP.replace("&", "&amp;") in page and STRESS.replace("&", "&amp;") in page
    assert '<label for="id_note">' in page


def test_staff_change_status_assignee_and_due_date_and_add_a_note(staff_client, staff, learner):
    item = flagged(learner, SLEEP)
    colleague = make_staff("cat.colleague")
    due = timezone.localdate() + timedelta(days=3)

    response = staff_client.post(
        f"/follow-ups/{item.pk}/",
        {
            "status": "contacted",
            "assignee": colleague.pk,
            "due_date": due.isoformat(),
            "note": "Spoke to Lee after class; agreed a bedtime plan.",
        },  # fmt: skip
        follow=True,
    )

    assert response.redirect_chain == [(f"/follow-ups/{item.pk}/", 302)]
    page = response.content.decode()
    assert "Saved: status, assignee, due date and a note." in page
    assert "agreed a bedtime plan" in page and "sam.staff" in page
    item.refresh_from_db()
    assert (item.status, item.assignee, item.due_date) == (Status.CONTACTED, colleague, due)
    note = FollowUpNote.objects.get(follow_up=item)
    assert note.author == staff and note.author_username == "sam.staff"


def test_each_save_keeps_its_changes_in_words_and_when_the_item_was_resolved(
    staff_client, staff, learner
):
    item = flagged(learner, SLEEP)
    colleague = make_staff("cat.colleague")
    colleague.first_name, colleague.last_name = "Cat", "Colleague"
    colleague.save(update_fields=["first_name", "last_name"])
    due = timezone.localdate() + timedelta(days=3)
    form = {"status": "resolved", "assignee": colleague.pk, "due_date": due.isoformat()}
    was_due = item.due_date

    staff_client.post(f"/follow-ups/{item.pk}/", form)

    item.refresh_from_db()
    assert item.resolved_at is not None
    (change,) = FollowUpHistory.objects.filter(follow_up=item)
    assert change.changed_by == staff and change.changed_by_name == "sam.staff"
    assert change.changes == [
        {"field": "status", "from": "New", "to": "Resolved"},
        {"field": "assignee", "from": "", "to": "Cat Colleague"},
        {
            "field": "due_date",
            "from": date_format(was_due, "DATE_FORMAT"),
            "to": date_format(due, "DATE_FORMAT"),
        },
    ]
    staff_client.post(f"/follow-ups/{item.pk}/", {**form, "status": "referred"})
    item.refresh_from_db()
    assert item.status == Status.REFERRED and item.resolved_at is None
    assert FollowUpHistory.objects.filter(follow_up=item).count() == 2


def test_every_change_is_audited_with_the_changed_fields_but_never_the_note_text(
    staff_client, staff, learner
):
    item = flagged(learner, SLEEP)

    staff_client.post(
        f"/follow-ups/{item.pk}/",
        {"status": "referred", "due_date": item.due_date.isoformat(), "note": "Parent worried"},
    )

    event = AuditEvent.objects.get(action=AuditEvent.Action.FOLLOW_UP_CHANGED)
    assert event.actor == staff and event.learner == learner
    assert event.detail["changed"] == ["status"]
    assert event.detail["status"] == "referred" and event.detail["note_added"] is True
    assert event.detail["follow_up"] == item.pk
    assert "Parent worried" not in str(event.detail)


def test_notes_build_a_history_newest_first_with_author_and_date(staff_client, staff, learner):
    item = flagged(learner, SLEEP)
    for text in ("First call: no answer", "Second call: spoke to the learner"):
        staff_client.post(
            f"/follow-ups/{item.pk}/",
            {"status": "new", "due_date": item.due_date.isoformat(), "note": text},
        )

    page = staff_client.get(f"/follow-ups/{item.pk}/").content.decode()

    assert FollowUpNote.objects.filter(follow_up=item).count() == 2
    assert page.index("Second call") < page.index("First call")
    assert page.count("sam.staff, ") == 2


def test_only_staff_can_be_assigned(staff_client, learner):
    item = flagged(learner, SLEEP)

    response = staff_client.post(
        f"/follow-ups/{item.pk}/",
        {"status": "new", "assignee": learner.user.pk, "due_date": item.due_date.isoformat()},
    )

    page = response.content.decode()
    assert response.status_code == 200
    assert 'class="error-summary"' in page and "Choose a member of staff from the list" in page
    assert f'<option value="{learner.user.pk}"' not in page
    item.refresh_from_db()
    assert item.assignee is None
    assert not AuditEvent.objects.filter(action=AuditEvent.Action.FOLLOW_UP_CHANGED).exists()


@pytest.mark.parametrize(
    ("due_date", "message"),
    [
        ("", "Enter a due date"),
        ("31/02/2026", "Enter the due date as a real date"),
        ("2001-01-01", "The due date cannot be before the item was opened"),
        ("2999-01-01", "The due date must be within a year from today"),
    ],
)
def test_a_bad_due_date_is_explained_and_changes_nothing(staff_client, learner, due_date, message):
    item = flagged(learner, SLEEP)

    response = staff_client.post(
        f"/follow-ups/{item.pk}/", {"status": "resolved", "due_date": due_date}
    )

    page = response.content.decode()
    assert 'class="error-summary"' in page and message in page
    # The link leads to the date's first box.
    assert '<a href="#id_due_date_day">' in page and 'id="id_due_date_day"' in page
    item.refresh_from_db()
    assert item.status == Status.NEW


def test_saving_without_any_change_or_note_says_so(staff_client, learner):
    item = flagged(learner, SLEEP)

    response = staff_client.post(
        f"/follow-ups/{item.pk}/",
        {"status": "new", "due_date": item.due_date.isoformat(), "note": "   "},
    )

    assert "Nothing was changed: change a field or add a note" in response.content.decode()
    assert not AuditEvent.objects.filter(action=AuditEvent.Action.FOLLOW_UP_CHANGED).exists()


def test_an_unknown_item_is_not_found(staff_client):
    assert staff_client.get("/follow-ups/999999/").status_code == 404


# Beyond the follow-up pages ---------------------------------------------------------------------


def test_the_learner_page_lists_open_follow_ups_with_a_link(staff_client, learner):
    open_item = flagged(learner, SLEEP)
    resolved = flagged(learner, STRESS)
    FollowUp.objects.filter(pk=resolved.pk).update(status=Status.RESOLVED)

    page = staff_client.get(f"/learners/{learner.pk}/").content.decode()

    assert "Needs following up" in page
    assert f'href="/follow-ups/{open_item.pk}/"' in page
    assert f'href="/follow-ups/{resolved.pk}/"' not in page


def test_the_learner_page_says_nothing_about_follow_ups_when_none_is_open(staff_client, learner):
    response = staff_client.get(f"/learners/{learner.pk}/")

    page = response.content.decode()
    assert response.status_code == 200
    assert f"<h1>{learner.display_name}</h1>" in page  # the learner's page, not an error
    assert "Needs following up" not in page


def test_erasing_a_learner_deletes_their_follow_ups_and_notes(staff_client, staff, learner):
    item = flagged(learner, SLEEP)
    FollowUpNote.objects.create(
        follow_up=item, author=staff, author_username="sam.staff", text="Lee's mum called"
    )
    # The follow-up holds the records: a safeguarding lead (staff) lifts the hold first.
    records_hold_lift(learner=learner, lifted_by=staff, reason="Resolved with Lee's mum")

    learner_erase(learner=learner, erased_by=staff)

    assert not FollowUp.objects.exists() and not FollowUpNote.objects.exists()
    assert staff_client.get(f"/follow-ups/{item.pk}/").status_code == 404
    assert learner.display_name not in queue_rows(staff_client, "?status=all")


def test_no_item_is_opened_for_an_erased_learner(learner, other_learner, staff):
    learner_erase(learner=learner, erased_by=staff)
    learner.refresh_from_db()

    complete_attempt(learner, {SLEEP: "yes"})

    assert not FollowUp.objects.exists()
    # The same result of a learner not erased opens one: nothing was missed on the way.
    kept = complete_attempt(other_learner, {SLEEP: "yes"})
    assert FollowUp.objects.get().attempt == kept.attempt


def test_the_learners_data_export_holds_their_follow_ups_with_notes(staff_client, staff, learner):
    item = flagged(learner, SLEEP, risk_level="HIGH")
    FollowUpNote.objects.create(
        follow_up=item, author=staff, author_username="sam.staff", text="Called home"
    )

    export = staff_client.get(f"/learners/{learner.pk}/export/").json()

    [exported] = export["follow_ups"]
    assert exported["assessment_id"] == item.attempt.assessment_id
    assert exported["focus_areas"] == [SLEEP] and exported["risk_level"] == "HIGH"
    assert exported["status"] == "new" and exported["due_date"] == item.due_date.isoformat()
    assert [(n["by"], n["text"]) for n in exported["notes"]] == [("sam.staff", "Called home")]


@pytest.mark.backend  # MIN() in plain SQL: collation
def test_the_filters_offer_the_areas_and_risk_levels_items_carry_most_severe_first(
    staff_client, learner, other_learner
):
    third = make_learner("tia.third", "u-tia")
    flagged(learner, STRESS, risk_level="LOW")
    flagged(other_learner, SLEEP, FOCUS, risk_level="HIGH")
    flagged(third, SLEEP, risk_level="Unusual label")

    page = queue_rows(staff_client)

    areas = re.findall(
        r'<option value="([^"]*)">', page.split('id="id_area"')[1].split("</select>")[0]
    )
    risks = re.findall(
        r'<option value="([^"]*)">', page.split('id="id_risk_level"')[1].split("</select>")[0]
    )
    assert areas == [a.replace("&", "&amp;") for a in (FOCUS, SLEEP, STRESS)]
    assert risks == ["HIGH", "LOW", "Unusual label"]


def test_the_service_refuses_to_assign_an_item_to_someone_who_is_not_staff(staff, learner):
    item = flagged(learner, SLEEP)

    with pytest.raises(ValueError, match="Only partner staff"):
        followup_update(
            follow_up=item,
            changed_by=staff,
            status="new",
            assignee=learner.user,
            due_date=item.due_date,
        )

    item.refresh_from_db()
    assert item.assignee is None
