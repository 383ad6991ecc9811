"""A child's safeguarding chronology: read, noted, amended within a day, corrected, printed."""

from django.contrib import messages
from django.db.models import Q, QuerySet
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_POST

from accounts.access import safeguarding_required, trust_role, working_school_ids
from accounts.models import StaffRole
from kit.addresses import client_address
from learners.models import Learner
from safeguarding.chronology import chronology_of
from safeguarding.entries import (
    EntryLocked,
    chronology_opened,
    entry_add_note,
    entry_amend,
    entry_amendable,
    entry_correct,
)
from safeguarding.forms import CorrectionForm, NoteForm
from safeguarding.models import Alert, ChronologyEntry
from schools.models import School
from signin.second_factor import step_up_required


def _learners_seen(user) -> QuerySet:
    """Return the learners whose chronology the lead may open (leavers too).

    Those of the schools worked in; for a trust safeguarding lead, also those with an
    escalated alert, wherever they work (as views._alerts_seen_by lets them open the alert).
    """
    learners = Learner.objects.exclude(status=Learner.Status.ERASED)
    schools = working_school_ids(user)
    if schools is None:
        return learners
    seen = Q(school_id__in=schools)
    if trust_role(user) == StaffRole.TRUST_SAFEGUARDING_LEAD:
        escalated = Alert.objects.filter(escalated_at__isnull=False, learner__isnull=False)
        seen |= Q(pk__in=escalated.values("learner_id"))
    return learners.filter(seen)


def _learner_of(request: HttpRequest, learner_pk: int) -> Learner:
    """Return a learner whose chronology the lead may open, else 404."""
    return get_object_or_404(_learners_seen(request.user), pk=learner_pk)


def _entry_of(request: HttpRequest, pk: int) -> ChronologyEntry:
    """Return an entry of a learner whose chronology the lead may open, else 404."""
    entries = ChronologyEntry.objects.select_related("learner").filter(
        learner__in=_learners_seen(request.user)
    )
    return get_object_or_404(entries, pk=pk)


def _chronology_page(request: HttpRequest, learner: Learner, **context) -> HttpResponse:
    """Render the chronology, audited here: every page that shows it is a reading of it."""
    lines = chronology_of(learner, viewer=request.user)
    chronology_opened(
        learner=learner,
        by=request.user,
        address=client_address(request),
        printed=False,
        entries=len(lines),
    )
    context.setdefault("note_form", NoteForm())
    return render(
        request,
        "safeguarding/chronology.html",
        {"learner": learner, "lines": lines, **context},
    )


@safeguarding_required
@require_GET
@step_up_required
def chronology(request: HttpRequest, learner_pk: int) -> HttpResponse:
    """Show a child's safeguarding chronology, newest first (audited)."""
    return _chronology_page(request, _learner_of(request, learner_pk))


@safeguarding_required
@require_GET
@step_up_required
def chronology_print(request: HttpRequest, learner_pk: int) -> HttpResponse:
    """Show the chronology as the child's safeguarding record, to print (audited)."""
    learner = _learner_of(request, learner_pk)
    lines = chronology_of(learner)
    chronology_opened(
        learner=learner,
        by=request.user,
        address=client_address(request),
        printed=True,
        entries=len(lines),
    )
    return render(
        request,
        "safeguarding/chronology_print.html",
        {
            "learner": learner,
            "lines": lines,
            "school": School.objects.filter(pk=learner.school_id).first(),
            "printed_at": timezone.now(),
        },
    )


@safeguarding_required
@require_POST
@step_up_required
def chronology_add_note(request: HttpRequest, learner_pk: int) -> HttpResponse:
    """Add a lead's own note to the child's chronology."""
    learner = _learner_of(request, learner_pk)
    form = NoteForm(request.POST)
    if not form.is_valid():
        return _chronology_page(request, learner, note_form=form)
    entry_add_note(learner=learner, by=request.user, text=form.cleaned_data["text"])
    messages.success(request, _("Note added to the chronology."))
    return redirect("safeguarding:chronology", learner_pk=learner.pk)


@safeguarding_required
@step_up_required
def entry_amend_view(request: HttpRequest, pk: int) -> HttpResponse:
    """Let the author put right their own entry's words within a day of writing it."""
    entry = _entry_of(request, pk)
    if not entry_amendable(entry, request.user):
        return _locked(request, entry)
    form = NoteForm(request.POST or None, initial={"text": entry.text})
    if request.method == "POST" and form.is_valid():
        try:
            entry_amend(
                entry=entry,
                by=request.user,
                text=form.cleaned_data["text"],
                address=client_address(request),
            )
        except EntryLocked:
            return _locked(request, entry)
        messages.success(request, _("Entry amended."))
        return redirect("safeguarding:chronology", learner_pk=entry.learner_id)
    return render(request, "safeguarding/entry_amend.html", {"entry": entry, "form": form})


def _locked(request: HttpRequest, entry: ChronologyEntry) -> HttpResponse:
    """Refuse an amendment; the author's words, if the day ran out as they wrote, kept."""
    words = request.POST.get("text", "").strip() if request.method == "POST" else ""
    if words and entry.author_id == request.user.pk:
        messages.error(
            request,
            _(
                "This entry can no longer be changed: the day for amending it passed while you "
                "wrote. Your words are below as a correction: add it to keep them."
            ),
        )
        form = CorrectionForm(initial={"text": words})
        return render(request, "safeguarding/entry_correct.html", {"entry": entry, "form": form})
    messages.error(
        request,
        _(
            "This entry can no longer be changed: only its author can amend it, within a day "
            "of writing it. Add a correction instead."
        ),
    )
    return redirect("safeguarding:chronology", learner_pk=entry.learner_id)


@safeguarding_required
@step_up_required
def entry_correct_view(request: HttpRequest, pk: int) -> HttpResponse:
    """Add a correction of an entry: a new entry linked to it; the original stands."""
    entry = _entry_of(request, pk)
    form = CorrectionForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        entry_correct(entry=entry, by=request.user, text=form.cleaned_data["text"])
        messages.success(request, _("Correction added to the chronology."))
        return redirect("safeguarding:chronology", learner_pk=entry.learner_id)
    return render(request, "safeguarding/entry_correct.html", {"entry": entry, "form": form})
