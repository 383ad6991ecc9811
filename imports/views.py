"""Staff pages of bulk registration: upload, preview, confirm, progress, result files, the list."""

from django.conf import settings
from django.contrib import messages
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from accounts.access import in_working_schools, one_school, schools_of, whole_school_required
from imports.files import template_rows
from imports.forms import ImportUploadForm
from imports.models import ImportJob
from imports.selectors import (
    import_credentials_available,
    import_failed_rows,
    import_invalid_rows,
    import_jobs_listed,
    import_progress,
    import_progresses,
    import_result_rows,
    import_valid_rows_by_school,
)
from imports.services import (
    CredentialsGone,
    ImportFileError,
    ImportJobClosed,
    import_credentials_expire,
    import_credentials_take,
    import_job_confirm,
    import_job_create_from_csv,
    import_job_discard,
    import_job_resume_if_stalled,
)
from kit.addresses import client_address
from kit.csv_export import csv_download
from schools.models import several_schools

ROWS_PER_PAGE = 100
JOBS_PER_PAGE = 25
# Without JavaScript the progress page reloads itself this often (seconds).
REFRESH_SECONDS = 5


@whole_school_required
@one_school
def import_upload(request: HttpRequest) -> HttpResponse:
    """Upload a CSV file; it is checked and previewed, nothing is sent yet."""
    posted = request.method == "POST"
    form = ImportUploadForm(request.POST if posted else None, request.FILES if posted else None)
    if posted and form.is_valid():
        try:
            job = import_job_create_from_csv(
                file=form.cleaned_data["file"],
                created_by=request.user,
                replaces=form.cleaned_data["replaces"],
            )
        except ImportFileError as error:
            form.add_error("file", error.message)
        else:
            return redirect("imports:job", pk=job.pk)
    context = {"form": form, "school_codes": _school_codes(request)}
    return render(request, "imports/upload.html", context)


def _school_codes(request: HttpRequest) -> list[str] | None:
    """Return the codes of the schools the user may register into; None with one school."""
    if not several_schools():
        return None
    working = request.working_school_id
    mine = schools_of(request.user)
    # The school worked in first: it is the one an empty cell means.
    return [s.code for s in mine if s.pk == working] + [s.code for s in mine if s.pk != working]


@whole_school_required
def import_list(request: HttpRequest) -> HttpResponse:
    """List the imports, newest first: who uploaded which file when, and how it went."""
    page = Paginator(
        in_working_schools(request.user, import_jobs_listed()), JOBS_PER_PAGE
    ).get_page(request.GET.get("page"))
    jobs = list(page.object_list)
    progresses = import_progresses(jobs)
    context = {
        "page": page,
        "jobs": [(job, progresses[job.pk]) for job in jobs],
        "keep_days": settings.IMPORT_KEEP_DAYS,
    }
    return render(request, "imports/list.html", context)


@whole_school_required
def import_template(request: HttpRequest) -> HttpResponse:
    """Download an empty import file with the columns and one example row.

    With several schools it has a `school` column, its example the school worked in.
    """
    codes = _school_codes(request)
    header, rows = template_rows(codes[0] if codes else None)
    return csv_download("learners-import-template.csv", header, rows)


@whole_school_required
def import_job(request: HttpRequest, pk: int) -> HttpResponse:
    """Show a job: its preview, its progress while running, or its outcome."""
    job = get_object_or_404(in_working_schools(request.user, ImportJob.objects.all()), pk=pk)
    import_credentials_expire()
    if import_job_resume_if_stalled(job=job):
        job.refresh_from_db()
    by_school = []
    if job.state == ImportJob.State.PREVIEW:
        rows = import_invalid_rows(job)
        by_school = import_valid_rows_by_school(job)
    else:
        rows = import_failed_rows(job)
    context = {
        "job": job,
        "progress": import_progress(job),
        "page": Paginator(rows, ROWS_PER_PAGE).get_page(request.GET.get("page")),
        "upload_form": ImportUploadForm(initial={"replaces": job.pk}),
        "credentials_available": import_credentials_available(job),
        "refresh_seconds": REFRESH_SECONDS,
        "by_school": by_school,
    }
    return render(request, "imports/job.html", context)


@whole_school_required
def import_progress_json(request: HttpRequest, pk: int) -> JsonResponse:
    """Return a running job's progress for the page's script (its texts in the page's language)."""
    job = get_object_or_404(in_working_schools(request.user, ImportJob.objects.all()), pk=pk)
    if import_job_resume_if_stalled(job=job):
        job.refresh_from_db()
    return JsonResponse(import_progress(job).as_json())


@whole_school_required
@require_POST
def import_confirm(request: HttpRequest, pk: int) -> HttpResponse:
    """Start registering the valid rows of a previewed job."""
    job = get_object_or_404(in_working_schools(request.user, ImportJob.objects.all()), pk=pk)
    try:
        import_job_confirm(job=job, confirmed_by=request.user, address=client_address(request))
    except ImportJobClosed as closed:
        messages.error(request, str(closed))
    return redirect("imports:job", pk=pk)


@whole_school_required
@require_POST
def import_discard(request: HttpRequest, pk: int) -> HttpResponse:
    """Drop a previewed job without registering anyone."""
    job = get_object_or_404(in_working_schools(request.user, ImportJob.objects.all()), pk=pk)
    try:
        import_job_discard(job=job)
    except ImportJobClosed as closed:
        messages.error(request, str(closed))
        return redirect("imports:job", pk=pk)
    messages.success(request, _("The import was discarded. Nobody was registered."))
    return redirect("imports:upload")


@whole_school_required
def import_results(request: HttpRequest, pk: int) -> HttpResponse:
    """Download every row's outcome and upstream user_id."""
    job = get_object_or_404(in_working_schools(request.user, ImportJob.objects.all()), pk=pk)
    return csv_download(
        f"import-{job.pk}-results.csv",
        ["row", "username", "outcome", "reason", "user_id"],
        import_result_rows(job),
    )


@whole_school_required
@require_POST
def import_credentials(request: HttpRequest, pk: int) -> HttpResponse:
    """Download the generated passwords, once; they are deleted as they are handed over."""
    job = get_object_or_404(in_working_schools(request.user, ImportJob.objects.all()), pk=pk)
    try:
        credentials = import_credentials_take(
            job=job, taken_by=request.user, address=client_address(request)
        )
    except CredentialsGone:
        messages.error(
            request,
            _(
                "The passwords are no longer available: they can be downloaded only once, "
                "within an hour of the import finishing. Reset a learner's password from their "
                "page."
            ),
        )
        return redirect("imports:job", pk=pk)
    return csv_download(
        f"import-{job.pk}-passwords.csv",
        ["row", "username", "password", "first_name", "last_name"],
        credentials,
    )
