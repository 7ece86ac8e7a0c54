"""An archive folder holds one cluster's WAL (`db archive`): its record names the cluster,
a folder holding another's, or a record damaged, is refused in one line before anything is written,
and a new folder is claimed for this one."""

from __future__ import annotations

import json

import pytest

from evalledger.core.errors import EvalledgerError
from evalledger.ops import backup

THIS, OTHER = "7714265523656549264", "7714265523656549265"


def test_a_new_folder_is_claimed_for_this_cluster_and_then_taken_again(tmp_path):
    folder = tmp_path / "archive"
    backup._claim(folder, THIS)
    record = json.loads((folder / backup.ARCHIVE_INFO).read_text())
    assert record == {"format": "evalledger-archive", "system_identifier": THIS}
    backup._claim(folder, THIS)  # the same cluster's archive: taken as it is
    assert sorted(p.name for p in folder.iterdir()) == [backup.ARCHIVE_INFO]


def test_another_clusters_archive_is_refused_naming_both(tmp_path):
    folder = tmp_path / "archive"
    backup._claim(folder, OTHER)
    with pytest.raises(EvalledgerError) as refused:
        backup._claim(folder, THIS)
    assert str(refused.value) == (f"{folder} archives another cluster (system {OTHER}, this one is {THIS}): give "
                                  "each cluster an archive folder of its own")


@pytest.mark.parametrize("damaged", ["not json", "[1, 2]", '{"format": "evalledger-archive"}', "",
                                     '{"system_identifier": 7714265523656549264}',
                                     # which cluster? json would read the last; the door reads neither
                                     f'{{"system_identifier": "{OTHER}", "system_identifier": "{THIS}"}}'])
def test_a_damaged_record_is_refused_in_one_line_and_left_as_it_was(tmp_path, damaged):
    folder = tmp_path / "archive"
    folder.mkdir()
    (folder / backup.ARCHIVE_INFO).write_text(damaged)
    with pytest.raises(EvalledgerError) as refused:
        backup._claim(folder, THIS)
    assert str(refused.value) == (f"{folder / backup.ARCHIVE_INFO}: not the record `db archive` writes "
                                  "(damaged?): it names which cluster the archive holds: put back a copy of it, or "
                                  "name a new folder")
    assert (folder / backup.ARCHIVE_INFO).read_text() == damaged and not (folder / "wal").exists()


def test_a_folder_with_other_files_is_not_taken_for_an_archive(tmp_path):
    folder = tmp_path / "photos"
    folder.mkdir()
    (folder / "cat.jpg").write_bytes(b"\xff\xd8")
    with pytest.raises(EvalledgerError, match=r": not empty and not an archive: name a new folder$"):
        backup._claim(folder, THIS)
    assert not (folder / backup.ARCHIVE_INFO).exists()


@pytest.mark.parametrize("damaged", ['{"made_at": "yesterday"}', "{}", "not json", '{"made_at": "2026-01-01T00:00:00"}',
                                     '{"made_at": "2026-01-01T00:00:00+00:00", "made_at": "2027-01-01T00:00:00+00:00"}'])
def test_a_base_backup_whose_record_is_damaged_is_named_in_one_line(tmp_path, damaged):
    """A restore orders an archive's base backups by when each was made: a base whose record is
    damaged is named, not a traceback."""
    base = tmp_path / "archive" / "base" / "20260101T000000Z"
    base.mkdir(parents=True)
    (base / backup.BACKUP_INFO).write_text(damaged)
    with pytest.raises(EvalledgerError) as refused:
        backup._bases(tmp_path / "archive")
    assert str(refused.value) == (f"{base}: no readable {backup.BACKUP_INFO}: not a backup made by "
                                  "`evalledger db backup`")


def test_base_backups_are_ordered_by_when_each_was_made_not_by_name(tmp_path):
    made = {"b-first": "2026-01-01T00:00:00+00:00", "a-second": "2026-02-01T00:00:00+00:00"}
    for name, when in made.items():
        (tmp_path / "base" / name).mkdir(parents=True)
        (tmp_path / "base" / name / backup.BACKUP_INFO).write_text(json.dumps({"made_at": when}))
    assert [p.name for _when, p in backup._bases(tmp_path)] == ["b-first", "a-second"]
