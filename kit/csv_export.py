"""CSV downloads: streamed row by row, and safe to open in a spreadsheet."""

import csv
import re
from collections.abc import Iterable, Iterator
from datetime import date, datetime
from decimal import Decimal

from django.http import StreamingHttpResponse
from django.utils import translation

# A spreadsheet runs a cell that begins with one of these as a formula (OWASP "CSV
# injection"); tab and carriage return can hide the sign behind white space.
FORMULA_TRIGGERS = ("=", "+", "-", "@", "\t", "\r")
# Every text cell is quoted, so a spreadsheet that splits on commas keeps it whole. One that
# splits on another locale's separator (";" in much of Europe, a tab) or reads a line break
# as the end of a row ignores quotes that do not open its own field, and starts a new cell
# after that character inside the text: a sign there (after spaces or quotes) is
# neutralised as at the start of a cell. A comma inside a cell is left alone: only a
# comma-splitting reader splits there, and it keeps the quoted cell whole.
INNER_TRIGGER = re.compile(r"""([;\t\r\n][ \t"]*)(?=[=+\-@])""")


def spreadsheet_safe(value: object) -> str | int | Decimal:
    """Return a cell value that a spreadsheet shows as text, never runs as a formula."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int | Decimal):
        return value  # numbers are data, negative ones included
    if isinstance(value, datetime | date):
        return value.isoformat()
    text = INNER_TRIGGER.sub(r"\1'", str(value))
    if text.startswith(FORMULA_TRIGGERS):
        return "'" + text
    return text


class _Echo:
    """A file-like object whose write() hands the line back, for csv.writer."""

    def write(self, line: str) -> str:
        return line


_END = object()


def csv_lines(
    header: list[str], rows: Iterable[Iterable[object]], *, language: str
) -> Iterator[str]:
    """Yield CSV lines for a header and rows, one at a time, every cell made safe.

    Each row is read and written in `language`: the server reads the stream after the view has
    returned, when the request's language may no longer be active, so a cell may be a lazy
    translation (a level's name, a row's outcome) and still come out in the reader's language.
    """
    # Numbers (int, Decimal) stay unquoted, so that a spreadsheet reads them as numbers.
    writer = csv.writer(_Echo(), quoting=csv.QUOTE_NONNUMERIC)
    yield "\ufeff"  # so spreadsheets read the file as UTF-8
    # The header is a data interface, the same line as ever: column names of ours, never data.
    yield csv.writer(_Echo()).writerow(header)
    rows = iter(rows)
    while True:
        # Only while this row is made: nothing else the thread does between lines is affected.
        with translation.override(language):
            row = next(rows, _END)
            if row is _END:
                return
            line = writer.writerow([spreadsheet_safe(cell) for cell in row])
        yield line


def csv_download(
    filename: str, header: list[str], rows: Iterable[Iterable[object]]
) -> StreamingHttpResponse:
    """Return a streamed CSV attachment; memory stays flat however many rows there are."""
    lines = csv_lines(header, rows, language=translation.get_language())
    # Said, not left to guess: the bytes are UTF-8 (with a BOM for spreadsheets, csv_lines).
    response = StreamingHttpResponse(lines, content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    response["Cache-Control"] = "no-store"
    return response
