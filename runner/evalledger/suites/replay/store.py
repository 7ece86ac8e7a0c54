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

from evalledger.core import windows
from evalledger.core.queries import Queries

SUITE = "replay"
QUERIES = Queries(__package__)


def _one(conn: psycopg.Connection, name: str, params: dict) -> dict | None:
    with conn.cursor(row_factory=dict_row) as cur:
        return cur.execute(QUERIES[name], params).fetchone()


def _all(conn: psycopg.Connection, name: str, params: dict) -> list[dict]:
    with conn.cursor(row_factory=dict_row) as cur:
        return cur.execute(QUERIES[name], params).fetchall()


def window_bound(conn: psycopg.Connection) -> datetime:
    """The exclusive end of a window, as export takes it: every row stamped before it is committed."""
    return windows.capture_bound(conn)


def open_run(conn: psycopg.Connection, values: dict) -> dict | None:
    """The open run of the same request, which this runner resumes."""
    return _one(conn, "open_run", {**values, "request": Jsonb(values["request"])})


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


def window_rows(conn: psycopg.Connection, run: dict) -> list[dict]:
    """The captured rows of a run's ledger window, newest first, at most its max_rows."""
    return _all(conn, "window_rows", {k: run[k] for k in ("since_at", "until_at", "tool", "remote", "max_rows")})


def record_many(conn: psycopg.Connection, run_id: int, answered: list) -> list[dict | None]:
    """INSERT each (captured, reply) of answered, one statement per query (the admission trigger
    checks and measures each) sent together in one pipeline: one round trip for the batch, not one
    per query. What the database made of each, in order (None: recorded already)."""
    if not answered:
        return []
    with conn.cursor(row_factory=dict_row) as cur:
        cur.executemany(QUERIES["insert_query"], [_query_values(run_id, c, r) for c, r in answered], returning=True)
        made = []
        while True:
            made.append(cur.fetchone())
            if not cur.nextset():
                break
    return made


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


def complete_run(conn: psycopg.Connection, run_id: int) -> None:
    """Complete the run: the database decides it (a run completed meanwhile stays as it was)."""
    _one(conn, "complete_run", {"run_id": run_id})


def run_queries(conn: psycopg.Connection, run_id: int) -> list[dict]:
    """A run's replayed queries as the database measured them."""
    return _all(conn, "run_queries", {"run_id": run_id})
