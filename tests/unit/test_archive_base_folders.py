"""An archive's base backups: a new folder per backup, however fast they come, kept newest first."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

from evalledger.ops import backup


def _made(folder: Path, at: datetime) -> Path:
    folder.mkdir(parents=True)
    (folder / backup.BACKUP_INFO).write_text(json.dumps({"made_at": at.isoformat()}))
    (folder / "backup_label").write_text("LABEL: a folder, not a cluster\n")  # names no WAL file to clean up
    return folder


def test_a_second_backup_in_the_same_second_gets_a_folder_of_its_own(tmp_path, monkeypatch):
    moment = datetime(2026, 12, 5, 15, 11, 26, 400000, tzinfo=timezone.utc)

    class Frozen(datetime):
        @classmethod
        def now(cls, tz=None):
            return moment

    monkeypatch.setattr(backup, "datetime", Frozen)
    base = tmp_path / "base"
    first = backup._new_base_folder(base)
    assert first.name == "20261205T151126Z"
    first.mkdir(parents=True)
    second = backup._new_base_folder(base)
    assert second.name == "20261205T151126Z-2"
    second.mkdir()
    assert backup._new_base_folder(base).name == "20261205T151126Z-3"


def test_keep_removes_the_oldest_made_whatever_their_names_sort_as(tmp_path):
    start = datetime(2026, 12, 5, 15, 11, 26, tzinfo=timezone.utc)
    # "-10" sorts before "-2" by name; by when they were made it is the newest.
    names = ["20261205T151126Z", *(f"20261205T151126Z-{n}" for n in range(2, 11))]
    for i, name in enumerate(names):
        _made(tmp_path / "base" / name, start + timedelta(milliseconds=i))
    removed = backup._prune(tmp_path, keep=2)
    assert sorted(p.name for p in removed) == sorted(names[:-2])
    assert sorted(p.name for p in (tmp_path / "base").iterdir()) == sorted(names[-2:])
