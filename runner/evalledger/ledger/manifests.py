"""verify's check of every completed brain-eval run's manifest against the journal (issue 35, item 3).

A run's completion journals a MANIFEST entry naming each of the run's rows by table and key
(brain_eval_manifest_v1). verify holds the journal to it, both ways:

- every row the manifest names has a journal entry before the manifest's (a row named with no
  entry is `manifest_unjournalled`);
- every row of the run the ledger holds, or the journal names by its key, is one the manifest
  names (a row journalled after its run completed, or written with the journal off, is
  `manifest_unnamed`);
- every completed run has its manifest (`manifest_missing`), and one only (`manifest_twice`).

Which rows are a run's is read from the rows verify reads (their `eval_run_id`, and the analyses
and rubric they point at, as brain_eval_manifest_v1 reads them; each row is checked against its
journal entry on the way) and from the journal's keys that name a run, never from the database's
manifest function.
"""

from __future__ import annotations

import collections
import json
from dataclasses import dataclass

from . import canon, check

# The tables whose rows a manifest names by their eval_run_id: brain_eval_manifest_v1's (the proof's
# RUN_TABLES but legal_hold, which a test holds equal), and the shared rows it names by the run's links.
RUN_TABLES = ("brain_eval_log", "brain_eval_question_score", "brain_eval_run_review", "brain_eval_review_entry",
              "brain_eval_suggestion_shown", "brain_eval_harness_run", "brain_eval_harness_answer",
              "brain_eval_judge_suggestion", "brain_eval_reference_shown", "brain_eval_run_closure")
LINKS = {"brain_eval_question_score": ("brain_analysis_id", "brain_analysis_log", "analysis_id"),
         "brain_eval_harness_answer": ("analysis_id", "brain_analysis_log", "analysis_id"),
         "brain_eval_log": ("rubric_id", "rubric", "rubric_id")}


@dataclass(frozen=True)
class Manifest:
    """A MANIFEST entry: its id, its transaction, the (table, key) items it names."""

    entry: int
    txid: int
    items: frozenset


def _raw(shape: canon.Shape, index: int | None, parts: list[str | None]) -> str | None:
    """The canon-v1 text of a column's value (canonical JSON already), None when NULL or no such column."""
    if index is None or parts[index] is None:
        return None
    return parts[index][len(shape.prefixes[index]):]


def _run_named(key: str) -> str | None:
    """The run a key names by its eval_run_id, or None."""
    if '"eval_run_id"' not in key:
        return None
    try:
        found = json.loads(key)
    except ValueError:
        return None
    run = found.get("eval_run_id") if isinstance(found, dict) else None
    return run if isinstance(run, str) else None


class Runs:
    """The manifests the journal holds and the runs' rows verify reads; then what does not match."""

    def __init__(self) -> None:
        self.manifests: dict[str, Manifest] = {}
        self.twice: list[tuple[str, int]] = []
        self.members: dict[str, set] = collections.defaultdict(set)
        self.completed: list[str] = []
        self._columns: dict[str, tuple] = {}

    def manifest(self, entry_id: int, txid: int, texts: list[str]) -> None:
        """A MANIFEST entry whose form verify found sound, by its items' canonical texts
        (`{"key":<key>,"table":"<table>"}`: the table's name last, so the key is what lies between)."""
        items = set()
        for text in texts:
            cut = text.rindex(',"table":"')
            items.add((text[cut + 10:-2], text[7:cut]))
        runs = [_run_named(k) for t, k in items if t == "brain_eval_log"]
        run = runs[0] if len(runs) == 1 else None
        if run is None:
            return  # a manifest not of one run (a finding of its own below, as the run's completion has none)
        if run in self.manifests:
            self.twice.append((run, entry_id))
            return
        self.manifests[run] = Manifest(entry_id, txid, frozenset(items))

    def row(self, shape: canon.Shape, parts: list[str | None], key: str) -> None:
        """A row verify read: the run it belongs to, and the shared rows it makes that run's."""
        if shape.table not in RUN_TABLES:
            return
        where = self._columns.get(shape.table)
        if where is None:
            where = self._columns[shape.table] = self._where(shape)
        run_at, link_at, done_at = where
        run = _raw(shape, run_at, parts)
        if run is None:
            return
        run = run[1:-1]  # a uuid's canonical text: in quotes, nothing escaped
        members = self.members[run]
        members.add((shape.table, key))
        link = _raw(shape, link_at, parts)
        if link is not None:  # the linked row's key, {"<its key column>":<the value's canonical text>}
            _, linked, linked_key = LINKS[shape.table]
            members.add((linked, f'{{"{linked_key}":{link}}}'))
        if done_at is not None and parts[done_at] is not None:
            self.completed.append(run)

    @staticmethod
    def _where(shape: canon.Shape) -> tuple[int | None, int | None, int | None]:
        """Where a run table's eval_run_id, link and completed_at (brain_eval_log's) are among its columns."""
        index = {name: i for i, name in enumerate(shape.columns)}
        link = LINKS.get(shape.table)
        return (index.get("eval_run_id"), index.get(link[0]) if link else None,
                index.get("completed_at") if shape.table == "brain_eval_log" else None)

    def findings(self, first: dict) -> list[tuple]:
        """(kind, table, key, entry, detail) of each mismatch; first maps (table, key) to its first entry (policy.Seen)."""
        named = collections.defaultdict(set)
        for table, key in first:
            if table in RUN_TABLES:
                run = _run_named(key)
                if run is not None:
                    named[run].add((table, key))
        found = []
        for run, entry in self.twice:
            found.append(("manifest_twice", "brain_eval_log", check.canonical_json({"eval_run_id": run}), entry,
                          f"has a second manifest (journal entry {entry}) after journal entry "
                          f"{self.manifests[run].entry}: a run completes once"))
        for run in self.completed:
            if run not in self.manifests:
                found.append(("manifest_missing", "brain_eval_log", check.canonical_json({"eval_run_id": run}), None,
                              "is complete, and the journal holds no manifest of its rows"))
        for run, manifest in sorted(self.manifests.items()):
            where = f"run {run}'s manifest (journal entry {manifest.entry})"
            for table, key in sorted(manifest.items):
                seen = first.get((table, key))
                if seen is None or seen.entry > manifest.entry:
                    after = f": its first is entry {seen.entry}, after it" if seen else ""
                    found.append(("manifest_unjournalled", table, key, manifest.entry,
                                  f"is named by {where}, but the journal has no entry of it before the manifest{after}"))
            for table, key in sorted((self.members.get(run, set()) | named.get(run, set())) - manifest.items):
                seen = first.get((table, key))
                how = (f"journalled by entry {seen.entry}, after the run completed" if seen and seen.entry > manifest.entry
                       else f"journalled by entry {seen.entry}" if seen else "with no journal entry")
                found.append(("manifest_unnamed", table, key, seen.entry if seen else None,
                              f"is a row of run {run}, which {where} does not name ({how})"))
        return found
