"""The drop folder (ROSTER_DROP_DIR): each roster file set put there is synced exactly once.

A sweep takes each `*.zip`, or folder holding manifest.csv, that has stopped growing: it is
claimed by an atomic rename into `taken/<timestamp>-<name>` (two sweeps cannot both claim it),
then synced from there. One still being written (its size changes between two looks, or it
was modified in the last few seconds) is left for the next sweep.
"""

from __future__ import annotations

import logging
import os
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from ops.database import DATABASE_TROUBLE
from roster.models import RosterSync
from roster.services import roster_sync_start

logger = logging.getLogger(__name__)

TAKEN = "taken"
# A file modified more recently than this (seconds) may still be being written.
SETTLE_SECONDS = 5.0
# The pause between the two looks at a file's size (seconds).
LOOK_GAP = 1.0


@dataclass(frozen=True)
class Look:
    size: int
    modified: float


def _look(path: Path) -> Look | None:
    """Return a candidate's total size and latest change, or None if it is gone."""
    try:
        if path.is_dir():
            files = [p for p in path.rglob("*") if p.is_file()]
            stats = [p.stat() for p in files] + [path.stat()]
            return Look(sum(s.st_size for s in stats[:-1]), max(s.st_mtime for s in stats))
        stat = path.stat()
    except FileNotFoundError:
        return None
    return Look(stat.st_size, stat.st_mtime)


def drop_candidates(folder: Path) -> list[Path]:
    """Return the folder's zips and folders holding manifest.csv, oldest name first."""
    found = []
    for path in sorted(folder.iterdir()):
        if path.name.startswith(".") or path.name == TAKEN:
            continue
        if (
            path.is_file()
            and path.suffix.lower() == ".zip"
            or path.is_dir()
            and (path / "manifest.csv").is_file()
        ):
            found.append(path)
    return found


def drop_ready(candidates: list[Path], *, gap: float = LOOK_GAP) -> list[Path]:
    """Return the candidates that have stopped changing: two looks alike, none of it recent."""
    if not candidates:
        return []
    first = {path: _look(path) for path in candidates}
    time.sleep(gap)
    now = time.time()
    ready = []
    for path in candidates:
        second = _look(path)
        if second is None or second != first[path]:
            continue
        if now - second.modified < SETTLE_SECONDS:
            continue
        ready.append(path)
    return ready


def drop_claim(path: Path) -> Path | None:
    """Move a candidate into taken/ by one rename; None when another sweep took it first."""
    taken = path.parent / TAKEN
    taken.mkdir(exist_ok=True)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
    target = taken / f"{stamp}-{path.name}"
    try:
        os.rename(path, target)
    except FileNotFoundError:
        return None
    return target


def roster_drop_sweep(folder: str | Path, *, gap: float = LOOK_GAP) -> list[str]:
    """Sync each new file set of the drop folder once; return a line for each (the summary)."""
    folder = Path(folder)
    if not folder.is_dir():
        return [f"The roster drop folder {folder} does not exist: nothing was taken."]
    lines = []
    for path in drop_ready(drop_candidates(folder), gap=gap):
        claimed = drop_claim(path)
        if claimed is None:
            continue
        try:
            sync = roster_sync_start(
                source=claimed, origin=RosterSync.Origin.DROP, filename=path.name
            )
        except DATABASE_TROUBLE:
            # Not synced: put it back, so that the sweep after the outage takes it.
            if not path.exists():
                os.rename(claimed, path)
            raise
        except Exception:
            logger.exception("roster drop %s could not be synced", path.name)
            lines.append(f"roster drop {path.name}: could not be synced; it is in {claimed}.")
            continue
        lines.append(sync.summary_line())
    return lines
