"""The migrations' shared steps: guard_append_only_v1 and seal_tables_v2, as a later migration uses them."""

import psycopg
import pytest

from tests.db.schema_objects import snapshot


def test_seal_tables_again_changes_nothing(admin):
    before = snapshot(admin)
    with admin.transaction():
        admin.execute("SET LOCAL ROLE evalledger_code")
        admin.execute("CALL evalledger.seal_tables_v2()")
    assert snapshot(admin) == before


def test_a_new_table_is_guarded_and_sealed_past_the_ddl_guard(admin, connect_as):
    with admin.transaction():
        admin.execute("SET LOCAL ROLE evalledger_code")
        admin.execute("CREATE TABLE evalledger.seal_probe (id int NOT NULL)")
        admin.execute("CALL evalledger.guard_append_only_v1(ARRAY['seal_probe:UPDATE OR DELETE:refuse_change_v3'])")
        admin.execute("CALL evalledger.seal_tables_v2()")
    rls = admin.execute("SELECT relrowsecurity, relforcerowsecurity FROM pg_class"
                        " WHERE oid = 'evalledger.seal_probe'::regclass").fetchone()
    assert rls == (True, True)
    triggers = admin.execute("SELECT tgname, tgenabled FROM pg_trigger"
                             " WHERE tgrelid = 'evalledger.seal_probe'::regclass ORDER BY tgname").fetchall()
    assert triggers == [("seal_probe_00_append_only", "A"), ("seal_probe_00_no_truncate", "A")]
    policies = admin.execute("SELECT polname FROM pg_policy"
                             " WHERE polrelid = 'evalledger.seal_probe'::regclass ORDER BY polname").fetchall()
    assert policies == [("seal_probe_code_all",), ("seal_probe_owner_all",)]

    admin.execute("INSERT INTO evalledger.seal_probe VALUES (1)")
    owner = connect_as("evalledger_owner")
    assert owner.execute("SELECT id FROM evalledger.seal_probe").fetchall() == [(1,)]
    # The owner role reads a sealed table and nothing more: refused by privilege before any guard.
    for statement in ("INSERT INTO evalledger.seal_probe VALUES (2)", "UPDATE evalledger.seal_probe SET id = 2",
                      "TRUNCATE evalledger.seal_probe"):
        with pytest.raises(psycopg.errors.InsufficientPrivilege, match="permission denied for table seal_probe"):
            owner.execute(statement)
    # The guard refuses whoever holds the privilege.
    for statement in ("UPDATE evalledger.seal_probe SET id = 2", "TRUNCATE evalledger.seal_probe"):
        with pytest.raises(psycopg.errors.InsufficientPrivilege, match="append-only"):
            with admin.transaction():
                admin.execute(statement)


@pytest.mark.parametrize("role", ["evalledger_owner", "evalledger_runner", "evalledger_auditor"])
def test_only_the_code_role_runs_the_migration_steps(connect_as, role):
    conn = connect_as(role)
    for call in ("CALL evalledger.seal_tables_v2()",
                 "CALL evalledger.guard_append_only_v1(ARRAY['target:UPDATE OR DELETE:refuse_change_v3'])"):
        with pytest.raises(psycopg.errors.InsufficientPrivilege, match="permission denied for procedure"):
            conn.execute(call)
