"""Test fixtures: one real PostgreSQL, a template database built from the migrations, a fresh clone per test.

The server is $DATABASE_URL when set (any PostgreSQL 14+), else the embedded server with its
own EVALLEDGER_HOME inside the repository, so tests never touch the user's ~/.evalledger.
"""

from __future__ import annotations

pytest_plugins = ["tests.standin.fixtures"]

import os
from pathlib import Path

import psycopg
import pytest
from psycopg.conninfo import conninfo_to_dict, make_conninfo
from pytest_postgresql import factories

REPO = Path(__file__).resolve().parents[1]
TEST_HOME = REPO / ".test-home"


def _server_url() -> str:
    url = os.environ.get("DATABASE_URL")
    if url:
        return url
    from evalledger.core.embedded import EmbeddedServer

    return EmbeddedServer(TEST_HOME).start()


SERVER = conninfo_to_dict(_server_url())


def load_ledger(host, port, user, dbname, password=None, **_ignored) -> None:
    """Build the template database from the migrations, exactly as `evalledger db migrate` does."""
    from evalledger.core.migrate import migrate

    migrate(make_conninfo(host=host, port=port, user=user, dbname=dbname, password=password))


postgresql_server = factories.postgresql_noproc(
    host=SERVER.get("host"),
    port=SERVER.get("port", 5432),
    user=SERVER.get("user"),
    password=SERVER.get("password"),
    # Per process, so that two test sessions on one server never share a template.
    dbname=f"evalledger_test_{os.getpid()}",
    load=[load_ledger],
)
postgresql = factories.postgresql("postgresql_server")


@pytest.fixture
def dsn(postgresql) -> str:
    """The connection string of this test's fresh, migrated database."""
    info = postgresql.info
    return make_conninfo(
        host=info.host, port=info.port, user=info.user, dbname=info.dbname,
        password=SERVER.get("password"),
    )


@pytest.fixture
def admin(dsn):
    """An autocommit superuser (or migrating user) connection on the test database."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("SET search_path = evalledger, public")
        yield conn


@pytest.fixture
def connect_as(dsn):
    """Open autocommit connections acting as a role (SET ROLE), closed after the test."""
    opened = []

    def connect(role: str) -> psycopg.Connection:
        conn = psycopg.connect(dsn, autocommit=True)
        conn.execute("SET search_path = evalledger, public")
        conn.execute(psycopg.sql.SQL("SET ROLE {}").format(psycopg.sql.Identifier(role)))
        opened.append(conn)
        return conn

    yield connect
    for conn in opened:
        conn.close()


def ensure_login_role(admin, name: str, member_of: str) -> None:
    """Create a cluster-wide login role once (roles outlive the per-test databases)."""
    admin.execute(
        psycopg.sql.SQL(
            "DO $$ BEGIN IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = {name}) THEN "
            "CREATE ROLE {ident} LOGIN; END IF; END $$"
        ).format(name=psycopg.sql.Literal(name), ident=psycopg.sql.Identifier(name))
    )
    admin.execute(psycopg.sql.SQL("GRANT {} TO {}").format(
        psycopg.sql.Identifier(member_of), psycopg.sql.Identifier(name)))


REVIEWER_ROLE = "evalledger_test_reviewer_a"
OTHER_REVIEWER_ROLE = "evalledger_test_reviewer_b"


@pytest.fixture
def reviewers(admin):
    """Two reviewers, each a login role in evalledger_reviewer: {role_name: reviewer_user_id}."""
    from evalledger.suites.brain_eval.store import add_reviewer

    found = {}
    for role in (REVIEWER_ROLE, OTHER_REVIEWER_ROLE):
        ensure_login_role(admin, role, "evalledger_reviewer")
        found[role] = add_reviewer(admin, role, role.rsplit("_", 1)[-1].upper())
    return found


@pytest.fixture
def reviewer_id(reviewers):
    """The first reviewer's reviewer_user_id."""
    return reviewers[REVIEWER_ROLE]
