"""Run claims: while a runner judges a run it holds the run's claim, so an identical run started
meanwhile waits and then reads what the first recorded instead of paying for every call again.

A claim is a row of evalledger.run_claim inserted in a transaction that is never committed (the
database refuses the commit): a second insert of the same claim waits on the first's transaction,
and the claim ends when its runner rolls back, loses its connection or is killed. Only the
runner role may insert one, so no reader can hold a run up (an advisory lock anyone could take).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator

import psycopg

from . import db, queries


@contextlib.contextmanager
def claimed(claim_query: str, run_id: int, *, waiting: Callable[[], None], url: str | None = None) -> Iterator[None]:
    """Hold run_id's claim (claim_query: the suite's INSERT of it) inside the block; `waiting` is
    told when another runner holds it, before this one waits for it."""
    conn = db.connect(url, role="runner")
    try:
        try:
            conn.execute(queries.get("claim_session"))
            conn.commit()
            try:
                conn.execute(queries.get("claim_briefly"))
                conn.execute(claim_query, {"run_id": run_id})
            except psycopg.errors.LockNotAvailable:
                conn.rollback()
                waiting()
                conn.execute(queries.get("claim_patiently"))
                conn.execute(claim_query, {"run_id": run_id})
        except psycopg.Error as exc:
            raise db.explain(exc) from None
        yield  # what the block raises is the block's to explain
    finally:
        with contextlib.suppress(psycopg.Error):
            conn.rollback()
        conn.close()
