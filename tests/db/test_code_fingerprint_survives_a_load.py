"""A digest's code fingerprint survives a dump and load: every definition it pins reads back as itself.

pg_dump writes each CHECK constraint as pg_get_constraintdef gives it, and the load writes it back from
that text; a constraint whose text is not its own fixed point (an IN list on a varchar column, a
BETWEEN first in a chain of ANDs) would read as changed on a loaded copy, and `ledger verify --digest`
would name code nobody touched. The whole dump and load is tried in tests/e2e/test_dump.py.
"""

from __future__ import annotations

from psycopg import sql


def test_every_check_constraint_reads_back_as_itself(admin):
    checks = admin.execute(
        "SELECT k.conrelid::regclass::text, k.conname, pg_get_constraintdef(k.oid) FROM pg_constraint k "
        "JOIN pg_class c ON c.oid = k.conrelid WHERE k.contype = 'c' AND NOT c.relispartition "
        "AND c.relnamespace = 'evalledger'::regnamespace ORDER BY 1, 2").fetchall()
    assert len(checks) > 100
    moved = []
    for table, name, text in checks:
        with admin.transaction(force_rollback=True):
            admin.execute(sql.SQL("CREATE TEMP TABLE reread (LIKE {})").format(sql.SQL(table)))
            admin.execute(sql.SQL("ALTER TABLE pg_temp.reread ADD CONSTRAINT reread {}").format(sql.SQL(text)))
            again, = admin.execute("SELECT pg_get_constraintdef(oid) FROM pg_constraint "
                                   "WHERE conrelid = 'pg_temp.reread'::regclass AND conname = 'reread'").fetchone()
        if again != text:
            moved.append(f"{table}.{name}:\n  {text}\n  {again}")
    assert moved == []


def test_a_default_grant_reads_the_same_stored_or_not(admin):
    """pg_dump leaves out a grant that is its owner's default: the fingerprint writes both as `default`."""
    from evalledger.ledger import code

    with admin.transaction(force_rollback=True):
        before = code.definitions(admin)
        admin.execute("UPDATE pg_class SET relacl = NULL WHERE oid = 'evalledger.capture_window'::regclass")
        admin.execute("UPDATE pg_namespace SET nspacl = NULL WHERE nspname = 'evalledger_guard'")
        after = code.definitions(admin)
    assert after == before
