"""files.Staged: a file written and fsynced beside its place shows there only once published (the
replay receipt is staged while its run's completion commits, and published only after)."""

from __future__ import annotations

from evalledger.core import files


def test_a_staged_file_takes_its_place_only_when_published(tmp_path):
    target = tmp_path / "r.json"
    target.write_text("old")
    staged = files.Staged(target, "new")
    assert target.read_text() == "old"
    assert len(list(tmp_path.iterdir())) == 2  # the old file and the staged one beside it
    staged.publish()
    assert target.read_text() == "new"
    assert [p.name for p in tmp_path.iterdir()] == ["r.json"]


def test_a_discarded_stage_leaves_the_place_as_it_was(tmp_path):
    target = tmp_path / "r.json"
    files.Staged(target, "never shown").discard()
    assert list(tmp_path.iterdir()) == []
    target.write_text("old")
    files.Staged(target, "never shown").discard()
    assert [(p.name, p.read_text()) for p in tmp_path.iterdir()] == [("r.json", "old")]
