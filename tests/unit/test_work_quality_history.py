"""The seed's SnapshotStore behaviours: naming and sanitising, chronological listing, idempotent
and atomic writes, an empty history, other schema versions skipped with a warning."""

from __future__ import annotations

import os
from datetime import datetime, timedelta, timezone

import pytest

from evalledger.suites.work_quality import go_json, snapshot as s
from evalledger.suites.work_quality.history import SnapshotStore, file_name, sanitize_segment
from evalledger.suites.work_quality.snapshot import Aggregate, Snapshot, SnapshotError

BASE = datetime(2026, 6, 25, 10, 0, 0, tzinfo=timezone.utc)


def snap(name: str, run_id: str, at: datetime, overall: float = 0.5) -> Snapshot:
    return Snapshot(kind="bot", name=name, run_id=run_id, at=at,
                    aggregate=Aggregate(verdicts=[], mean_scores={"overall": overall, "value_for_money": overall}))


@pytest.mark.parametrize("name, segment", [
    ("review-pr", "review-pr"), ("a/b", "a-b"), ("a\\b", "a-b"), ("../../etc", "-----etc".strip(".-")),
    ("..", "unnamed"), ("  spaced name  ", "spaced name"), ("", "unnamed"), ("   ", "unnamed"),
    ("/abs/path/", "abs-path"), ("a..b", "a-b"), (".hidden", "hidden"), ("\u00a0nbsp\u3000", "nbsp"),
    ("\x1cinfo-sep", "\x1cinfo-sep"),  # not a space to Go's unicode.IsSpace, unlike Python's strip()
])
def test_sanitising_as_the_seed_does(name, segment):
    assert sanitize_segment(name) == segment


def test_traversal_never_leaves_the_root(tmp_path):
    store = SnapshotStore(tmp_path / "root")
    path = store.write(snap("../../outside", "../x", BASE))
    assert path.parent.parent == tmp_path / "root"
    assert path.name == "20260625T100000Z__x.json"
    assert path.parent.name == "----outside".strip(".-")


def test_file_name_is_the_utc_second_and_the_sanitised_run_id():
    at = BASE.astimezone(timezone(timedelta(hours=2))).replace(microsecond=999999)
    assert file_name(snap("n", "run/7 b", at)) == "20260625T100000Z__run-7 b.json"


def test_listing_is_chronological_whatever_the_write_order(tmp_path):
    store = SnapshotStore(tmp_path)
    for run_id, hours, overall in (("run-c", 2, 0.8), ("run-a", 0, 0.6), ("run-b", 1, 0.7)):
        store.write(snap("review-pr", run_id, BASE + timedelta(hours=hours), overall))
    assert [p.name for p in store.list("review-pr")] == [
        "20260625T100000Z__run-a.json", "20260625T110000Z__run-b.json", "20260625T120000Z__run-c.json"]
    last, ok = store.last("review-pr")
    assert ok and last.run_id == "run-c" and last.overall() == 0.8


def test_writing_the_same_snapshot_again_is_one_file_with_the_same_bytes(tmp_path):
    store = SnapshotStore(tmp_path)
    first = store.write(snap("nexie", "run-x", BASE))
    before = (first.read_bytes(), first.stat().st_mtime_ns)
    assert store.write(snap("nexie", "run-x", BASE)) == first
    assert (first.read_bytes(), first.stat().st_mtime_ns) == before
    assert len(store.list("nexie")) == 1


def test_a_different_snapshot_under_the_same_name_is_refused(tmp_path):
    store = SnapshotStore(tmp_path)
    path = store.write(snap("nexie", "run-x", BASE, 0.5))
    before = path.read_bytes()
    with pytest.raises(SnapshotError, match="already holds a different snapshot"):
        store.write(snap("nexie", "run-x", BASE, 0.9))
    assert path.read_bytes() == before
    assert sorted(os.listdir(path.parent)) == [path.name]  # no temporary file left behind


def test_the_file_is_exactly_the_encoders_bytes_and_no_temporary_file_is_listed(tmp_path):
    store = SnapshotStore(tmp_path)
    one = snap("t", "r", BASE)
    (tmp_path / "t").mkdir()
    (tmp_path / "t" / ".20260625T090000Z__crashed.json.x.tmp").write_text("{half")  # a crashed writer's leftover
    path = store.write(one)
    assert path.read_bytes() == go_json.dumps_bytes(one)
    assert store.list("t") == [path]


def test_missing_directory_lists_empty_and_last_has_nothing(tmp_path):
    store = SnapshotStore(tmp_path / "never-created")
    assert store.list("never-run") == []
    assert store.last("never-run") == (None, False)
    assert not (tmp_path / "never-created").exists()


def test_other_schema_versions_are_skipped_with_a_warning(tmp_path):
    warnings = []
    store = SnapshotStore(tmp_path, warn=warnings.append)
    store.write(snap("t", "old", BASE))
    newer = snap("t", "future", BASE + timedelta(hours=1))
    newer.schema_version = 2
    future_path = store.write(newer)
    last, ok = store.last("t")
    assert ok and last.run_id == "old"
    assert warnings == [f"{future_path}: schema_version 2, not 1: skipped"]
    assert [p.name for p, _ in store.history("t")] == ["20260625T100000Z__old.json"]


def test_a_broken_file_names_itself_and_its_line(tmp_path):
    store = SnapshotStore(tmp_path)
    (tmp_path / "t").mkdir()
    (tmp_path / "t" / "20260101T000000Z__r.json").write_text('{\n  "kind": "bot",\n  "name": 7\n}\n')
    with pytest.raises(SnapshotError, match=r"20260101T000000Z__r.json:3: \$.name: expected a string"):
        store.last("t")
    (tmp_path / "t" / "20260102T000000Z__r.json").write_text('{\n  "kind": \n')
    with pytest.raises(SnapshotError, match=r"20260102T000000Z__r.json:3: column 1: not JSON"):
        store.last("t")


def test_directories_and_other_files_are_not_history(tmp_path):
    store = SnapshotStore(tmp_path)
    path = store.write(snap("t", "r", BASE))
    (tmp_path / "t" / "notes.txt").write_text("x")
    (tmp_path / "t" / "sub.json").mkdir()
    assert store.list("t") == [path]


def test_a_nul_in_a_name_is_refused_before_anything_is_written(tmp_path):
    with pytest.raises(SnapshotError, match="run_id: a NUL character cannot be part of a file name"):
        SnapshotStore(tmp_path).write(snap("t", "a\x00b", BASE))
    assert list(tmp_path.iterdir()) == []
