"""The embedded server checks passwords: every login but the installer's gives its own (scram-sha-256)."""

import os

import psycopg
import pytest
from psycopg import sql
from psycopg.conninfo import make_conninfo

pytestmark = pytest.mark.skipif(bool(os.environ.get("DATABASE_URL")),
                                reason="checks the embedded server's authentication, not another server's")

LOGIN = "evalledger_test_password_login"


@pytest.fixture
def login(admin):
    admin.execute(sql.SQL("DROP ROLE IF EXISTS {}").format(sql.Identifier(LOGIN)))
    admin.execute(sql.SQL("CREATE ROLE {} LOGIN PASSWORD 'right horse battery'").format(sql.Identifier(LOGIN)))
    yield LOGIN
    admin.execute(sql.SQL("DROP ROLE IF EXISTS {}").format(sql.Identifier(LOGIN)))


def test_the_right_password_signs_in(dsn, login):
    with psycopg.connect(make_conninfo(dsn, user=login, password="right horse battery")) as conn:
        assert conn.execute("SELECT session_user").fetchone()[0] == login


@pytest.mark.parametrize("password", ["wrong", "", None])
def test_a_wrong_or_missing_password_is_refused(dsn, login, password):
    conninfo = make_conninfo(dsn, user=login, **({} if password is None else {"password": password}))
    with pytest.raises(psycopg.OperationalError, match="password"):
        psycopg.connect(conninfo)


def test_scram_is_what_the_server_stores(admin, login):
    stored = admin.execute("SELECT rolpassword FROM pg_authid WHERE rolname = %s", (login,)).fetchone()[0]
    assert stored.startswith("SCRAM-SHA-256$")
