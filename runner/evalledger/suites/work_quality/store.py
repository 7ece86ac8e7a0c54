"""The work-quality ledger, through the suite's named queries (sql/work_quality/queries.sql) only.

Nothing here decides anything: each function INSERTs what the runner observed or reads back
what the database computed (contribution, aggregate, comparison, regression reasons).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import psycopg
from psycopg.rows import dict_row
from psycopg.types.json import Jsonb

from evalledger.core.errors import EvalledgerError
from evalledger.core.queries import Queries
from evalledger.core.rubric import Rubric, find as find_rubric

if TYPE_CHECKING:  # the panel imports the provider SDKs: only `run` needs them
    from evalledger.judges.providers import JudgeCall

Q = Queries("evalledger.suites.work_quality")


def _one(conn: psycopg.Connection, name: str, params: dict[str, Any]) -> dict | None:
    with conn.cursor(row_factory=dict_row) as cur:
        return cur.execute(Q[name], params).fetchone()


def _all(conn: psycopg.Connection, name: str, params: dict[str, Any]) -> list[dict]:
    with conn.cursor(row_factory=dict_row) as cur:
        return cur.execute(Q[name], params).fetchall()


def rubric(conn: psycopg.Connection) -> Rubric:
    """The work-quality rubric a new snapshot is judged by."""
    found = find_rubric(conn, "work-quality")
    if found is None:
        raise EvalledgerError("no work-quality rubric in the database: run `evalledger db migrate`")
    return found


def has_completed_snapshot(conn: psycopg.Connection, name: str) -> bool:
    return _one(conn, "has_completed_snapshot", {"name": name})["exists"]


def start_or_find_run(conn: psycopg.Connection, values: dict[str, Any]) -> dict:
    """The run's snapshot row: inserted now, or the one an earlier run with this run id left."""
    # A run of one repeat is written as before repeats (the column's default): a ledger that predates
    # them takes it too.
    row = _one(conn, "start_run_repeated" if values.get("repeats", 1) > 1 else "start_run", values)
    if row is None:
        row = _one(conn, "find_run", {"name": values["name"], "run_id": values["run_id"], "judges": values["judges"]})
    if row is None:
        raise EvalledgerError(f"--run-id {values['run_id']}: a snapshot with this id exists but cannot be read")
    return row


def cancel_run(conn: psycopg.Connection, snapshot_id: int, reason: str) -> dict:
    """Cancel an open run (its snapshot) with a reason; the state the database decided for it
    (cancelled, a regression, its note "Abandoned: cancelled by ...")."""
    if not _one(conn, "cancel_run", {"snapshot_id": snapshot_id, "reason": reason})["cancelled"]:
        raise EvalledgerError(f"snapshot {snapshot_id} is not an open work-quality run this role can cancel")
    return _one(conn, "run_state", {"snapshot_id": snapshot_id})


def snapshot_state(conn: psycopg.Connection, snapshot_id: int) -> dict:
    """One snapshot row as it is now."""
    return _one(conn, "snapshot_state", {"snapshot_id": snapshot_id})


# The database's refusal of another row for a judge whose verdict stands (work_quality_verdict_sequence_v1):
# its failure on content became its verdict once another judge contributed, so there is nothing to retry.
VERDICT_STANDS = "eval_work_quality_judge_verdicts_once"
SETTLED = "settled"


def _stands(exc: psycopg.errors.CheckViolation) -> bool:
    return exc.diag.constraint_name == VERDICT_STANDS


def record_start(conn: psycopg.Connection, snapshot_id: int, model: str, estimated_cost_usd, *, repeat: int = 1) -> bool:
    """A live call about to be sent: if no answer follows, its estimate is what it cost. False when
    the database takes no new row of this judge (its stored verdict stands): the call is not made."""
    try:
        with conn.transaction():  # a savepoint inside a batch's transaction: a refusal leaves it usable
            conn.execute(Q["insert_start_repeat" if repeat > 1 else "insert_start"],
                         {"snapshot_id": snapshot_id, "model": model, "repeat_no": repeat,
                          "estimated_cost_usd": estimated_cost_usd})
    except psycopg.errors.CheckViolation as exc:
        if not _stands(exc):
            raise
        return False
    return True


def previous_for_prompt(conn: psycopg.Connection, snapshot_id: int) -> dict | None:
    return _one(conn, "previous_for_prompt", {"snapshot_id": snapshot_id})


def models_answered(conn: psycopg.Connection, snapshot_id: int) -> set[tuple[str, int]]:
    """The (model, repeat) verdicts the run keeps: a resumed run asks only the others."""
    return {(r["model"], r["repeat_no"]) for r in _all(conn, "models_answered", {"snapshot_id": snapshot_id})}


def record_verdict(conn: psycopg.Connection, snapshot_id: int, call: JudgeCall, recorded: bool, *,
                   repeat: int = 1) -> dict | None:
    """INSERT one judge's reply or failure; return what the database made of it (None if already there,
    SETTLED when the database takes no new row of this judge: its stored verdict stands)."""
    from evalledger.judges import money
    from evalledger.judges import panel

    provider_failed = call.error_kind is not None
    # The usage and its price; the database computes the cost from them (call_cost_v1).
    usage = money.billed(call.spec, input_tokens=call.input_tokens, cached_input_tokens=call.cached_input_tokens,
                         cache_write_tokens=call.cache_write_tokens, output_tokens=call.output_tokens, recorded=recorded,
                         batch=call.batch)
    try:
        with conn.transaction():  # a savepoint inside a batch result's transaction
            return _one(conn, money.billed_query("record_verdict", usage) + ("_repeat" if repeat > 1 else ""), {**usage,
                "snapshot_id": snapshot_id, "model": call.spec.spec, "repeat_no": repeat, "recorded": recorded,
                "structured": call.structured,
                "response_json": None if provider_failed or call.parsed is None else Jsonb(panel.json_safe(call.parsed)),
                "raw_excerpt": None if provider_failed else panel.raw_excerpt(call),
                "error_kind": call.error_kind, "error_message": call.error_message if provider_failed else None,
                "cost_usd": 0, "latency_ms": call.latency_ms, "attempts": call.attempts})
    except psycopg.errors.CheckViolation as exc:
        if not _stands(exc):
            raise
        return SETTLED


def verdicts(conn: psycopg.Connection, snapshot_id: int) -> list[dict]:
    return _all(conn, "verdicts", {"snapshot_id": snapshot_id})


def complete(conn: psycopg.Connection, snapshot_id: int) -> dict:
    """Set completed_at; the database computes the aggregate and the document, returned here."""
    row = _one(conn, "complete", {"snapshot_id": snapshot_id})
    if row["snapshot_json"] is None:  # completed meanwhile
        row = _one(conn, "document", {"snapshot_id": snapshot_id})
    return row["snapshot_json"]


def documents_by_run_id(conn: psycopg.Connection, run_id: str) -> list[dict]:
    return _all(conn, "documents_by_run_id", {"run_id": run_id})


def list_snapshots(conn: psycopg.Connection, name: str) -> list[dict]:
    return _all(conn, "list_snapshots", {"name": name})


def compare(conn: psycopg.Connection, prev_mean: dict | None, cur_mean: dict | None, prev_run_id: str,
            tolerance: float | None) -> dict:
    """{delta, reasons, tolerance}: the seed's Compare and IsRegression, computed by the database."""
    return _one(conn, "compare", {"prev_mean": None if prev_mean is None else Jsonb(prev_mean),
                                  "cur_mean": None if cur_mean is None else Jsonb(cur_mean),
                                  "prev_run_id": prev_run_id, "tolerance": tolerance})


def gate(conn: psycopg.Connection, baseline: dict, baseline_ref: str, current: dict, current_ref: str,
         tolerance: float | None, mode: str) -> dict:
    """Snapshot document current against baseline, the gate decided and stored by the database in mode
    (eval_gate_decision): gate_id, decision, reasons, and comparison (mode, threshold, decision, reasons,
    seed: {comparison, reasons, tolerance}, the seed's Compare and IsRegression; paired: per dimension)."""
    return _one(conn, "gate", {"mode": mode, "threshold": tolerance, "baseline_ref": baseline_ref,
                               "current_ref": current_ref, "baseline": Jsonb(baseline), "current": Jsonb(current)})


def is_regression(conn: psycopg.Connection, delta: dict | None, tolerance: float | None) -> dict:
    """{reasons, tolerance} for a comparison the database computed earlier."""
    return _one(conn, "is_regression", {"delta": None if delta is None else Jsonb(delta), "tolerance": tolerance})


def closed_regression(conn: psycopg.Connection, snapshot_id: int) -> list[str] | None:
    """The reasons a cancelled or abandoned snapshot is a regression (its note), as the database
    says; None for any other snapshot."""
    row = _one(conn, "closed_regression", {"snapshot_id": snapshot_id})
    return None if row is None else list(row["reasons"])


def import_snapshot(conn: psycopg.Connection, document: Any, source_file: str) -> bool:
    """One history file into the ledger; False when it was there already."""
    return _one(conn, "import_snapshot", {"document": Jsonb(document), "source_file": source_file}) is not None


def uncertainty(conn: psycopg.Connection, document: dict) -> dict | None:
    """Each dimension of a Snapshot document with its uncertainty over the judges, as the database
    computes it (work_quality_uncertainty_v1): {dim: {estimate, stderr, ci95, n, clusters, method}}."""
    return conn.execute(Q["snapshot_uncertainty"], {"doc": Jsonb(document)}).fetchone()[0]
