"""The drop folder's sweep: each finished file set taken exactly once, one being written left."""

import io
import os
import time

import pytest
from django.core.management import call_command
from django.db import OperationalError

from ops.management.commands.serve import children
from roster import drop
from roster.models import RosterSync

pytestmark = pytest.mark.django_db

AN_HOUR_AGO = time.time() - 3600


def put(folder, name: str, data: bytes = b"PK\x05\x06" + b"\0" * 18, *, settled: bool = True):
    """Put a file in the folder, written an hour ago unless `settled` is False."""
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    if settled:
        os.utime(path, (AN_HOUR_AGO, AN_HOUR_AGO))
        os.utime(path.parent, (AN_HOUR_AGO, AN_HOUR_AGO))
    return path


@pytest.fixture
def started(monkeypatch):
    """Record each call into roster_sync_start and answer with a sync, as the service does."""
    calls = []

    def start(**kwargs):
        calls.append(kwargs)
        return RosterSync.objects.create(
            origin=kwargs["origin"], filename=kwargs["filename"], state=RosterSync.State.APPLIED
        )

    monkeypatch.setattr(drop, "roster_sync_start", start)
    return calls


def test_without_a_drop_folder_there_is_nothing_to_do(settings, started):
    settings.ROSTER_DROP_DIR = ""
    out = io.StringIO()

    call_command("sweep_roster", stdout=out)

    assert out.getvalue().strip() == "Nothing to do."
    assert started == []


def test_each_zip_and_roster_folder_is_taken_once(settings, tmp_path, started):
    settings.ROSTER_DROP_DIR = str(tmp_path)
    put(tmp_path, "monday.zip")
    put(tmp_path, "tuesday/manifest.csv", b"propertyName,value\n")
    put(tmp_path, "notes.txt", b"not a roster")
    put(tmp_path, "photos/cat.jpg", b"no manifest")
    out = io.StringIO()

    call_command("sweep_roster", stdout=out)

    assert [call["filename"] for call in started] == ["monday.zip", "tuesday"]
    for call in started:
        assert call["origin"] == RosterSync.Origin.DROP
        assert call["source"].parent == tmp_path / "taken"
        assert call["source"].name.endswith("-" + call["filename"])
        assert call["source"].exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt", "photos", "taken"]
    lines = out.getvalue().splitlines()
    assert len(lines) == 2 and all(line.startswith("roster sync ") for line in lines)

    assert drop.roster_drop_sweep(tmp_path, gap=0) == []
    assert len(started) == 2


def test_a_file_still_being_written_is_left_for_the_next_sweep(tmp_path, started):
    put(tmp_path, "fresh.zip", settled=False)

    assert drop.roster_drop_sweep(tmp_path, gap=0) == []
    assert (tmp_path / "fresh.zip").exists() and started == []

    os.utime(tmp_path / "fresh.zip", (AN_HOUR_AGO, AN_HOUR_AGO))
    assert len(drop.roster_drop_sweep(tmp_path, gap=0)) == 1
    assert [call["filename"] for call in started] == ["fresh.zip"]


def test_a_file_growing_between_two_looks_is_left(tmp_path, started, monkeypatch):
    growing = put(tmp_path, "growing.zip")

    def more_arrives(_seconds):
        with growing.open("ab") as more:
            more.write(b"more")
        os.utime(growing, (AN_HOUR_AGO, AN_HOUR_AGO))  # a copy that keeps the old time

    monkeypatch.setattr(drop.time, "sleep", more_arrives)

    assert drop.roster_drop_sweep(tmp_path) == []
    assert growing.exists() and started == []


def test_a_file_another_sweep_claimed_first_is_skipped(tmp_path):
    path = put(tmp_path, "raced.zip")
    assert drop.drop_claim(path) is not None

    assert drop.drop_claim(path) is None
    assert len(list((tmp_path / "taken").iterdir())) == 1


def test_a_database_outage_puts_the_file_back_for_the_next_sweep(tmp_path, monkeypatch):
    put(tmp_path, "outage.zip")

    def unreachable(**kwargs):
        raise OperationalError("server closed the connection unexpectedly")

    monkeypatch.setattr(drop, "roster_sync_start", unreachable)

    with pytest.raises(OperationalError):
        drop.roster_drop_sweep(tmp_path, gap=0)
    assert (tmp_path / "outage.zip").exists()
    assert list((tmp_path / "taken").iterdir()) == []


def test_a_file_set_the_service_cannot_take_stays_taken_and_is_named(tmp_path, monkeypatch):
    put(tmp_path, "odd.zip")

    def refuses(**kwargs):
        raise ValueError("unreadable")

    monkeypatch.setattr(drop, "roster_sync_start", refuses)

    lines = drop.roster_drop_sweep(tmp_path, gap=0)

    assert len(lines) == 1 and lines[0].startswith("roster drop odd.zip: could not be synced")
    assert not (tmp_path / "odd.zip").exists()
    assert drop.roster_drop_sweep(tmp_path, gap=0) == []


def test_a_missing_drop_folder_is_said(tmp_path):
    lines = drop.roster_drop_sweep(tmp_path / "absent", gap=0)

    assert lines == [
        f"The roster drop folder {tmp_path / 'absent'} does not exist: nothing was taken."
    ]


def test_serve_runs_the_roster_sweep_with_or_without_a_drop_folder(settings, tmp_path):
    # Without a drop folder it still takes up syncs whose worker died (roster.background).
    for folder in ("", str(tmp_path)):
        settings.ROSTER_DROP_DIR = folder
        found = children("127.0.0.1", 8000, workers=False, sweeps=True)

        assert "sweep_imports" in [child.name for child in found]
        roster = [list(child.args[-3:]) for child in found if child.name == "sweep_roster"]
        assert roster == [["sweep_roster", "--every", "30"]]
