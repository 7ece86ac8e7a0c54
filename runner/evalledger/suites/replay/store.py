"""replay's database side: each function calls one named query (sql/replay/queries.sql).

The database decides everything stored: a run's fingerprints and plan, a replayed query's status
and measures, the run's decision and rationale; this module writes what the runner observed and
reads those back.
"""

from __future__ import annotations

from datetime import datetime

import psycopg
from psycopg.rows import dict_row
from psycopg.types.json import Jsonb

from evalledger.core import queries
from evalledger.core.queries import Queries

SUITE = "replay"
QUERIES = Queries(__package__)


def _one(conn: psycopg.Connection, name: str, params: dict) -> dict | None:
    with conn.cursor(row_factory=dict_row) as cur:
        return cur.execute(QUERIES[name], params).fetchone()


def _all(conn: psycopg.Connection, name: str, params: dict) -> list[dict]:
    with conn.cursor(row_factory=dict_row) as cur:
        return cur.execute(QUERIES[name], params).fetchall()


def open_run(conn: psycopg.Connection, values: dict) -> dict | None:
    """The open run of the same request, which this runner resumes."""
    return _one(conn, "open_run", {**values, "request": Jsonb(values["request"])})


def open_run_and_bound(conn: psycopg.Connection, values: dict) -> tuple[dict | None, datetime | None]:
    """The open run of the same request, which this runner resumes, and (a ledger window) the
    exclusive end of a window as export takes it (windows.capture_bound: every row stamped before
    it is committed; used when no run is open), asked in one pipeline: one round trip, not three.
    The bound is its own statement, read by a later one (the run's start)."""
    ledger = values["source"] == "ledger"
    with conn.pipeline():
        found = conn.cursor(row_factory=dict_row).execute(
            QUERIES["open_run"], {**values, "request": Jsonb(values["request"])})
        if ledger:
            conn.execute(queries.get("capture_window_lock_timeout"))
            bound = conn.execute(queries.get("capture_window_bound"))
    return found.fetchone(), bound.fetchone()[0] if ledger else None


def start_run(conn: psycopg.Connection, values: dict) -> dict | None:
    """A new run with its resolved window; None when one exists (an open one of this request, or
    this brain's run of the same window)."""
    row = _one(conn, "start_run", {**values, "request": Jsonb(values["request"])})
    if row is not None:
        row["created"] = True
    return row


def same_window_run(conn: psycopg.Connection, values: dict) -> dict | None:
    """The run of this brain version and adapter over the same window or file."""
    return _one(conn, "same_window_run", values)


def run_state(conn: psycopg.Connection, run_id: int) -> dict:
    """One run as it stands."""
    return _one(conn, "run_state", {"run_id": run_id})


def replayed_ids(conn: psycopg.Connection, run_id: int) -> set[int]:
    """The captured ids a run has recorded already."""
    return {row[0] for row in conn.execute(QUERIES["replayed_ids"], {"run_id": run_id})}


def _window(run: dict) -> dict:
    return {k: run[k] for k in ("since_at", "until_at", "tool", "remote", "max_rows")}


def window_rows(conn: psycopg.Connection, run: dict) -> list[dict]:
    """The captured rows of a run's ledger window, newest first, at most its max_rows."""
    return _all(conn, "window_rows", _window(run))


def claimed_run(conn: psycopg.Connection, run_id: int, window: dict | None) -> tuple[dict, set[int], list[dict] | None]:
    """Once its claim is held: the run as it stands, the captured ids it has recorded, and (window:
    its ledger window's since_at, until_at, tool, remote and max_rows, which a run keeps from its
    start) the captured rows of that window; asked in one pipeline (one round trip, not three)."""
    with conn.pipeline():
        state = conn.cursor(row_factory=dict_row).execute(QUERIES["run_state"], {"run_id": run_id})
        done = conn.cursor().execute(QUERIES["replayed_ids"], {"run_id": run_id})
        rows = (conn.cursor(row_factory=dict_row).execute(QUERIES["window_rows"], _window(window))
                if window is not None else None)
    return state.fetchone(), {row[0] for row in done.fetchall()}, rows.fetchall() if rows is not None else None


def record_many(conn: psycopg.Connection, run_id: int, answered: list) -> list[dict | None]:
    """INSERT each (captured, reply) of answered, one statement per query (the admission trigger
    checks and measures each), in one transaction sent as one pipeline: conn is in autocommit, so
    the statements up to the pipeline's one Sync are the server's implicit transaction, committed
    there together or not at all (one round trip and one commit for the batch, not three round
    trips, nor one per query). What the database made of each, in order (None: recorded already)."""
    if not answered:
        return []
    if not conn.autocommit:
        raise RuntimeError("record_many: a batch is its own transaction, on a connection in autocommit")
    cursors = []
    with conn.pipeline():
        for captured, reply in answered:
            cursors.append(conn.cursor(row_factory=dict_row))
            cursors[-1].execute(QUERIES["insert_query"], _query_values(run_id, captured, reply), prepare=True)
    return [cur.fetchone() for cur in cursors]


def _query_values(run_id: int, captured, reply) -> dict:
    fields = reply.fields or {}
    results = captured.results or {}
    return {
        "replay_run_id": run_id, "capture_id": captured.id, "capture_created_at": captured.created_at,
        "tool_name": captured.tool_name if captured.results is not None else None,
        "captured_slugs": results.get("captured_slugs"), "captured_chunk_ids": results.get("captured_chunk_ids"),
        "captured_source_ids": results.get("captured_source_ids"),
        "captured_vector_enabled": captured.vector_enabled if captured.results is not None else None,
        "captured_expand_enabled": captured.expand_enabled if captured.results is not None else None,
        "captured_detail": captured.detail if captured.results is not None else None,
        "captured_latency_ms": results.get("captured_latency_ms"), "outcome": reply.outcome,
        "retrieved_slugs": fields.get("retrieved_slugs"), "retrieved_chunk_ids": fields.get("retrieved_chunk_ids"),
        "source_ids": fields.get("source_ids"), "vector_enabled": fields.get("vector_enabled"),
        "expansion_applied": fields.get("expansion_applied"), "detail_resolved": fields.get("detail_resolved"),
        "latency_ms": None if reply.fields is None else float(fields["latency_ms"]), "error": reply.error}


def complete_run(conn: psycopg.Connection, run_id: int) -> tuple[dict, list[dict]]:
    """Complete the run (the database decides it; a run completed meanwhile stays as it was) and
    read it back with its replayed queries, in one pipeline on conn, whose transaction the caller
    commits."""
    if conn.autocommit:
        raise RuntimeError("complete_run: the caller commits the completion, on a connection not in autocommit")
    with conn.pipeline():
        conn.execute(QUERIES["complete_run"], {"run_id": run_id})
        state = conn.cursor(row_factory=dict_row).execute(QUERIES["run_state"], {"run_id": run_id})
        queries = conn.cursor(row_factory=dict_row).execute(QUERIES["run_queries"], {"run_id": run_id})
    return state.fetchone(), queries.fetchall()


def run_queries(conn: psycopg.Connection, run_id: int) -> list[dict]:
    """A run's replayed queries as the database measured them."""
    return _all(conn, "run_queries", {"run_id": run_id})
