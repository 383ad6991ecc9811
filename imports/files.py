"""Reading and checking a bulk-registration CSV file, streamed, with the single form's rules."""

import copy
import csv
import io
from collections.abc import Iterator
from dataclasses import dataclass

from django import forms
from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.humanize.templatetags.humanize import intcomma
from django.core.validators import MaxLengthValidator
from django.utils import timezone
from django.utils.formats import number_format
from django.utils.functional import lazy
from django.utils.text import get_text_list
from django.utils.translation import gettext as _
from django.utils.translation import ngettext
from django.views.decorators.debug import sensitive_variables

from imports.models import ImportJob, ImportRow
from imports.passwords import password_encrypt
from learners.forms import LearnerRegistrationForm, username_in_normal_form
from learners.group_selectors import groups_by_name
from learners.models import Learner, Level
from learners.passwords import password_generate
from learners.selectors import PENDING_REGISTRATION_STALE_AFTER
from portal.usernames import username_normal_form

# The columns are the spec's field names; the template offers them in this order.
COLUMNS = ("username", "password", "dob", "email", "first_name", "last_name", "level", "class")
REQUIRED_COLUMNS = ("username", "dob")
# A name no demo learner has, so the template uploaded as it is checks cleanly.
TEMPLATE_EXAMPLE = (
    "example.pupil",
    "",
    "2009-03-27",
    "",
    "Example",
    "Pupil",
    Level.SECONDARY.value,
    "",
)
# Several groups in one `class` cell: "7B; Year 7".
GROUP_SEPARATOR = ";"
LEVEL_CODES = Level.values
EMAIL_MAX_LENGTH = 254
# Cells are cut to this for the preview and the result file of a row that is skipped anyway.
SHOWN_VALUE_LIMIT = 150
BINARY_SNIFF_BYTES = 8192


class ImportFileError(Exception):
    """The file as a whole cannot be used; the message says why, for staff."""

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


@dataclass
class FileRow:
    """One data row of the file, as text, with its number in the file (the header is row 1)."""

    number: int
    values: dict[str, str]
    extra_cells: int


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
    fields["email"].validators.append(MaxLengthValidator(EMAIL_MAX_LENGTH))
    # Lazy: these fields are set up once, at import time; the message is translated when shown.
    fields["level"].error_messages["invalid_choice"] = lazy(_level_codes_message, str)()
    return _SharedFields(fields)


def _level_codes_message() -> str:
    # Translators: %(codes)s lists the level codes, e.g. "LOA_PARTNER_LEVEL1,
    # LOA_PARTNER_LEVEL2 or LOA_PARTNER_LEVEL3"; the codes are kept as they are.
    return _("Use one of the level codes %(codes)s, or leave it empty.") % {
        "codes": get_text_list(LEVEL_CODES, _("or"))
    }


ImportRowForm.base_fields = _import_row_fields()


def file_rows(file) -> Iterator[FileRow]:
    """Yield the data rows of an uploaded CSV file one by one, or raise ImportFileError."""
    max_bytes = settings.IMPORT_MAX_FILE_BYTES
    size = getattr(file, "size", None)
    if size is not None and size > max_bytes:
        raise ImportFileError(
            _(
                "The file is too large (%(size)s). Files of up to %(limit)s can be imported: "
                "split it into smaller files."
            )
            % {"size": _megabytes(size), "limit": _megabytes(max_bytes)}
        )
    raw = getattr(file, "file", file)
    raw.seek(0)
    start = raw.read(BINARY_SNIFF_BYTES)
    if not start:
        raise ImportFileError(_("The file is empty. Download the template and fill it in."))
    if b"\x00" in start:  # text never holds NUL; spreadsheets' own formats and images do
        raise _not_csv()
    raw.seek(0)
    # utf-8-sig reads UTF-8 with or without the byte order mark spreadsheets write.
    text = io.TextIOWrapper(raw, encoding="utf-8-sig", errors="strict", newline="")
    try:
        yield from _rows_of(csv.reader(text))
    except UnicodeDecodeError:
        raise ImportFileError(
            _(
                "The file is not a CSV text file in UTF-8. In your spreadsheet choose "
                "Save as, then \u201cCSV UTF-8 (comma delimited)\u201d, and upload that file."
            )
        ) from None
    except csv.Error:
        raise _not_csv() from None
    finally:
        text.detach()  # closing the wrapper would close the upload under it


def _not_csv() -> ImportFileError:
    return ImportFileError(
        _(
            "The file could not be read as CSV (it looks like a binary file, such as a "
            "spreadsheet in its own format). Save it as \u201cCSV UTF-8\u201d and upload that."
        )
    )


def _rows_of(reader) -> Iterator[FileRow]:
    """Check the header, then yield each non-empty row as a FileRow."""
    header = next(reader, None)
    if header is None or not any(cell.strip() for cell in header):
        raise ImportFileError(
            _("The file has no header row. Download the template and fill it in.")
        )
    columns = [cell.strip().lower() for cell in header]
    _check_header(columns)
    max_rows = settings.IMPORT_MAX_ROWS
    count = 0
    for number, cells in enumerate(reader, start=2):
        if not any(cell.strip() for cell in cells):
            continue  # blank lines, often at the end of a spreadsheet's export
        count += 1
        if count > max_rows:
            raise ImportFileError(
                ngettext(
                    "The file has more than %(limit)s learner. Split it into files of at most "
                    "%(limit)s row and import them one after the other.",
                    "The file has more than %(limit)s learners. Split it into files of at most "
                    "%(limit)s rows and import them one after the other.",
                    max_rows,
                )
                % {"limit": intcomma(max_rows)}
            )
        values = {column: cell for column, cell in zip(columns, cells, strict=False) if column}
        yield FileRow(number=number, values=values, extra_cells=max(len(cells) - len(columns), 0))
    if count == 0:
        raise ImportFileError(_("The file has a header row but no learners under it."))


def _check_header(columns: list[str]) -> None:
    """Refuse a header with unknown, repeated or missing columns, naming them."""
    # The column names are the file's, the same in every language.
    expected = ", ".join(COLUMNS)
    unknown = [column for column in columns if column and column not in COLUMNS]
    if unknown:
        raise ImportFileError(
            # Translators: %(unknown)s lists the unknown column names as they are in the file
            # (in quotes, separated by commas); %(expected)s lists the column names, which stay
            # as they are.
            ngettext(
                "The header row has unknown column %(unknown)s. The columns are: %(expected)s "
                "(password, email, first_name, last_name, level and class may be left out).",
                "The header row has unknown columns %(unknown)s. The columns are: %(expected)s "
                "(password, email, first_name, last_name, level and class may be left out).",
                len(unknown),
            )
            % {"unknown": ", ".join(_shown(column) for column in unknown), "expected": expected}
        )
    repeated = sorted({column for column in columns if column and columns.count(column) > 1})
    if repeated:
        raise ImportFileError(
            _("The header row has the column %(column)s more than once.") % {"column": repeated[0]}
        )
    missing = [column for column in REQUIRED_COLUMNS if column not in columns]
    if missing:
        raise ImportFileError(
            # Translators: %(missing)s is one column name or several, e.g. "username and dob";
            # %(expected)s lists the column names. Column names stay as they are.
            ngettext(
                "The header row lacks the column %(missing)s. The first row of the file must "
                "name the columns: %(expected)s.",
                "The header row lacks the columns %(missing)s. The first row of the file must "
                "name the columns: %(expected)s.",
                len(missing),
            )
            % {"missing": get_text_list(missing, _("and")), "expected": expected}
        )


@sensitive_variables("password", "values")
def rows_check(job: ImportJob, file_rows: list[FileRow], *, first_seen: dict[str, int]) -> list:
    """Check a batch of rows and return unsaved ImportRows, valid (queued) or invalid.

    `first_seen` maps the normal form of each username met so far in the file to its row
    number.
    """
    taken, importing = _usernames_in_use({row.values.get("username", "") for row in file_rows})
    groups = groups_by_name()
    checked = []
    for row in file_rows:
        values = {column: row.values.get(column, "").strip() for column in COLUMNS}
        values["password"] = row.values.get("password", "")  # spaces may be part of it
        values["level"] = values["level"].upper()
        form = ImportRowForm(data=values)
        problems = [
            _field_problem(field, message) if field != "__all__" else str(message)
            for field, messages in form.errors.items()
            for message in messages
        ]
        group_ids, unknown_groups = _groups_named(values["class"], groups)
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
        checked.append(_import_row(job, row.number, form, values, problems, group_ids))
    return checked


def _groups_named(cell: str, groups: dict[str, int]) -> tuple[list[int], list[str]]:
    """Return the ids of the groups a `class` cell names, and the names that match none."""
    names = [name.strip() for name in cell.split(GROUP_SEPARATOR) if name.strip()]
    found = [groups[name.casefold()] for name in names if name.casefold() in groups]
    return sorted(set(found)), [name for name in names if name.casefold() not in groups]


def _unknown_groups_problem(names: list[str]) -> str:
    shown = ", ".join(_shown(name) for name in names)
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
    job: ImportJob, number: int, form, values: dict, problems: list[str], group_ids: list[int]
) -> ImportRow:
    """Build the ImportRow of a checked row; only a valid row keeps a password (encrypted)."""
    if problems:
        return ImportRow(
            job=job,
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


def _shown(value: str) -> str:
    """Quote a value from the file for a message, cut short."""
    # Translators: A value from the file, quoted.
    return _("\u201c%(value)s\u201d") % {"value": value[:40]}


def _megabytes(size: int) -> str:
    # Translators: A file size in megabytes (millions of bytes), e.g. "1.5 MB".
    return _("%(size)s MB") % {"size": number_format(size / 1_000_000, decimal_pos=1)}
