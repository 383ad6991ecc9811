"""Reading a OneRoster 1.1 or 1.2 CSV file set (a folder, a zip or an uploaded zip), checked.

Nothing is ever extracted: a zip's entries are read as streams, and before a byte is inflated
their names are checked (a name that climbs out of the set refuses the zip) and their sizes
summed (a zip bomb is refused). The manifest gives the version and how each file comes (bulk,
delta or absent); roster.row_records then reads the files one by one, each streamed.
"""

from __future__ import annotations

import re
import zipfile
import zlib
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path, PurePosixPath
from typing import BinaryIO

from django.conf import settings
from django.utils.formats import number_format
from django.utils.translation import gettext as _

from roster.csv_rows import FileRead, csv_records
from roster.file_rows import FileRows
from roster.records import ABSENT, BULK, DELTA, FILES, Problem, RosterFileSet, RosterUnreadable
from roster.row_records import read_files

MANIFEST = "manifest.csv"
VERSION = re.compile(r"v?1\.([12])(?:\.0+)*", re.IGNORECASE)
MODES = (BULK, DELTA, ABSENT)
# The order problems are listed in: the manifest, then the files as the manifest lists them.
FILE_ORDER = {
    name: index
    for index, name in enumerate(
        (MANIFEST, *(f"{file}.csv" for file in (*FILES[:3], "roles", *FILES[3:])))
    )
}
ZIP_METHODS = (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED, zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA)

OpenFile = Callable[[str], BinaryIO | None]


def read_roster(source: Path | BinaryIO, *, max_bytes: int | None = None) -> RosterFileSet:
    """Return a roster's files read and checked, or raise RosterUnreadable saying why not.

    `source` is a folder, a zip (a path, or a file object such as an upload); `max_bytes`
    bounds the zip and what it unzips to (by default ROSTER_MAX_UPLOAD_BYTES).
    """
    limit = settings.ROSTER_MAX_UPLOAD_BYTES if max_bytes is None else max_bytes
    source = Path(source) if isinstance(source, str) else source
    with _opened(source, limit) as open_file:
        version, modes, problems = _manifest(open_file)
        found = RosterFileSet(version=version, modes=modes, problems=problems)
        try:
            read_files(FileRows(found, open_file))
        except (zipfile.BadZipFile, zlib.error, EOFError) as error:
            raise RosterUnreadable(
                _("The zip is damaged (it may not have been copied whole): make it again.")
            ) from error
        except OSError as error:
            raise RosterUnreadable(
                _("One of the roster's files could not be read from the disk.")
            ) from error
    found.problems.sort(key=lambda problem: (FILE_ORDER.get(problem.file, 99), problem.line))
    found.empty_files.sort(key=FILE_ORDER.get)
    found.truncated_files.sort(key=FILE_ORDER.get)
    return found


@contextmanager
def _opened(source: Path | BinaryIO, limit: int) -> Iterator[OpenFile]:
    """Yield a function that opens one file of the set by name, or returns None."""
    with ExitStack() as stack:
        if not isinstance(source, Path):
            yield _zip(source, limit, stack, _size_of(source))
        elif source.is_dir():
            yield _folder(source, limit)
        elif source.is_file() and zipfile.is_zipfile(source):
            file = stack.enter_context(source.open("rb"))
            yield _zip(file, limit, stack, source.stat().st_size)
        elif source.is_file() and source.name.lower() == MANIFEST:
            yield _folder(source.parent, limit)
        elif source.exists():
            raise RosterUnreadable(
                _("%(name)s is neither a zip nor a folder of OneRoster files.")
                % {"name": source.name}
            )
        else:
            raise RosterUnreadable(_("There is no file or folder at %(path)s.") % {"path": source})


def _size_of(file: BinaryIO) -> int:
    size = getattr(file, "size", None)  # an upload knows its size
    if size is None:
        size = file.seek(0, 2)
        file.seek(0)
    return size


def _too_big(size: int, limit: int, *, unzipped: bool = False) -> RosterUnreadable:
    values = {"size": _megabytes(size), "limit": _megabytes(limit)}
    if unzipped:
        message = _(
            "The roster's files come to %(size)s once unzipped; the most this portal "
            "reads is %(limit)s."
        )
    else:
        message = _("The roster is %(size)s; the most this portal reads is %(limit)s.")
    return RosterUnreadable(message % values)


def _megabytes(size: int) -> str:
    # Translators: A file size in megabytes (millions of bytes), e.g. "1.5 MB".
    return _("%(size)s MB") % {"size": number_format(size / 1_000_000, decimal_pos=1)}


def _folder(folder: Path, limit: int) -> OpenFile:
    """Return the opener of a folder's files (matched by name in any case)."""
    files = {}
    for path in folder.iterdir():
        outside = path.is_symlink() and path.resolve().parent != folder.resolve()
        if outside and path.name.lower().endswith(".csv"):
            raise RosterUnreadable(
                _("%(name)s links to a file outside the roster's folder; it is not read.")
                % {"name": path.name}
            )
        if path.is_file():
            files.setdefault(path.name.lower(), path)
    size = sum(path.stat().st_size for name, path in files.items() if name.endswith(".csv"))
    if size > limit:
        raise _too_big(size, limit)

    def open_file(name: str) -> BinaryIO | None:
        path = files.get(name.lower())
        return path.open("rb") if path else None

    return open_file


def _zip(file: BinaryIO, limit: int, stack: ExitStack, size: int) -> OpenFile:
    """Return the opener of a zip's entries, once its names and sizes are safe."""
    if size > limit:
        raise _too_big(size, limit)
    try:
        archive = stack.enter_context(zipfile.ZipFile(file))
    except (zipfile.BadZipFile, OSError, EOFError) as error:
        raise RosterUnreadable(
            _("The file is not a zip of OneRoster files (or the zip is damaged).")
        ) from error
    entries = archive.infolist()
    for entry in entries:
        _check_name(entry.filename)
    unzipped = sum(entry.file_size for entry in entries)
    if unzipped > limit:
        raise _too_big(unzipped, limit, unzipped=True)
    folder = _zip_folder(entries)
    files: dict[str, zipfile.ZipInfo] = {}
    for entry in entries:
        name = entry.filename.replace("\\", "/")
        if not entry.is_dir() and name.startswith(folder) and "/" not in name[len(folder) :]:
            files.setdefault(name[len(folder) :].lower(), entry)

    def open_file(name: str) -> BinaryIO | None:
        entry = files.get(name.lower())
        if entry is None:
            return None
        if entry.flag_bits & 0x1:
            raise RosterUnreadable(_("The zip is protected by a password; make it without one."))
        if entry.compress_type not in ZIP_METHODS:
            raise RosterUnreadable(
                _(
                    "The zip is compressed in a way this portal cannot read; make it again with "
                    "ordinary (deflate) compression."
                )
            )
        return archive.open(entry)

    return open_file


def _check_name(name: str) -> None:
    """Refuse a zip holding an entry whose name points outside the set (path traversal)."""
    path = PurePosixPath(name.replace("\\", "/"))
    if path.is_absolute() or ".." in path.parts or re.match(r"[A-Za-z]:", name):
        raise RosterUnreadable(
            _(
                "The zip holds an entry named \u201c%(name)s\u201d, which points outside the "
                "roster's folder; such a zip is refused."
            )
            % {"name": name[:80]}
        )


def _zip_folder(entries: list[zipfile.ZipInfo]) -> str:
    """Return the folder the zip's manifest.csv is in ("" at the top, as the spec has it)."""
    folders = [
        entry.filename.replace("\\", "/")[: -len(MANIFEST)]
        for entry in entries
        if entry.filename.replace("\\", "/").lower().rsplit("/", 1)[-1] == MANIFEST
        and not entry.filename.startswith("__MACOSX/")
    ]
    # A folder zipped as a whole puts every file one level down; the spec puts them at the top.
    if "" in folders or len(folders) != 1:
        return ""
    return folders[0]


def _manifest(open_file: OpenFile) -> tuple[str, dict[str, str], list[Problem]]:
    """Return the set's version, each file's mode, and the manifest's own problems."""
    stream = open_file(MANIFEST)
    if stream is None:
        raise RosterUnreadable(
            _(
                "The roster has no manifest.csv, the file that says which OneRoster version it "
                "is and how each file is given."
            )
        )
    read = FileRead(MANIFEST)
    properties: dict[str, tuple[int, str]] = {}
    with stream:
        for line, values in csv_records(stream, read, required=("propertyName", "value")):
            properties.setdefault(values["propertyName"].lower(), (line, values["value"]))
    if read.unreadable or not properties:
        raise RosterUnreadable(
            _(
                "manifest.csv cannot be read: it must be lines of propertyName,value under that "
                "header."
            )
        )
    version = _version(properties.get("oneroster.version", (0, ""))[1])
    modes = {}
    for name in (*FILES, "roles") if version == "1.2" else FILES:
        line, mode = properties.get(f"file.{name}".lower(), (0, ABSENT))
        modes[name] = mode.lower() if mode.lower() in MODES else ABSENT
        if modes[name] != mode.lower():
            read.problem(
                line,
                _(
                    "file.%(name)s is \u201c%(mode)s\u201d, which is not bulk, "
                    "delta or absent: %(name)s.csv is read as absent."
                )
                % {"name": name, "mode": mode[:40]},
            )
    return version, modes, read.problems


def _version(given: str) -> str:
    """Return "1.1" or "1.2" from the manifest's oneroster.version, or refuse the set."""
    found = VERSION.fullmatch(given.strip())
    if found:
        return f"1.{found.group(1)}"
    if not given:
        raise RosterUnreadable(
            _(
                "manifest.csv does not say which OneRoster version the files are "
                "(oneroster.version)."
            )
        )
    raise RosterUnreadable(
        _("The files are OneRoster version %(version)s; this portal reads versions 1.1 and 1.2.")
        % {"version": given[:20]}
    )
