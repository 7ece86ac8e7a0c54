"""Bulk fills for the benches: rows written past the triggers, whose effects the bench writes itself."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import psycopg
from psycopg import sql


@contextlib.contextmanager
def triggers_off(admin: psycopg.Connection, tables: list[str]) -> Iterator[None]:
    """Within admin's transaction (a superuser's): the tables' user triggers and the DDL guard off,
    then every one of them ENABLE ALWAYS again, as the migrations leave them. A bench that fills
    this way writes what the triggers would have (decisions, aggregates, clocks) in its own SQL."""
    guard = admin.execute("SELECT count(*) FROM pg_event_trigger WHERE evtname = 'evalledger_ddl_guard_v1'"
                          ).fetchone()[0]
    if guard:
        admin.execute("ALTER EVENT TRIGGER evalledger_ddl_guard_v1 DISABLE")
    names = {t: [r[0] for r in admin.execute(
        "SELECT tgname FROM pg_trigger WHERE tgrelid = %s::regclass AND NOT tgisinternal", (f"evalledger.{t}",))]
        for t in tables}
    for t in tables:
        admin.execute(sql.SQL("ALTER TABLE evalledger.{} DISABLE TRIGGER USER").format(sql.Identifier(t)))
    yield
    for t in tables:
        admin.execute(sql.SQL("ALTER TABLE evalledger.{} {}").format(sql.Identifier(t), sql.SQL(", ").join(
            sql.SQL("ENABLE ALWAYS TRIGGER {}").format(sql.Identifier(n)) for n in names[t])))
    if guard:
        admin.execute("ALTER EVENT TRIGGER evalledger_ddl_guard_v1 ENABLE ALWAYS")
