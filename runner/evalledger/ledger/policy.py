"""The ledger's own rules on change, written in the package so that verify checks the journal against
them and not against anything the database being checked could rewrite.

Two rules, read from the journal alone (every entry's time and transaction is sealed in a block):

- **A deletion is tampering unless the retention policy allowed it at that moment**: the row was
  past the purge horizon (`HORIZON_YEARS`, purge_horizon_v1's 7 years; test_verify_policy holds them
  equal), counted from its first journal entry (for a row of a run, from its run's: its tier clock is
  the run's) to the deleting transaction's, and no legal hold covered it then (holds and their
  releases are journal entries too). The purge log is a claim, not an excuse.
- **An UPDATE entry the ledger's rules never allow is tampering**: every ledger row is append-only
  but a run's completion (the first UPDATE of a run row, which sets completed_at from NULL and the
  columns its decision computes), a reviewer's change of a question row while its run is open (and
  its completion's own `question_passed`), and the by-month panel tables, rebuilt by a completion or
  a purge.
"""

from __future__ import annotations

import collections
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone

from . import check

# purge_horizon_v1(): the ledger keeps every row this many years (seed 002); captured queries too.
HORIZON_YEARS = 7
# The purge's horizon is taken at its statement's start, a journal entry's time at its transaction's
# (now()): a purge transaction that waited for the holds' lock or dropped partitions before its
# DELETE is allowed this much between the two.
SLACK = timedelta(hours=1)

# Each run table, the column that says it completed, and the columns its completion computes.
RUN_TABLES = {
    "brain_eval_log": ("completed_at", {
        "aggregated_scores", "hard_criteria_passed", "soft_criteria_passed_count", "decision", "decision_rationale",
        "token_cost_usd", "reviewer_independence_verified", "reviewer_hours_spent", "calibration_notes"}),
    "eval_takes_quality_runs": ("completed_at", {"cycles_run", "verdict", "overall_score", "cost_usd",
                                                  "receipt_json"}),
    "eval_work_quality_snapshots": ("completed_at", {
        "mean_scores", "disagreement", "note", "comparison", "judges_cost_usd", "snapshot_json", "prev_snapshot_id",
        "prev_run_id"}),
    "replay_run": ("completed_at", {"decision", "rationale", "summary"}),
}
# Rows whose tier clock is their run's (run_created_at), by the tables their run may be in.
RUN_CLOCK = {
    **{t: ("brain_eval_log",) for t in (
        "brain_eval_question_score", "brain_eval_harness_run", "brain_eval_harness_answer", "brain_eval_judge_suggestion",
        "brain_eval_review_entry", "brain_eval_run_review", "brain_eval_suggestion_shown", "brain_eval_reference_shown",
        "brain_eval_run_closure", "brain_eval_run_uncertainty", "brain_eval_trend")},
    "eval_takes_quality_judge_verdicts": ("eval_takes_quality_runs",),
    "eval_takes_quality_run_uncertainty": ("eval_takes_quality_runs",),
    "eval_work_quality_snapshot_uncertainty": ("eval_work_quality_snapshots",),
    "eval_run_closure": ("eval_takes_quality_runs", "eval_work_quality_snapshots"),
    "replay_query": ("replay_run",),
}
# Rows of RUN_CLOCK whose key names their run: the key's column, and the run's key column in its table.
# A run's stored uncertainty (migration 0153) was written after the run's completion for the runs completed
# before the migration, so its run is found by its key, not by when it was written.
RUN_KEYS = {"eval_takes_quality_run_uncertainty": ("run_id", "id"),
            "eval_work_quality_snapshot_uncertainty": ("snapshot_id", "snapshot_id")}
# The by-month panel tables: aggregates a brain-eval completion adds to and a purge rebuilds.
BY_MONTH = {"brain_eval_runs_by_month", "brain_eval_questions_by_month", "brain_eval_agreement_by_month"}
# A question row changes while its run is open (the reviewer) and at its completion (question_passed).
REVIEWED = "brain_eval_question_score"


def years_before(at: datetime, years: int) -> datetime:
    """at, years calendar years earlier in UTC (29 February to the 28th), as PostgreSQL's interval does."""
    at = at.astimezone(timezone.utc)
    try:
        return at.replace(year=at.year - years)
    except ValueError:
        return at.replace(year=at.year - years, day=28)


def stamp(text: str) -> datetime | None:
    """A journal entry's canon-v1 time, or None when it is not one (damaged, or ±infinity)."""
    if not isinstance(text, str) or len(text) != 27 or text[10] != "T" or text[19] != "." or text[26] != "Z":
        return None
    try:  # fromisoformat, not strptime: verify reads one a journal entry, and strptime took a tenth of its time
        return datetime.fromisoformat(text)
    except ValueError:
        return None


@dataclass(frozen=True)
class Seen:
    """One journal entry as the rules need it: which, what, its transaction and time."""

    entry: int
    op: str
    txid: int
    at: datetime | None


@dataclass
class Facts:
    """What the journal says about every key, collected in entry order by verify."""

    first: dict = field(default_factory=dict)       # (table, key) -> Seen: the key's first entry
    deletes: list = field(default_factory=list)     # (table, key, Seen) of every DELETE, per row
    refused: list = field(default_factory=list)     # (table, key, Seen, changed columns, why) of UPDATEs refused
    reviewed: list = field(default_factory=list)    # (key, Seen, changed columns) of question-row UPDATEs
    completed: dict = field(default_factory=dict)   # (run table, key) -> Seen of its completion
    by_month: list = field(default_factory=list)    # (table, key, Seen, changed) of by-month UPDATEs
    runs_touched: set = field(default_factory=set)  # txids that completed or deleted a brain-eval run

    def saw(self, table: str, key: str, seen: Seen, previous, changed) -> None:
        """Entry seen (the key's previous latest entry, and the columns it changed by fingerprint)."""
        self.first.setdefault((table, key), seen)
        if seen.op == "DELETE":
            self.deletes.append((table, key, seen))
            if table == "brain_eval_log":
                self.runs_touched.add(seen.txid)
        if seen.op != "UPDATE":
            return
        if table in RUN_TABLES:
            done, computed = RUN_TABLES[table]
            if (table, key) in self.completed:
                self.refused.append((table, key, seen, changed, "the run was completed by journal entry "
                                     f"{self.completed[(table, key)].entry}, and a completed run is append-only"))
                return
            self.completed[(table, key)] = seen
            if table == "brain_eval_log":
                self.runs_touched.add(seen.txid)
            if changed is not None and done not in changed:
                self.refused.append((table, key, seen, changed, f"an UPDATE of a run sets {done}, once"))
            elif changed is not None and set(changed) - computed - {done}:
                self.refused.append((table, key, seen, sorted(set(changed) - computed - {done}),
                                     "its completion computes none of these"))
        elif table == REVIEWED:
            self.reviewed.append((key, seen, changed))
        elif table in BY_MONTH:
            self.by_month.append((table, key, seen, changed))
        else:
            self.refused.append((table, key, seen, changed, f"{table} is append-only"))


@dataclass(frozen=True)
class Hold:
    """A legal hold as its row says (its row checked against the journal by verify)."""

    hold_id: int
    run: str | None
    target: str | None
    held_from: datetime | None
    held_to: datetime | None

    def scope(self) -> str:
        if self.run:
            return f"run {self.run}"
        if self.target:
            return f"brain {self.target}"
        return f"{_day(self.held_from)} to {_day(self.held_to)}"


def _day(at: datetime | None) -> str:
    return at.astimezone(timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC") if at else "?"


def _age(since: datetime, at: datetime) -> str:
    days = (at - since).total_seconds() / 86400
    return f"{days / 365.25:.2f} years" if days >= 365 else f"{days:.1f} days"


def _run_of(key: str) -> str | None:
    try:
        return check.parse_json(key).get("eval_run_id")
    except (ValueError, AttributeError, check.NotCanonical):
        return None


def _run_key_of(key: str, column: str, run_column: str) -> str | None:
    """The journal key of the run a row's key names (its column), as the run's table keys it (run_column)."""
    try:
        value = check.parse_json(key).get(column)
    except (ValueError, AttributeError, check.NotCanonical):
        return None
    return None if value is None else check.canonical_json({run_column: value})


def _hold_of(key: str) -> int | None:
    try:
        return check.parse_json(key).get("hold_id")
    except (ValueError, AttributeError, check.NotCanonical):
        return None


class Retention:
    """The retention policy, as the journal lets it be checked: ages, runs and holds at each deletion."""

    def __init__(self, facts: Facts, holds: dict[int, Hold], question_runs: dict[str, str]):
        self.facts = facts
        self.holds = holds
        self.question_runs = question_runs
        placed, released = {}, {}
        for (table, key), seen in facts.first.items():
            if table == "legal_hold":
                placed[_hold_of(key)] = seen
            elif table == "legal_hold_release":
                released[_hold_of(key)] = seen
        self.placed, self.released = placed, released
        self.deleted_in: dict[int, dict[str, list]] = collections.defaultdict(lambda: collections.defaultdict(list))
        for table, key, seen in facts.deletes:
            self.deleted_in[seen.txid][table].append((key, seen))

    def past(self, since: Seen | None, at: Seen) -> bool:
        """Whether a row first journalled at since was past the horizon when at deleted it."""
        if since is None or since.at is None or at.at is None:
            return False
        return since.at <= years_before(at.at, HORIZON_YEARS) + SLACK

    def active(self, at: Seen) -> list[int]:
        """The holds placed before entry at and not released before it."""
        return [h for h, seen in self.placed.items()
                if seen.entry < at.entry and not (h in self.released and self.released[h].entry < at.entry)]

    def run_of_row(self, table: str, key: str, seen: Seen) -> tuple[str, str] | None:
        """The run (its table and key) a run's row was deleted with: named by its key, or else the run
        deleted in the same transaction that was open (between its first entry and its completion) when
        the row was first written."""
        first = self.facts.first.get((table, key))
        named = _run_of(key)
        for run_table in RUN_CLOCK[table]:
            candidates = self.deleted_in[seen.txid].get(run_table, [])
            if table in RUN_KEYS:
                run_key = _run_key_of(key, *RUN_KEYS[table])
                if run_key is not None and any(k == run_key for k, _ in candidates):
                    return run_table, run_key
                continue
            if named is not None:
                run_key = check.canonical_json({"eval_run_id": named})
                if any(k == run_key for k, _ in candidates):
                    return run_table, run_key
                continue
            for run_key, _ in candidates:
                opened = self.facts.first.get((run_table, run_key))
                done = self.facts.completed.get((run_table, run_key))
                if first and opened and opened.entry <= first.entry and (done is None or first.entry <= done.entry):
                    return run_table, run_key
        return None

    def findings(self) -> list[tuple]:
        """(kind, table, key, entry, detail) of every deletion the policy did not allow."""
        found = []
        for table, key, seen in self.facts.deletes:
            problem = self._deletion(table, key, seen)
            if problem:
                found.append((problem[0], table, key, seen.entry, problem[1]))
        return found

    def _deletion(self, table: str, key: str, seen: Seen) -> tuple[str, str] | None:
        where = f"deleted by transaction {seen.txid} (journal entry {seen.entry})"
        if table in BY_MONTH:
            if seen.txid in self.facts.runs_touched and self.deleted_in[seen.txid].get("brain_eval_log"):
                return None  # rebuilt by the purge of runs (brain_eval_by_month_purge_v1)
            return "deleted_outside_policy", f"was {where}, in no purge of brain-eval runs: only a purge rebuilds it"
        if table == "legal_hold_release":
            hold = _hold_of(key)
            if any(_hold_of(k) == hold for k, _ in self.deleted_in[seen.txid].get("legal_hold", [])):
                return None  # with its hold, by ON DELETE CASCADE; the hold's own deletion is checked
            return "deleted_outside_policy", f"was {where} without its hold"
        if table == "legal_hold":
            return self._hold_deletion(key, seen, where)
        first = self.facts.first.get((table, key))
        clock = first
        run = None
        if table in RUN_CLOCK:
            linked = self.run_of_row(table, key, seen)
            if linked is not None:
                clock = self.facts.first.get(linked)
                run = _run_of(linked[1]) if linked[0] == "brain_eval_log" else None
        elif table == "brain_eval_log":
            run = _run_of(key)
        if not self.past(clock, seen):
            age = _age(clock.at, seen.at) if clock and clock.at and seen.at else "an unknown age"
            return "deleted_too_young", (f"was {where} at {age} from its {'run' if clock is not first else 'first'} "
                                         f"journal entry ({clock.entry if clock else '?'}): the retention policy keeps "
                                         f"it {HORIZON_YEARS} years")
        if table == REVIEWED and run is None:
            run = self.question_runs.get(key)
        for hold_id in self.active(seen):
            hold = self.holds.get(hold_id)
            if hold is None:
                continue  # gone: its own deletion, unreleased, is named
            if (hold.run and hold.run == run) or (hold.held_from and clock and clock.at
                                                   and hold.held_from <= clock.at <= hold.held_to):
                return "deleted_under_hold", f"was {where} while legal hold {hold_id} ({hold.scope()}) covered it"
        return None

    def _hold_deletion(self, key: str, seen: Seen, where: str) -> tuple[str, str] | None:
        hold = _hold_of(key)
        release = self.released.get(hold)
        if release is None or release.entry > seen.entry:
            return "deleted_under_hold", f"was {where} while still in force (never released before)"
        if self.past(release, seen):
            return None
        if self.deleted_in[seen.txid].get("brain_eval_log"):
            return None  # a released hold of a run goes with its run (whose deletion is checked)
        return "deleted_too_young", (f"was {where} {_age(release.at, seen.at)} after its release (journal entry "
                                     f"{release.entry}): a released hold is kept {HORIZON_YEARS} years")

    def partition_dropped(self, month: str, dropped_at: Seen | None, row_first: Seen | None) -> str | None:
        """Why a captured row of partition month (YYYYMM), dropped by the purge logged at dropped_at, was
        not the policy's to drop, or None."""
        if dropped_at is None or dropped_at.at is None:
            return "its partition's drop is logged by a purge-log row the journal never recorded"
        year, mon = int(month[:4]), int(month[4:])
        end = datetime(year + (mon == 12), mon % 12 + 1, 1, tzinfo=timezone.utc)
        if end > years_before(dropped_at.at, HORIZON_YEARS) + SLACK or not self.past(row_first, dropped_at):
            return (f"its partition was dropped at {_day(dropped_at.at)}, before the {HORIZON_YEARS} years the retention "
                    "policy keeps it")
        start = datetime(year, mon, 1, tzinfo=timezone.utc)
        for hold_id in self.active(dropped_at):
            hold = self.holds.get(hold_id)
            if hold and hold.held_from and hold.held_from < end and hold.held_to >= start:
                return f"its partition was dropped while legal hold {hold_id} ({hold.scope()}) covered it"
        return None


def update_findings(facts: Facts, question_runs: dict[str, str]) -> list[tuple]:
    """(table, key, entry, columns, why) of every UPDATE entry the ledger's rules never allow."""
    found = [(table, key, seen.entry, tuple(changed or ()), why) for table, key, seen, changed, why in facts.refused]
    for key, seen, changed in facts.reviewed:
        run = question_runs.get(key)
        done = facts.completed.get(("brain_eval_log", check.canonical_json({"eval_run_id": run}))) if run else None
        if done is not None and done.txid != seen.txid and done.entry < seen.entry:
            found.append((REVIEWED, key, seen.entry, tuple(changed or ()),
                          f"its run was completed by journal entry {done.entry}: a completed run's rows are append-only"))
    for table, key, seen, changed in facts.by_month:
        if seen.txid not in facts.runs_touched:
            found.append((table, key, seen.entry, tuple(changed or ()),
                          "only a run's completion or a purge changes it"))
    return found
