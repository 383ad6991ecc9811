"""Staff's side: a group's cards to print, its sign-in window, and the live lesson roster."""

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.formats import date_format, time_format
from django.utils.timezone import localtime
from django.utils.translation import gettext as _
from django.utils.translation import ngettext
from django.views.decorators.http import require_GET, require_POST

from accounts.access import staff_required
from classes.archived import archived_refused
from classes.models import SchoolGroup
from kit.addresses import client_address
from learners.access import visible_learner_or_404
from learners.models import Learner
from lessons.access import learner_lesson_group, lesson_group_or_404, lesson_group_to_change
from lessons.forms import ReissueForm, WindowOpenForm
from lessons.models import CardSession
from lessons.qr import address_to_type, card_address, qr_svg
from lessons.selectors import group_pupils, roster_context
from lessons.services import (
    PrintedCard,
    card_session_end,
    cards_reissue,
    group_cards_print,
    learner_card_print,
    window_close,
    window_current,
    window_open,
)
from schools.models import PartnerSettings


def _cards_page(request: HttpRequest, cards: list[PrintedCard], **context) -> HttpResponse:
    card_url = card_address()
    printed = [
        (card, qr_svg(f"{card_url}#{card.secret}", label=_("Sign-in QR code"))) for card in cards
    ]
    # staff_required's never_cache keeps this page of secrets out of every cache (no-store).
    return render(
        request,
        "lessons/cards.html",
        {"cards": printed, "card_address": address_to_type(card_url), **context},
    )


@staff_required
@require_GET
@archived_refused
def group_cards(request: HttpRequest, pk: int) -> HttpResponse:
    """Print the group's sign-in cards: the same cards each time, until reissued."""
    group = lesson_group_to_change(request.user, pk)
    cards = group_cards_print(
        group=group,
        learners=group_pupils(group),
        printed_by=request.user,
        address=client_address(request),
    )
    return _cards_page(request, cards, group=group, reissue_form=ReissueForm())


def _leaver_refused(request: HttpRequest, learner: Learner) -> HttpResponse | None:
    """Send staff back to a leaver's record, saying why there is no card; None for others."""
    if learner.left_at is None:
        return None
    messages.error(
        request,
        _("%(name)s left the school on %(date)s: a learner who left has no sign-in card.")
        % {
            "name": learner.display_name,
            "date": date_format(localtime(learner.left_at), "DATE_FORMAT"),
        },
    )
    return redirect("learners:detail", pk=learner.pk)


def _learner_card_group(user, learner: Learner) -> SchoolGroup:
    """Return the learner's group whose lessons the user runs (its name goes on the card)."""
    group = learner_lesson_group(user, learner)
    if group is None:
        raise Http404
    return group


@staff_required
@require_GET
def learner_card(request: HttpRequest, pk: int) -> HttpResponse:
    """Print one learner's card (to replace a lost one, reissue it first)."""
    learner = visible_learner_or_404(request.user, pk, status=Learner.Status.ACTIVE)
    if refused := _leaver_refused(request, learner):
        return refused
    group = _learner_card_group(request.user, learner)
    card = learner_card_print(
        learner=learner,
        group_name=group.name,
        printed_by=request.user,
        address=client_address(request),
    )
    return _cards_page(request, [card], learner=learner, group=group)


@staff_required
@require_POST
def learner_card_reissue(request: HttpRequest, pk: int) -> HttpResponse:
    """Void a learner's card (a lost or copied one stops working) and make a new one."""
    learner = visible_learner_or_404(request.user, pk, status=Learner.Status.ACTIVE)
    if refused := _leaver_refused(request, learner):
        return refused
    _learner_card_group(request.user, learner)
    cards_reissue(learners=[learner], reissued_by=request.user, address=client_address(request))
    messages.success(
        request,
        _("%(name)s's old card no longer works. Print the new one.")
        % {"name": learner.display_name},
    )
    return redirect("lessons:learner_card", pk=pk)


@staff_required
@require_POST
@archived_refused
def group_cards_reissue(request: HttpRequest, pk: int) -> HttpResponse:
    """Void every card of the group and make new ones (after a deliberate tick)."""
    group = lesson_group_to_change(request.user, pk)
    form = ReissueForm(request.POST)
    if not form.is_valid():
        messages.error(request, " ".join(form.errors["confirm"]))
        return redirect("lessons:group_cards", pk=pk)
    count = cards_reissue(
        learners=group_pupils(group), reissued_by=request.user, address=client_address(request)
    )
    messages.success(
        request,
        ngettext(
            "%(count)d new card made; the old one no longer works.",
            "%(count)d new cards made; the old ones no longer work.",
            count,
        )
        % {"count": count},
    )
    return redirect("lessons:group_cards", pk=pk)


@staff_required
@require_POST
@archived_refused
def sign_in_open(request: HttpRequest, pk: int) -> HttpResponse:
    """Open card sign-in for the group for the minutes chosen."""
    group = lesson_group_to_change(request.user, pk)
    form = WindowOpenForm(
        request.POST, max_minutes=PartnerSettings.of(group.school_id).card_window_max_minutes
    )
    if not form.is_valid():
        messages.error(request, " ".join(form.errors["minutes"]))
        return redirect(reverse("classes:detail", args=[pk]) + "#lesson")
    window = window_open(
        group=group,
        minutes=form.cleaned_data["minutes"],
        opened_by=request.user,
        address=client_address(request),
    )
    messages.success(
        request,
        _("Card sign-in is open until %(time)s.")
        % {"time": time_format(localtime(window.closes_at))},
    )
    return redirect(reverse("classes:detail", args=[pk]) + "#lesson")


@staff_required
@require_POST
def sign_in_close(request: HttpRequest, pk: int) -> HttpResponse:
    """Close card sign-in now: every pupil who came in by card is signed out."""
    group = lesson_group_or_404(request.user, pk)
    if window_close(group=group, closed_by=request.user, address=client_address(request)):
        messages.success(request, _("Card sign-in is closed; card sessions have ended."))
    return redirect(reverse("classes:detail", args=[pk]) + "#lesson")


@staff_required
@require_GET
def lesson_roster_part(request: HttpRequest, pk: int) -> HttpResponse:
    """The roster alone, fetched every few seconds by the lesson page's script."""
    group = lesson_group_or_404(request.user, pk)
    return render(
        request,
        "lessons/roster_rows.html",
        {"group": group, **roster_context(window_current(group))},
    )


@staff_required
@require_POST
def card_session_stop(request: HttpRequest, pk: int, session_pk: int) -> HttpResponse:
    """End one pupil's card session (they are signed out at their next click)."""
    group = lesson_group_or_404(request.user, pk)
    session = get_object_or_404(
        CardSession.objects.select_related("learner", "window"), pk=session_pk, window__group=group
    )
    if card_session_end(session=session, ended_by=request.user, address=client_address(request)):
        messages.success(
            request,
            _("%(name)s's session has ended.") % {"name": session.learner.display_name},
        )
    return redirect(reverse("classes:detail", args=[pk]) + "#lesson")
