"""One OneRoster CSV file read as a stream: its header matched, each record with its line.

A file's faults are `Problem`s, never exceptions: a line holding NUL or bytes that are not
UTF-8, a record with too few values or open quotes, a header without a column the file needs.
Values are checked and converted here too (dates, times, true/false, lists), each raising
`RowError` with the sentence a school admin reads.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from typing import BinaryIO

from django.utils.translation import gettext as _

from roster.records import Problem

UTF8_BOM = b"\xef\xbb\xbf"
UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")
DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
# What follows a date in a date-time: "T08:00:00", ".000", then "Z" or an offset.
STAMP = re.compile(r"\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?")
YEAR = re.compile(r"(\d{4})(?:\s*[-/]\s*(\d{2}|\d{4}))?")


class RowError(Exception):
    """A row cannot be used; the message says why, without the file and line."""


@dataclass
class FileRead:
    """What reading one file found, besides its records."""

    name: str  # "users.csv"
    records: int = 0  # records that are not blank, good or bad
    unreadable: bool = False  # no usable header: none of its rows could be read
    truncated: bool = False  # its last record is cut off
    problems: list[Problem] = field(default_factory=list)

    def problem(self, line: int, reason: str, sourced_id: str = "") -> None:
        """Note a problem of this file at a line (0: the file as a whole)."""
        # The file and line are the Problem's own fields: pages and the result file show them
        # in columns of their own, as they show the planner's problems.
        self.problems.append(Problem(self.name, line, reason, sourced_id))


def csv_records(
    stream: BinaryIO,
    read: FileRead,
    *,
    required: Iterable[str],
    optional: Iterable[str] = (),
    id_column: str = "sourcedId",
) -> Iterator[tuple[int, dict[str, str]]]:
    """Yield each record's first line and its values by column name (the ones asked for).

    A record that cannot be read is a problem naming its `id_column` value when it has one.
    """
    bad_lines: dict[int, str] = {}
    lines = _text_lines(stream, read, bad_lines)
    reader = csv.reader(lines, strict=True)
    header = _header(reader, read, bad_lines)
    if header is None:
        return
    columns = _columns(header, read, required, optional)
    if columns is None:
        return
    width, at = len(header), columns.get(id_column, len(header))
    short = False
    while True:
        line = reader.line_num + 1
        try:
            values = next(reader)
        except StopIteration:
            break
        except csv.Error as error:
            read.records += 1
            short = "unexpected end of data" in str(error)
            read.problem(line, _unclosed() if short else _csv_fault(str(error)))
            continue
        if not "".join(values).strip():
            continue  # a blank line, often at the end of an export
        read.records += 1
        short = len(values) < width
        fault = _line_fault(bad_lines, line, reader.line_num) if bad_lines else ""
        counts = {"count": len(values), "width": width}
        if not fault and short:
            fault = _("it has %(count)s values where the header has %(width)s.") % counts
        elif not fault and len(values) > width and any(v.strip() for v in values[width:]):
            fault = (
                _(
                    "it has %(count)s values where the header has %(width)s; a value holding a "
                    "comma must be in quote marks."
                )
                % counts
            )
        if fault:
            read.problem(line, fault, values[at].strip() if at < len(values) else "")
        else:
            yield line, {name: values[index].strip() for name, index in columns.items()}
    read.truncated = short


def _csv_fault(error: str) -> str:
    if error.startswith("field larger than field limit"):
        return _(
            "a value is longer than %(limit)s characters, far more than a roster's values "
            "take: a quote mark may be left open on this line."
        ) % {"limit": csv.field_size_limit()}
    return _('its quote marks (") are not where CSV puts them.')


def _unclosed() -> str:
    return _(
        "a quoted value starts on this line and is never closed: the file ends inside it, "
        "so it looks cut off."
    )


def _text_lines(stream: BinaryIO, read: FileRead, bad_lines: dict[int, str]) -> Iterator[str]:
    """Yield the file's lines as text; note the lines holding NUL or bytes that are not UTF-8."""
    for number, raw in enumerate(stream, start=1):
        if number == 1:
            if raw.startswith(UTF16_BOMS):
                read.problem(
                    0,
                    _(
                        "it is saved as UTF-16 text; the roster's files must be UTF-8 "
                        "(a spreadsheet's \u201cCSV UTF-8\u201d)."
                    ),
                )
                read.unreadable = True
                return
            raw = raw.removeprefix(UTF8_BOM)
        if b"\x00" in raw:
            bad_lines[number] = _(
                "it holds a NUL character (a zero byte), which text never "
                "has: the file may be damaged."
            )
        try:
            yield raw.decode("utf-8")
        except UnicodeDecodeError:
            bad_lines.setdefault(
                number, _("it is not UTF-8 text; save the file as \u201cCSV UTF-8\u201d.")
            )
            yield raw.decode("utf-8", "replace")


def _line_fault(bad_lines: dict[int, str], first: int, last: int) -> str:
    return next((bad_lines[n] for n in range(first, last + 1) if n in bad_lines), "")


def _header(reader, read: FileRead, bad_lines: dict[int, str]) -> list[str] | None:
    """Return the header's names, or None when the file has none (noting why)."""
    while True:
        try:
            header = next(reader)
        except StopIteration:
            return None  # nothing at all: an empty file
        except csv.Error:
            header = None
        if header is None or _line_fault(bad_lines, 1, reader.line_num):
            if not read.unreadable:
                read.problem(1, _("its first line is not a header of column names."))
            read.unreadable = True
            return None
        if any(name.strip() for name in header):
            return header


def _columns(
    header: list[str], read: FileRead, required: Iterable[str], optional: Iterable[str]
) -> dict[str, int] | None:
    """Return where each wanted column is; exporters' case is forgiven. None: one is missing."""
    found: dict[str, int] = {}
    for index, name in enumerate(header):
        found.setdefault(name.strip().removeprefix("\ufeff").lower(), index)
    missing = [name for name in required if name.lower() not in found]
    if missing:
        read.problem(
            1,
            _("its header has no %(columns)s column, so none of its rows can be read.")
            % {"columns": ", ".join(missing)},
        )
        read.unreadable = True
        return None
    wanted = [*required, *optional]
    return {name: found[name.lower()] for name in wanted if name.lower() in found}


def parse_date(value: str, column: str) -> date:
    """Return a YYYY-MM-DD value (a date-time's date part too) as a date."""
    try:
        if DATE.match(value):
            return date.fromisoformat(value[:10])
    except ValueError:
        pass
    raise RowError(
        _("%(column)s '%(value)s' is not a date (YYYY-MM-DD).")
        % {"column": column, "value": value[:40]}
    )


def parse_stamp(value: str) -> datetime | None:
    """Return dateLastModified as an aware datetime (UTC when it names no zone), or None."""
    if not value:
        return None
    try:
        if STAMP.fullmatch(value):
            stamp = datetime.fromisoformat(value)
            return stamp if stamp.tzinfo else stamp.replace(tzinfo=UTC)
    except ValueError:
        pass
    raise RowError(
        _("dateLastModified '%(value)s' is not a date and time (such as 2026-09-01T08:00:00.000Z).")
        % {"value": value[:40]}
    )


def parse_bool(value: str, column: str, *, blank: bool) -> bool:
    """Return a true/false value (in any case); a blank one is `blank`."""
    spelled = value.lower()
    if spelled in ("true", "false"):
        return spelled == "true"
    if not value:
        return blank
    raise RowError(
        _("%(column)s '%(value)s' is neither true nor false.")
        % {"column": column, "value": value[:40]}
    )


def parse_year(value: str, end: date) -> str:
    """Return a schoolYear as the year it ends in: "2027", "2026-2027" and "2026/27" alike."""
    if not value:
        return str(end.year)
    found = YEAR.fullmatch(value)
    if not found:
        raise RowError(
            _("schoolYear '%(value)s' is not a year (such as 2027).") % {"value": value[:40]}
        )
    first, second = found.groups()
    if not second:
        return first
    return second if len(second) == 4 else first[:2] + second


def split_list(value: str) -> tuple[str, ...]:
    """Return a comma-separated list's items (grades, sourcedIds), blanks left out."""
    if "," not in value:
        return (value,) if value else ()
    return tuple(item for item in (part.strip() for part in value.split(",")) if item)
