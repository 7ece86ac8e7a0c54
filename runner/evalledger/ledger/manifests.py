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


def _value(shape: canon.Shape, parts: list[str | None], column: str):
    """The JSON value of column in a row's canon-v1 parts (None when NULL or no such column)."""
    try:
        i = shape.columns.index(column)
    except ValueError:
        return None
    part = parts[i]
    return None if part is None else check.parse_json(part[len(shape.prefixes[i]):])


def _run_named(key: str) -> str | None:
    try:
        found = check.parse_json(key)
    except (ValueError, check.NotCanonical):
        return None
    return found.get("eval_run_id") if isinstance(found, dict) else None


class Runs:
    """The manifests the journal holds and the runs' rows verify reads; then what does not match."""

    def __init__(self) -> None:
        self.manifests: dict[str, Manifest] = {}
        self.twice: list[tuple[str, int]] = []
        self.members: dict[str, set] = collections.defaultdict(set)
        self.completed: list[str] = []

    def manifest(self, entry_id: int, txid: int, key: str) -> None:
        """A MANIFEST entry whose form verify found sound (its items canonical, in order, making its root)."""
        items = frozenset((item["table"], check.canonical_json(item["key"])) for item in check.parse_json(key))
        runs = [_run_named(k) for t, k in items if t == "brain_eval_log"]
        run = runs[0] if len(runs) == 1 else None
        if run is None:
            return  # verify's shape check names a manifest not of one run
        if run in self.manifests:
            self.twice.append((run, entry_id))
            return
        self.manifests[run] = Manifest(entry_id, txid, items)

    def row(self, shape: canon.Shape, parts: list[str | None], key: str) -> None:
        """A row verify read: the run it belongs to, and the shared rows it makes that run's."""
        table = shape.table
        if table not in RUN_TABLES:
            return
        run = _value(shape, parts, "eval_run_id")
        if run is None:
            return
        self.members[run].add((table, key))
        if table in LINKS:
            column, linked, linked_key = LINKS[table]
            value = _value(shape, parts, column)
            if value is not None:
                self.members[run].add((linked, check.canonical_json({linked_key: value})))
        if table == "brain_eval_log" and _value(shape, parts, "completed_at") is not None:
            self.completed.append(run)

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
