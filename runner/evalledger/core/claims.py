"""Run claims: while a runner works on a run it holds the run's claim, so a second runner of the
same run either waits for it and then reads what the first recorded (takes-quality, work-quality),
or stops at once, having called nothing (brain-eval): no call is paid for twice.

A claim is a row of evalledger.run_claim inserted in a transaction that is never committed (the
database refuses the commit): a second insert of the same claim waits on the first's transaction,
and the claim ends when its runner rolls back, loses its connection or is killed. Only the
runner role may insert one, so no reader can hold a run up (an advisory lock anyone could take).
The claim's connection names the run and since when it holds it (its application_name), which is
how a runner that stops says since when the other has been running.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator

import psycopg

from . import db, queries
from .errors import EvalledgerError


class Claimed(EvalledgerError):
    """Another process holds the run's claim: this one stopped before calling anything."""


def connect(url: str | None = None) -> psycopg.Connection:
    """A runner connection for a claim, its session set for one (claim_session, committed: a claim's
    connection idles in its transaction while the run is judged, and no server timeout may end it),
    so that taking the claim later costs one round trip. For claimed(conn=...)."""
    conn = db.connect(url, role="runner")
    try:
        conn.execute(queries.get("claim_session"))
        conn.commit()
    except BaseException:
        conn.close()
        raise
    return conn


@contextlib.contextmanager
def claimed(claim_query: str, run_id, *, suite: str, waiting: Callable[[], None] | None = None,
            url: str | None = None, next_step: str | None = None,
            conn: psycopg.Connection | None = None) -> Iterator[None]:
    """Hold run_id's claim (claim_query: the suite's INSERT of it) inside the block. When another
    runner holds it: with `waiting`, say so through it and wait for it; without, raise Claimed,
    the one line that says since when the other runs and what to do. next_step: what a lost
    connection says to do. conn: the claim's connection from connect(), opened already (it is the
    claim's alone, and closed with it), else one is opened here. The claim is asked for in one
    pipeline (its brief lock timeout, the INSERT and the connection's name: one round trip)."""
    names = {"suite": suite, "run_id": str(run_id)}
    try:
        conn = conn if conn is not None else connect(url)
    except psycopg.Error as exc:
        raise db.explain(exc, next_step) from None
    try:
        try:
            try:
                with conn.pipeline():
                    conn.execute(queries.get("claim_briefly"))
                    conn.execute(claim_query, {"run_id": run_id})
                    conn.execute(queries.get("claim_named"), names)
            except psycopg.errors.LockNotAvailable:
                conn.rollback()
                if waiting is None:
                    since = conn.execute(queries.get("claim_holder_since"), names).fetchone()[0]
                    conn.rollback()
                    raise Claimed(f"run {run_id} is being run by another process since "
                                  f"{since or 'a time its session does not show'}; run the same command again "
                                  "when it ends") from None
                waiting()
                conn.execute(queries.get("claim_patiently"))
                conn.execute(claim_query, {"run_id": run_id})
                conn.execute(queries.get("claim_named"), names)
        except psycopg.Error as exc:
            raise db.explain(exc, next_step) from None
        yield  # what the block raises is the block's to explain
    finally:
        with contextlib.suppress(psycopg.Error):
            conn.rollback()
        conn.close()
