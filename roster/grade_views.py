"""The admins' page of a school's grades table: which level each grade of the roster means."""

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _

from accounts.access import admin_required, one_school
from kit.addresses import client_address
from roster.forms import RosterGradesForm
from roster.services_grades import roster_grades_update
from schools.context import working_school_id
from schools.models import PartnerSettings, first_school_id


@admin_required
@one_school
def roster_grades(request: HttpRequest) -> HttpResponse:
    """Edit the school's grades table (errors by line), college and made-password choices."""
    school_id = working_school_id() or first_school_id()
    # A browser always sends the textarea, empty or not: a POST without it is no form's.
    posted = request.method == "POST" and "roster_grade_levels" in request.POST
    if request.method == "POST" and not posted:
        messages.error(request, _("Nothing was saved: the form did not arrive whole. Try again."))
    form = RosterGradesForm(
        request.POST if posted else None, instance=PartnerSettings.of(school_id)
    )
    if posted and form.is_valid():
        changed = roster_grades_update(
            school_id=school_id,
            changed_by=request.user,
            address=client_address(request),
            grade_levels=form.cleaned_data["roster_grade_levels"],
            further_education=form.cleaned_data["roster_further_education"],
            made_passwords=form.cleaned_data["roster_made_passwords"],
        )
        messages.success(request, _("Saved.") if changed else _("Nothing needed changing."))
        return redirect("roster:grades")
    return render(request, "roster/grades.html", {"form": form})
