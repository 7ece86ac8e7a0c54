"""No insider can bend the ledger (issue 8): every attempt below was seen to succeed once.

Each attempt is made as the role that succeeded: a real login that is a member of
evalledger_owner (not a SET ROLE from the superuser's session, so session_user is the insider
too), or the runner. Each asserts the refusal (SQLSTATE class and message), that no row changed
and, for the escalations, that the insider is still not a superuser afterwards.
docs/guards.md ("Insiders") maps each attempt to the guard that stops it.
"""

from __future__ import annotations

import uuid

import psycopg
import pytest
from psycopg import errors
from psycopg.conninfo import make_conninfo

from tests.builders import record_run
from tests.conftest import ensure_login_role

INSIDER = "evalledger_test_insider"
INSIDER_PASSWORD = "insider-" + uuid.uuid4().hex  # works where the server asks for one, and where it trusts


@pytest.fixture
def insider(admin, dsn):
    """A login of its own, member of evalledger_owner: what a deploy account or a DBA's helper is."""
    ensure_login_role(admin, INSIDER, "evalledger_owner")
    admin.execute(psycopg.sql.SQL("ALTER ROLE {} NOSUPERUSER PASSWORD {}").format(
        psycopg.sql.Identifier(INSIDER), psycopg.sql.Literal(INSIDER_PASSWORD)))
    with psycopg.connect(make_conninfo(dsn, user=INSIDER, password=INSIDER_PASSWORD), autocommit=True) as conn:
        assert conn.execute("SELECT session_user, pg_has_role('evalledger_owner', 'MEMBER')").fetchone() \
            == (INSIDER, True)
        conn.execute("SET ROLE evalledger_owner")
        conn.execute("SET search_path = evalledger, public")
        yield conn
    admin.execute(psycopg.sql.SQL("ALTER ROLE {} NOSUPERUSER").format(psycopg.sql.Identifier(INSIDER)))


def is_superuser(admin, role=INSIDER) -> bool:
    return admin.execute("SELECT rolsuper FROM pg_roles WHERE rolname = %s", (role,)).fetchone()[0]


# An escalation payload: harmless unless a superuser runs it, then it makes the insider one.
ESCALATE = (f"IF (SELECT rolsuper FROM pg_catalog.pg_roles WHERE rolname = current_user) THEN "
            f"EXECUTE 'ALTER ROLE {INSIDER} SUPERUSER'; END IF;")


# =================================================================================================
# No name an insider controls: definer code resolves nothing outside pg_catalog
# =================================================================================================
def test_shadowed_advisory_lock_does_not_run_in_a_capture(admin, insider, connect_as):
    insider.execute(f"CREATE FUNCTION evalledger.pg_advisory_xact_lock(integer, integer) RETURNS void "
                    f"LANGUAGE plpgsql AS $$ BEGIN {ESCALATE} END $$")
    insider.execute("GRANT EXECUTE ON FUNCTION evalledger.pg_advisory_xact_lock(integer, integer) TO PUBLIC")
    runner = connect_as("evalledger_runner")
    runner.execute("SET search_path = evalledger, pg_catalog")  # the caller's own path does not matter
    assert runner.execute("SELECT evalledger.capture_ensure_partitions_v1(4)").fetchone()[0] >= 0
    assert not is_superuser(admin)


def test_exact_type_operator_does_not_run_in_a_run_insert(admin, insider, connect_as, reviewer_id):
    insider.execute(f"CREATE FUNCTION evalledger.varchar_eq(varchar, varchar) RETURNS boolean "
                    f"LANGUAGE plpgsql AS $$ BEGIN {ESCALATE} RETURN $1::text OPERATOR(pg_catalog.=) $2::text; END $$")
    insider.execute("GRANT EXECUTE ON FUNCTION evalledger.varchar_eq(varchar, varchar) TO PUBLIC")
    insider.execute("CREATE OPERATOR evalledger.= (LEFTARG = varchar, RIGHTARG = varchar, "
                    "FUNCTION = evalledger.varchar_eq)")
    runner = connect_as("evalledger_runner")
    decided = record_run(runner, reviewer_id, count=3)
    assert decided.decision == "pass"
    assert not is_superuser(admin)
