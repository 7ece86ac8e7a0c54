"""takes-quality's database side: each function calls one named query (sql/takes_quality/queries.sql).

The database decides everything stored: a verdict's contribution, a cycle's decision, the run's
verdict, its receipt and the models_sha8 and rubric_sha8 fingerprints; this module only writes
what the runner observed and reads those decisions back.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import psycopg
from psycopg.rows import dict_row
from psycopg.types.json import Jsonb

from evalledger.core import rubric as rubrics
from evalledger.core.errors import EvalledgerError
from evalledger.core.queries import Queries
from evalledger.core.rubric import Rubric

if TYPE_CHECKING:  # the providers import the SDKs: only a run needs them
    from evalledger.judges.providers import JudgeCall

SUITE = "takes-quality"
QUERIES = Queries(__package__)


def _one(conn: psycopg.Connection, name: str, params: dict) -> dict | None:
    with conn.cursor(row_factory=dict_row) as cur:
        return cur.execute(QUERIES[name], params).fetchone()


def load_rubric(conn: psycopg.Connection, version: str | None = None) -> Rubric:
    """The named takes-quality rubric version, else the newest."""
    found = rubrics.find(conn, SUITE, version)
    if found is None:
        raise EvalledgerError(f"--rubric-version: no takes-quality rubric {version}" if version else
                              "no takes-quality rubric in the database: run `evalledger db migrate`")
    return found


def rubric_dims(conn: psycopg.Connection, version: str) -> list[str]:
    """The dimensions of a rubric version, in order ([] when there is no such version)."""
    found = rubrics.find(conn, SUITE, version)
    return found.dims if found is not None else []


def identity(values: dict) -> dict:
    """The query parameters that find an eval's judgings (see head_run)."""
    return {**{k: values[k] for k in ("rubric_id", "corpus_sha8", "prompt_sha8", "models", "corpus_source",
                                      "corpus_path", "slug_prefix", "judges")}, "repeats": values.get("repeats", 1)}


def head_run(conn: psycopg.Connection, values: dict) -> dict | None:
    """The latest judging of this eval (complete or not), or None."""
    return _one(conn, "head_run", identity(values))


def start_run(conn: psycopg.Connection, values: dict, rerun: int) -> dict:
    """Insert judging `rerun` of this eval; when another runner inserted it first, that run."""
    # A run of one repeat is written as before repeats (the column's default): a ledger that predates
    # them takes it too.
    row = _one(conn, "start_run_repeated" if values.get("repeats", 1) > 1 else "start_run", {**values, "rerun": rerun})
    if row is not None:
        return row
    found = head_run(conn, values)
    if found is None:
        raise EvalledgerError("a run with these fingerprints exists but this role cannot read it")
    return found


def run_state(conn: psycopg.Connection, run_id: int) -> dict:
    """One run as it is now."""
    return _one(conn, "run_state", {"run_id": run_id})


def calls_to_make(conn: psycopg.Connection, run_id: int, cycle: int, models: list[str],
                  repeats: int = 1) -> list[tuple[str, int]]:
    """The (panel model, repeat) calls to make in a cycle: those without an answer (none yet, a call
    that failed outside the judge's content, a call started and never answered); a repeat stored is
    never asked again."""
    with conn.cursor(row_factory=dict_row) as cur:
        current = {(r["model"], r["repeat_no"]): r
                   for r in cur.execute(QUERIES["current_calls"], {"run_id": run_id, "cycle": cycle})}
    return [(m, k) for k in range(1, repeats + 1) for m in models
            if (m, k) not in current or current[(m, k)]["to_retry"]]


def record_start(conn: psycopg.Connection, run_id: int, cycle: int, model: str, estimated_cost_usd, *,
                 repeat: int = 1) -> None:
    """A live call about to be sent: if no answer follows, its estimate is what it cost."""
    conn.execute(QUERIES["insert_start_repeat" if repeat > 1 else "insert_start"], {"run_id": run_id, "cycle": cycle, "model": model, "repeat_no": repeat,
                                           "estimated_cost_usd": estimated_cost_usd})


def record_verdict(conn: psycopg.Connection, run_id: int, cycle: int, call: JudgeCall, recorded: bool, *,
                   repeat: int = 1) -> dict | None:
    """INSERT one judge verdict; return what the database made of it (None if already there)."""
    from evalledger.judges import money
    from evalledger.judges import panel

    provider_failed = call.error_kind is not None
    # The usage and its price; the database computes the cost from them (call_cost_v1).
    usage = money.billed(call.spec, input_tokens=call.input_tokens, cached_input_tokens=call.cached_input_tokens,
                         cache_write_tokens=call.cache_write_tokens, output_tokens=call.output_tokens, recorded=recorded,
                         batch=call.batch)
    return _one(conn, money.billed_query("insert_verdict", usage) + ("_repeat" if repeat > 1 else ""), {**usage,
        "run_id": run_id, "cycle": cycle, "model": call.spec.spec, "repeat_no": repeat, "recorded": recorded,
        "structured": call.structured,
        "response_json": None if provider_failed or call.parsed is None else Jsonb(panel.json_safe(call.parsed)),
        "raw_excerpt": None if provider_failed else panel.raw_excerpt(call),
        "error_kind": call.error_kind, "error_message": call.error_message if provider_failed else None,
        "cost_usd": 0, "latency_ms": call.latency_ms, "attempts": call.attempts})


def run_time_left(conn: psycopg.Connection, run_id: int) -> float | None:
    """Seconds until the open run is abandoned (the rubric's deadline), by the database's clock."""
    row = _one(conn, "run_time_left", {"run_id": run_id})
    return None if row is None else row["left_s"]


def run_calls(conn: psycopg.Connection, run_id: int) -> dict:
    """How the run's calls went, as the database counts them: {"sync": n, "batch": n,
    "cached_input_tokens": n}."""
    return _one(conn, "run_calls", {"run_id": run_id})


def receipt_uncertainty(conn: psycopg.Connection, run_id: int, receipt: dict) -> dict:
    """The receipt with each dimension's optional stderr and ci95, as the database computes them from
    the run's verdict rows (takes_quality_receipt_uncertainty_v1, what `show` carries). On a ledger
    whose schema predates the function (0.1.0's, before `db migrate`) the fields are optional: the
    receipt is left without them, and nothing else of the run is touched."""
    try:
        with conn.transaction():
            return _one(conn, "receipt_uncertainty", {"run_id": run_id, "receipt": Jsonb(receipt)})["receipt_json"]
    except psycopg.errors.UndefinedFunction:
        return receipt


def cycle_decision(conn: psycopg.Connection, run_id: int, cycle: int) -> dict:
    """The database's decision of one cycle."""
    return _one(conn, "cycle_decision", {"run_id": run_id, "cycle": cycle})["decision"]


def open_receipt(conn: psycopg.Connection, run_id: int) -> dict:
    """The receipt of a run that stays open (not final), as the database builds it."""
    return _one(conn, "open_receipt", {"run_id": run_id})["receipt_json"]


def complete_run(conn: psycopg.Connection, run_id: int) -> dict:
    """Set completed_at; the database computes the verdict and the receipt."""
    row = _one(conn, "complete_run", {"run_id": run_id})
    if row["receipt_json"] is None:  # completed meanwhile by an identical run
        row = _one(conn, "run_receipt", {"run_id": run_id})
    return row["receipt_json"]


def cancel_run(conn: psycopg.Connection, run_id: int, reason: str) -> dict:
    """Cancel an open run with a reason; the receipt the database decided for it (fail, "Abandoned:
    cancelled by ...")."""
    if not _one(conn, "cancel_run", {"run_id": run_id, "reason": reason})["cancelled"]:
        raise EvalledgerError(f"run {run_id} is not an open takes-quality run this role can cancel")
    return _one(conn, "run_receipt", {"run_id": run_id})["receipt_json"]


def receipt_from_db(conn: psycopg.Connection, shas: tuple[str, str, str, str], judges: str) -> dict | None:
    """The receipt of the newest completed run with these (corpus, prompt, models, rubric)
    fingerprints, judged live or recorded."""
    row = _one(conn, "receipt_by_shas", {**dict(zip(("corpus_sha8", "prompt_sha8", "models_sha8", "rubric_sha8"),
                                                     shas)), "judges": judges})
    return row["receipt_json"] if row else None


def receipt_by_id(conn: psycopg.Connection, run_id: int) -> dict | None:
    """{receipt_json, complete} of run run_id, or None when there is no such run."""
    return _one(conn, "receipt_by_id", {"run_id": run_id})


def trend(conn: psycopg.Connection, limit: int, rubric_version: str | None) -> list[dict]:
    """Completed runs, newest rubric epoch first, newest run first within an epoch."""
    with conn.cursor(row_factory=dict_row) as cur:
        return cur.execute(QUERIES["trend"], {"version": rubric_version, "limit": limit}).fetchall()


def regress_threshold(conn: psycopg.Connection, threshold: float | None) -> float:
    """The threshold `regress` compares with: the one given, else the database's default."""
    return float(_one(conn, "regress_threshold", {"threshold": _decimal(threshold)})["threshold"])


def gate(conn: psycopg.Connection, baseline: dict, baseline_ref: str, run_id: int, threshold: float | None,
         mode: str) -> dict:
    """The baseline receipt against run_id, the gate decided and stored by the database in mode
    (eval_gate_decision): gate_id, decision, reasons, and comparison (mode, threshold, decision,
    reasons, seed: takes_quality_regression_v1's threshold, rows, regressed, outcome, warnings;
    paired: one row per dimension and the overall)."""
    return _one(conn, "gate", {"mode": mode, "threshold": _decimal(threshold), "baseline_ref": baseline_ref,
                               "current_ref": f"run {run_id}", "baseline": Jsonb(baseline), "run_id": run_id})


def _decimal(number: float | None):
    """A flag's number as the decimal it was typed as (0.1 stays 0.1, not its binary neighbour)."""
    from decimal import Decimal

    return None if number is None else Decimal(repr(number))
