"""Reading a bulk-registration CSV file, streamed: its header checked, its rows as text.

Each row is then checked with the single form's rules in imports.checks.
"""

import csv
import io
from collections.abc import Iterator
from dataclasses import dataclass

from django.conf import settings
from django.contrib.humanize.templatetags.humanize import intcomma
from django.utils.formats import number_format
from django.utils.text import get_text_list
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from learners.models import Level
from schools.models import several_schools

# The columns are the spec's field names; the template offers them in this order. `school`
# (a school's code) is offered only to a partner with several schools.
COLUMNS = (
    "username",
    "password",
    "dob",
    "email",
    "first_name",
    "last_name",
    "level",
    "class",
    "school",
)
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
    "",
)
BINARY_SNIFF_BYTES = 8192


def template_rows(school_code: str | None) -> tuple[list[str], list[tuple[str, ...]]]:
    """Return the template's header and example row; with a school's code, its school column."""
    if school_code is None:
        return list(COLUMNS[:-1]), [TEMPLATE_EXAMPLE[:-1]]
    return list(COLUMNS), [(*TEMPLATE_EXAMPLE[:-1], school_code)]


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
        yield from _rows_of(_records(csv.reader(_lines_without_nul(text))))
    except UnicodeDecodeError:
        raise ImportFileError(
            _(
                "The file is not a CSV text file in UTF-8. In your spreadsheet choose "
                "Save as, then \u201cCSV UTF-8 (comma delimited)\u201d, and upload that file."
            )
        ) from None
    finally:
        text.detach()  # closing the wrapper would close the upload under it


class _NulCharacter(Exception):
    """A line of the file holds NUL, which no text cell may hold (PostgreSQL refuses it)."""


def _lines_without_nul(text) -> Iterator[str]:
    """Yield the file's lines, stopping at one that holds NUL past the first bytes sniffed."""
    for line in text:
        if "\x00" in line:
            raise _NulCharacter
        yield line


def _records(reader) -> Iterator[tuple[int, list[str]]]:
    """Yield each row of the file (the header is row 1) with its cells; name a row unreadable."""
    number = 1
    while True:
        try:
            cells = next(reader)
        except StopIteration:
            return
        except _NulCharacter:
            raise ImportFileError(
                _(
                    "Row %(row)s holds a null character (a zero byte), which a CSV text file "
                    "never has: the file may be damaged. Type that row again, or save the file "
                    "again as \u201cCSV UTF-8\u201d, and upload it."
                )
                % {"row": number}
            ) from None
        except csv.Error as error:
            if not str(error).startswith("field larger than field limit"):
                raise _not_csv() from None
            raise ImportFileError(
                _(
                    "Row %(row)s has a cell longer than %(limit)s characters, far more than a "
                    "learner's details take: check that this is the right file, and that no "
                    'quote mark (") is left open in that row.'
                )
                % {"row": number, "limit": intcomma(csv.field_size_limit())}
            ) from None
        yield number, cells
        number += 1


def _not_csv() -> ImportFileError:
    return ImportFileError(
        _(
            "The file could not be read as CSV (it looks like a binary file, such as a "
            "spreadsheet in its own format). Save it as \u201cCSV UTF-8\u201d and upload that."
        )
    )


def _rows_of(records: Iterator[tuple[int, list[str]]]) -> Iterator[FileRow]:
    """Check the header, then yield each non-empty row as a FileRow."""
    header = next(records, (1, None))[1]
    if header is None or not any(cell.strip() for cell in header):
        raise ImportFileError(
            _("The file has no header row. Download the template and fill it in.")
        )
    columns = [cell.strip().lower() for cell in header]
    _check_header(columns)
    max_rows = settings.IMPORT_MAX_ROWS
    count = 0
    for number, cells in records:
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
    # The column names are the file's, the same in every language. A partner with one school
    # is not told of the school column (a file may still have it, empty or with its code).
    offered = COLUMNS if several_schools() else COLUMNS[:-1]
    expected = ", ".join(offered)
    unknown = [column for column in columns if column and column not in COLUMNS]
    if unknown:
        raise ImportFileError(
            # Translators: %(unknown)s lists the unknown column names as they are in the file
            # (in quotes, separated by commas); %(expected)s lists the column names, and
            # %(optional)s those that may be left out (e.g. "password, email and class"),
            # which stay as they are.
            ngettext(
                "The header row has unknown column %(unknown)s. The columns are: %(expected)s "
                "(%(optional)s may be left out).",
                "The header row has unknown columns %(unknown)s. The columns are: %(expected)s "
                "(%(optional)s may be left out).",
                len(unknown),
            )
            % {
                "unknown": ", ".join(value_quoted(column) for column in unknown),
                "expected": expected,
                "optional": get_text_list(
                    [column for column in offered if column not in REQUIRED_COLUMNS], _("and")
                ),
            }
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


def value_quoted(value: str) -> str:
    """Quote a value from the file for a message, cut short."""
    # Translators: A value from the file, quoted.
    return _("\u201c%(value)s\u201d") % {"value": value[:40]}


def _megabytes(size: int) -> str:
    # Translators: A file size in megabytes (millions of bytes), e.g. "1.5 MB".
    return _("%(size)s MB") % {"size": number_format(size / 1_000_000, decimal_pos=1)}
