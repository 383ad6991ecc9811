"""Checking each row of a bulk-registration file with the single registration form's rules."""

import copy

from django import forms
from django.contrib.auth import get_user_model
from django.utils import timezone, translation
from django.utils.functional import lazy
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, ngettext
from django.views.decorators.debug import sensitive_variables

from accounts.access import WHOLE_SCHOOL_ROLES, role_in_school, schools_of
from accounts.usernames import username_normal_form
from classes.models import SchoolGroup
from classes.selectors import groups_by_name
from imports.files import COLUMNS, FileRow, value_quoted
from imports.models import ImportJob, ImportRow
from imports.passwords import password_encrypt
from learners.forms import EMAIL_MAX_LENGTH, LearnerRegistrationForm, username_in_normal_form
from learners.models import Learner, Level
from learners.passwords import password_generate
from learners.selectors import PENDING_REGISTRATION_STALE_AFTER
from schools.models import School

# Several groups in one `class` cell: "7B; Year 7".
GROUP_SEPARATOR = ";"
LEVEL_CODES = Level.values
# Dates as spreadsheets in the UK write them, day first (3/12/2010 is 3 December, never
# 12 March), and the ISO form the template shows; a four-digit year in both.
DOB_FORMATS = ("%Y-%m-%d", "%d/%m/%Y")
# Cells are cut to this for the preview and the result file of a row that is skipped anyway.
SHOWN_VALUE_LIMIT = 150


class _SharedFields(dict):
    """Form fields shared by every row's form, never copied.

    A form deep-copies its fields when made, which costs more than checking a row; these
    fields are set up once (below) and only read while checking.
    """

    def __deepcopy__(self, memo) -> "_SharedFields":
        return self


class ImportRowForm(LearnerRegistrationForm):
    """The single registration form's rules for one row; usernames are checked in batches."""

    def __init__(self, *args, **kwargs):
        # The shared fields carry ClearRequiredMessages' messages already (set up below).
        forms.Form.__init__(self, *args, **kwargs)

    def clean_username(self) -> str:
        # Taken usernames: `rows_check`, in batches.
        return username_in_normal_form(self.cleaned_data["username"])


def _import_row_fields() -> _SharedFields:
    """Return the registration form's fields, with a blank password allowed (it is generated)."""
    fields = copy.deepcopy(LearnerRegistrationForm().fields)
    fields["password"].required = False
    # One file names groups in its own `class` column (several per cell), checked in batches.
    del fields["school_class"]
    del fields["make_password"]  # a row without a password always gets one made
    fields["dob"].input_formats = list(DOB_FORMATS)
    # Lazy: these fields are set up once, at import time; the message is translated when shown.
    fields["dob"].error_messages["invalid"] = gettext_lazy(
        "Enter a real date, written as day/month/year (27/03/2009) or year-month-day (2009-03-27)."
    )
    fields["level"].error_messages["invalid_choice"] = lazy(_levels_message, str)()
    return _SharedFields(fields)


def _levels_message() -> str:
    # Translators: %(names)s lists the levels' names, e.g. "Further education, Secondary,
    # Primary"; %(codes)s their codes, which are kept as they are.
    return _(
        "Write the level as one of %(names)s or their codes %(codes)s (capitals do not "
        "matter), or leave it empty."
    ) % {
        "names": ", ".join(str(label) for label in Level.labels),
        "codes": ", ".join(LEVEL_CODES),
    }


def level_spellings() -> dict[str, str]:
    """Map each way of writing a level (its code or its name), case-folded, to its code."""
    # Names in English, as the source writes them, and in the language the file is checked in.
    spellings = {code.casefold(): code for code in LEVEL_CODES}
    with translation.override(None):  # the names as written in the source: English
        spellings.update({str(label).casefold(): code for code, label in Level.choices})
    spellings.update({str(label).casefold(): code for code, label in Level.choices})
    return spellings


ImportRowForm.base_fields = _import_row_fields()


@sensitive_variables("password", "values")
def rows_check(job: ImportJob, file_rows: list[FileRow], *, first_seen: dict[str, int]) -> list:
    """Check a batch of rows and return unsaved ImportRows, valid (queued) or invalid.

    `first_seen` maps the normal form of each username met so far in the file to its row
    number.
    """
    taken, importing = _usernames_in_use({row.values.get("username", "") for row in file_rows})
    schools = _RowSchools(job)
    levels = level_spellings()
    checked = []
    for row in file_rows:
        values = {column: row.values.get(column, "").strip() for column in COLUMNS}
        values["password"] = row.values.get("password", "")  # spaces may be part of it
        values["level"] = levels.get(values["level"].casefold(), values["level"])
        form = ImportRowForm(data=values)
        problems = [
            _field_problem(field, message) if field != "__all__" else str(message)
            for field, messages in form.errors.items()
            for message in messages
        ]
        school_id, school_problem = schools.named(values["school"])
        group_ids, unknown_groups = [], []
        if school_problem:
            problems.append(_field_problem("school", school_problem))
        else:  # a row's groups are its school's
            group_ids, unknown_groups = _groups_named(values["class"], schools.groups(school_id))
        if unknown_groups:
            problems.append(_unknown_groups_problem(unknown_groups))
        if row.extra_cells:
            problems.append(
                ngettext(
                    "The row has %(count)s more cell than the header: look for a stray comma.",
                    "The row has %(count)s more cells than the header: look for a stray comma.",
                    row.extra_cells,
                )
                % {"count": row.extra_cells}
            )
        key = username_normal_form(values["username"])
        if key:
            username = values["username"]
            if key in first_seen:
                problems.append(
                    _field_problem(
                        "username",
                        _(
                            "%(username)s appears more than once in the file (first at row "
                            "%(row)s); usernames must differ, whatever their capitals or "
                            "widths."
                        )
                        % {"username": username, "row": first_seen[key]},
                    )
                )
            else:
                first_seen[key] = row.number
                if key in taken:
                    problems.append(
                        _field_problem(
                            "username",
                            _("%(username)s is already registered in the portal.")
                            % {"username": username},
                        )
                    )
                elif key in importing:
                    problems.append(
                        _field_problem(
                            "username",
                            _("%(username)s is in another import that is still running.")
                            % {"username": username},
                        )
                    )
        checked.append(_import_row(job, row.number, form, values, problems, group_ids, school_id))
    return checked


class _RowSchools:
    """The schools an import's rows may name: any school's code, if the uploader works there."""

    def __init__(self, job: ImportJob):
        everyone = School.everyone()
        self.job_school_id = job.school_id
        self.by_code = {school.code.casefold(): school for school in everyone}
        uploader = job.created_by
        # Bulk registration is a whole-school job: only schools where the uploader holds such a
        # role (a teacher there may not fill it through another school's file).
        self.allowed = {
            school.pk
            for school in (schools_of(uploader) if uploader else everyone)
            if uploader is None or role_in_school(uploader, school.pk) in WHOLE_SCHOOL_ROLES
        }
        self._groups: dict[int, dict[str, int]] = {}

    def named(self, code: str) -> tuple[int | None, str]:
        """Return the id of the school a row's cell names (empty: the job's), or a problem."""
        if not code:
            return self.job_school_id, ""
        school = self.by_code.get(code.casefold())
        if school is None:
            return None, _(
                "There is no school with the code %(code)s. The schools' codes are: %(codes)s."
            ) % {
                "code": value_quoted(code),
                "codes": ", ".join(sorted(school.code for school in self.by_code.values())),
            }
        if school.pk not in self.allowed:
            return None, _(
                "You do not work in %(school)s (%(code)s), so you cannot register its learners: "
                "ask a member of its staff to."
            ) % {"school": school.name, "code": school.code}
        return school.pk, ""

    def groups(self, school_id: int) -> dict[str, int]:
        """Return a school's groups by case-folded name (read once per batch)."""
        if school_id not in self._groups:
            self._groups[school_id] = groups_by_name(
                SchoolGroup.objects.filter(school_id=school_id)
            )
        return self._groups[school_id]


def _groups_named(cell: str, groups: dict[str, int]) -> tuple[list[int], list[str]]:
    """Return the ids of the groups a `class` cell names, and the names that match none."""
    names = [name.strip() for name in cell.split(GROUP_SEPARATOR) if name.strip()]
    found = [groups[name.casefold()] for name in names if name.casefold() in groups]
    return sorted(set(found)), [name for name in names if name.casefold() not in groups]


def _unknown_groups_problem(names: list[str]) -> str:
    shown = ", ".join(value_quoted(name) for name in names)
    return _field_problem(
        "class",
        ngettext(
            "There is no group called %(names)s. Make it on the Classes page first, or correct "
            "the name (several groups are separated by ;).",
            "There are no groups called %(names)s. Make them on the Classes page first, or "
            "correct the names (several groups are separated by ;).",
            len(names),
        )
        % {"names": shown},
    )


@sensitive_variables("password", "values")
def _import_row(
    job: ImportJob,
    number: int,
    form,
    values: dict,
    problems: list[str],
    group_ids: list[int],
    school_id: int | None,
) -> ImportRow:
    """Build the ImportRow of a checked row; only a valid row keeps a password (encrypted)."""
    if problems:
        return ImportRow(
            job=job,
            school_id=school_id,
            row_number=number,
            state=ImportRow.State.INVALID,
            problems=problems,
            username=values["username"][:SHOWN_VALUE_LIMIT],
            first_name=values["first_name"][:SHOWN_VALUE_LIMIT],
            last_name=values["last_name"][:SHOWN_VALUE_LIMIT],
            email=values["email"][:EMAIL_MAX_LENGTH],
            level=values["level"][:32],
        )
    data = form.cleaned_data
    password = data["password"]
    generated = not password
    if generated:
        password = password_generate(
            username=data["username"], first_name=data["first_name"], last_name=data["last_name"]
        )
    return ImportRow(
        job=job,
        school_id=school_id,
        row_number=number,
        state=ImportRow.State.QUEUED,
        username=data["username"],
        first_name=data["first_name"],
        last_name=data["last_name"],
        email=data["email"],
        dob=data["dob"],
        level=data["level"],
        password_encrypted=password_encrypt(password),
        password_generated=generated,
        group_ids=group_ids,
    )


def _usernames_in_use(usernames: set[str]) -> tuple[set[str], set[str]]:
    """Return which of the usernames (in normal form) are registered, and which being imported."""
    normal = {username_normal_form(username) for username in usernames} - {""}
    if not normal:
        return set(), set()
    # As username_taken: a pending registration left by a dead process does not count.
    stale = Learner.objects.filter(
        status=Learner.Status.PENDING,
        registered_at__lt=timezone.now() - PENDING_REGISTRATION_STALE_AFTER,
    ).values("user_id")
    # Stored usernames, and those of checked rows, are in normal form: an exact match.
    taken = set(
        get_user_model()
        .objects.filter(username__in=normal)
        .exclude(pk__in=stale)
        .values_list("username", flat=True)
    )
    importing = set(
        ImportRow.objects.filter(
            username__in=normal,
            job__state=ImportJob.State.RUNNING,
            state__in=[ImportRow.State.QUEUED, ImportRow.State.SENDING],
        ).values_list("username", flat=True)
    )
    return taken, importing


def _field_problem(field: str, message: str) -> str:
    """Return a row's problem with the column it is in, e.g. "dob: Enter a date"."""
    # Translators: A problem in one cell of a CSV file: %(column)s is the column's name in the
    # file (keep it as it is), %(problem)s the problem.
    return _("%(column)s: %(problem)s") % {"column": field, "problem": message}
