"""The seal waits only for transactions that may write the journal (issue 35, item 5): a login with no
ledger privilege, or any login in another database of the server, holding a transaction open (with a
transaction id: `SELECT pg_current_xact_id()`) holds no seal back; a writer of the ledger holding its
own open does, and doctor names it with its age."""

from __future__ import annotations

import os

import psycopg
import pytest
from psycopg import sql
from psycopg.conninfo import make_conninfo

from evalledger.ops import doctor
from tests.cli import run_cli
from tests.conftest import TEST_PASSWORD
from tests.db.insider_logins import LOGINS, logins  # noqa: F401  (a fixture)
from tests.ledger_forge import seal

OUTSIDER = "evalledger_test35_outsider"


def insert_target(conn, target_id: str) -> None:
    conn.execute("INSERT INTO evalledger.target (target_id, kind, display_name) VALUES (%s, 'bot', 'x')", (target_id,))


@pytest.fixture
def outsider(admin, dsn):
    """A login of the server with no ledger privilege at all (no evalledger role): it may connect, nothing more."""
    admin.execute(sql.SQL("DO $$ BEGIN IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = {n}) THEN "
                          "CREATE ROLE {i} LOGIN; END IF; END $$").format(n=sql.Literal(OUTSIDER),
                                                                        i=sql.Identifier(OUTSIDER)))
    admin.execute(sql.SQL("ALTER ROLE {} PASSWORD {}").format(sql.Identifier(OUTSIDER), sql.Literal(TEST_PASSWORD)))
    admin.execute(sql.SQL("GRANT CONNECT ON DATABASE {} TO {}").format(
        sql.Identifier(admin.info.dbname), sql.Identifier(OUTSIDER)))
    with psycopg.connect(make_conninfo(dsn, user=OUTSIDER, password=TEST_PASSWORD)) as conn:
        yield conn


@pytest.fixture
def other_database(admin, dsn):
    """The installing superuser, connected to another database of the same server."""
    name = f"evalledger_t35_other_{os.getpid()}"
    admin.execute(sql.SQL("DROP DATABASE IF EXISTS {}").format(sql.Identifier(name)))
    admin.execute(sql.SQL("CREATE DATABASE {} TEMPLATE template0").format(sql.Identifier(name)))
    try:
        with psycopg.connect(make_conninfo(dsn, dbname=name)) as conn:
            yield conn
    finally:
        admin.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))


@pytest.mark.parametrize("holder", ["outsider", "other_database"],
                         ids=["a login with no ledger privilege", "the superuser in another database"])
def test_a_transaction_held_open_by_no_writer_of_the_ledger_holds_no_seal_back(admin, request, holder):
    seal(admin)
    held = request.getfixturevalue(holder)
    xid = held.execute("SELECT pg_current_xact_id()").fetchone()[0]  # a transaction id, kept open
    insert_target(admin, "AGT-S1")
    sealed = seal(admin, wait_seconds=0.5)
    assert (sealed["entries"], sealed["unsealed"], sealed["held_by"]) == (1, 0, None), (xid, sealed)
    held.rollback()


def test_a_writer_holding_its_own_transaction_open_holds_the_seal_and_doctor_names_it(admin, dsn, logins,  # noqa: F811
                                                                                    monkeypatch):
    seal(admin)
    runner = logins("runner", autocommit=False)
    xid = int(str(runner.execute("SELECT pg_current_xact_id()").fetchone()[0]))
    insert_target(admin, "AGT-S2")
    sealed = seal(admin, wait_seconds=0.3)
    assert (sealed["block"], sealed["unsealed"], sealed["held_by"]) == (None, 1, xid)
    monkeypatch.setattr(doctor, "WRITER_OPEN_SECONDS", 0.0)
    result = run_cli("doctor", env={"DATABASE_URL": dsn})
    pid = runner.info.backend_pid
    line = next((row for row in result.out.splitlines() if f"(pid {pid})" in row), result.out)
    assert f"{LOGINS['runner'][0]} (pid {pid}) holds a transaction that may write the ledger open for " in line
    assert "every seal leaves the entries after it unsealed until it ends" in line
    runner.rollback()
    assert seal(admin)["entries"] == 1
