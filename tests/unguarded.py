"""Rows rewritten past the ledger's triggers by the superuser, for tests and benches that build
history in bulk or age it: the one way they lift the guards, and put every one back."""

from __future__ import annotations

import contextlib

from psycopg import sql


@contextlib.contextmanager
def clocks_unguarded(admin, tables):
    """Inside admin's open transaction: the DDL guard and the user triggers of `tables` off, so the
    superuser may rewrite tier clocks; every trigger back to ENABLE ALWAYS (and the guard on) at
    the end of the block, before anything else runs in the transaction."""
    guard = admin.execute("SELECT count(*) FROM pg_event_trigger WHERE evtname = 'evalledger_ddl_guard_v1'"
                          ).fetchone()[0]
    if guard:
        admin.execute("ALTER EVENT TRIGGER evalledger_ddl_guard_v1 DISABLE")
    names = {t: [r[0] for r in admin.execute(
        "SELECT tgname FROM pg_trigger WHERE tgrelid = %s::regclass AND NOT tgisinternal ORDER BY tgname",
        (f"evalledger.{t}",))] for t in tables}
    for t in tables:
        admin.execute(sql.SQL("ALTER TABLE evalledger.{} DISABLE TRIGGER USER").format(sql.Identifier(t)))
    yield
    for t in tables:
        admin.execute(sql.SQL("ALTER TABLE evalledger.{} {}").format(sql.Identifier(t), sql.SQL(", ").join(
            sql.SQL("ENABLE ALWAYS TRIGGER {}").format(sql.Identifier(n)) for n in names[t])))
    if guard:
        admin.execute("ALTER EVENT TRIGGER evalledger_ddl_guard_v1 ENABLE ALWAYS")
