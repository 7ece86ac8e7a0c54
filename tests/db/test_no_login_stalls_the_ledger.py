"""Denial of service by any login. The capture window lock is a lock on a table of
the code role's that only the ledger's writers (its definer functions) take, not a well-known
advisory key; no role may LOCK a ledger table in a mode that stalls its readers (the owner role
keeps SELECT and its registries' INSERT only); no login may store large objects. Tried as every
role's own login (docs/guards.md, section 21)."""

from __future__ import annotations

import psycopg
import pytest
from psycopg import errors

from tests.builders import BRAIN_PROMPTS, record_run, register_prompt
from tests.conftest import REVIEWER_ROLE
from tests.db.insider_logins import (  # noqa: F401 (fixture)
    LOGINS, in_thread, logins, set_zone, wait_until_waiting, zone_that_moves)
from tests.db.test_retention import age_run

CAPTURE = ("INSERT INTO evalledger.eval_candidates (tool_name, query, vector_enabled, expansion_applied, latency_ms, "
           "remote, capture_key) VALUES ('query', 'q', true, false, 1, false, gen_random_uuid()) RETURNING created_at")
ROLES = ["runner", "reviewer", "revops", "auditor", "owner", "retention", "agent"]
# The registries and holds the owner role maintains: its only INSERTs.
OWNER_INSERTS = {"target", "rubric", "reviewer", "prompt_tuner", "brain_version", "brain_eval_catalog",
                 "brain_eval_import", "legal_hold", "legal_hold_release"}


def ledger_tables(admin) -> list[str]:
    return [r[0] for r in admin.execute("SELECT c.relname FROM pg_class c WHERE c.relnamespace = 'evalledger'::regnamespace "
                                        "AND c.relkind IN ('r', 'p') AND NOT c.relispartition ORDER BY 1")]


def test_no_login_stalls_the_capture_writers_with_the_old_advisory_keys(admin, logins):
    agent = logins("agent")  # a role with no grants at all
    agent.execute("SELECT pg_advisory_lock(1702257505, 1), pg_advisory_lock(1702257505, 2)")
    runner = logins("runner")
    runner.execute("SET statement_timeout = '5s'")
    assert runner.execute(CAPTURE).fetchone()[0] is not None
    assert runner.execute("SELECT evalledger.capture_ensure_partitions_v2(3)").fetchone()[0] >= 0
    revops = logins("revops")
    revops.execute("SET statement_timeout = '5s'")
    assert revops.execute("SELECT evalledger.capture_export_bound_v2()").fetchone()[0] is not None
    # The lock that does guard the window is on a table no application role may lock or read.
    for role in ROLES:
        conn = logins(role, autocommit=False)
        for statement in ("LOCK TABLE evalledger.capture_window IN ACCESS SHARE MODE",
                          "LOCK TABLE evalledger.capture_window IN ACCESS EXCLUSIVE MODE",
                          "SELECT * FROM evalledger.capture_window"):
            with pytest.raises(errors.InsufficientPrivilege,
                               match="permission denied for (table capture_window|schema evalledger)"):
                conn.execute(statement)
            conn.rollback()


def test_the_export_bound_waits_for_an_open_capture_then_holds_nothing(admin, logins):
    """The bound is later than every row of a transaction open or committed, and the lock it took
    is gone when it returns (a subtransaction rolled back): it never stalls the writers after."""
    writer = logins("runner", autocommit=False)
    written = writer.execute(CAPTURE).fetchone()[0]
    revops = logins("revops")
    thread, outcome = in_thread(lambda: revops.execute("SELECT evalledger.capture_export_bound_v2()").fetchone()[0])
    wait_until_waiting(admin, LOGINS["revops"][0])
    writer.commit()
    thread.join(20)
    assert outcome["result"] > written
    assert admin.execute("SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a USING (pid) "
                         "WHERE a.usename = %s AND l.relation = 'evalledger.capture_window'::regclass",
                         (LOGINS["revops"][0],)).fetchone()[0] == 0
    assert writer.execute(CAPTURE).fetchone()[0] >= outcome["result"]
    writer.commit()


@pytest.mark.parametrize("role", ROLES)
def test_no_role_locks_a_ledger_table_against_its_readers(admin, logins, role):
    """LOCK TABLE in any mode stronger than ROW EXCLUSIVE needs UPDATE, DELETE, TRUNCATE (or, on 17+,
    MAINTAIN) on the table: no application role holds one (column grants do not count)."""
    assert locks_taken(logins(role, autocommit=False), {
        (table, mode): f"LOCK TABLE evalledger.{table} IN {mode} MODE NOWAIT"
        for table in ledger_tables(admin) for mode in ("SHARE", "EXCLUSIVE", "ACCESS EXCLUSIVE")}) == []


def locks_taken(conn, attempts: dict[tuple[str, str], str]) -> list[str]:
    """Which of the {(table, lock): statement} attempts took their lock; each other must be refused
    by the privilege check, naming the table (or, for a role without the schema, the schema)."""
    taken = []
    for (table, lock), statement in attempts.items():
        try:
            conn.execute(statement)
            taken.append(f"{lock} on {table}")
        except psycopg.errors.InsufficientPrivilege as exc:
            assert exc.diag.message_primary in (f"permission denied for table {table}",
                                                "permission denied for schema evalledger")
        conn.rollback()
    return taken


# The tables whose rows are runs: every question row, verdict, score and sign-off of a run locks
# its row FOR KEY SHARE (a foreign key) or FOR SHARE (lock_run_v1), and its completion and purge
# take it FOR UPDATE.
RUN_TABLES = ("brain_eval_log", "eval_takes_quality_runs", "eval_work_quality_snapshots")
ROW_LOCKS = ("FOR UPDATE", "FOR NO KEY UPDATE", "FOR SHARE", "FOR KEY SHARE")


@pytest.mark.parametrize("role", ROLES)
def test_no_role_locks_the_rows_of_a_run(admin, logins, role):
    """A row lock needs UPDATE on the table (any column). The runner held UPDATE of completed_at on
    each run table, so it could hold FOR UPDATE on every open run and stall every question row,
    score and sign-off written to them; it now completes runs through the code role's functions
    (brain_eval_complete_v1, takes_quality_complete_v1, work_quality_complete_v1), and no
    application role holds UPDATE on a run table."""
    assert locks_taken(logins(role, autocommit=False), {
        (table, lock): f"SELECT 1 FROM evalledger.{table} {lock}" for table in RUN_TABLES for lock in ROW_LOCKS}) == []


COMPLETE = "SELECT evalledger.brain_eval_complete_v1(%s, NULL)"


@pytest.fixture
def open_run(admin, reviewers):
    """A factory of open brain-eval runs, every question scored and signed off: ready to complete."""
    for brain, prompt in BRAIN_PROMPTS.items():
        register_prompt(admin, brain, prompt)
    return lambda: record_run(admin, reviewers[REVIEWER_ROLE], count=3, complete=False)


def decided(admin, *runs) -> dict:
    return {r[0]: r[1] for r in admin.execute(
        "SELECT eval_run_id, decision IS NOT NULL FROM evalledger.brain_eval_log WHERE eval_run_id = ANY (%s)",
        (list(runs),))}


def test_the_runner_completes_a_run_it_may_read_through_the_function_alone(admin, logins, open_run):
    """The function completes an open run the runner's policy shows it (the hot tier), once; a cold
    run reads as no run; no other role may call it, the owner role included (it completes nothing)."""
    hot, cold = open_run(), open_run()
    age_run(admin, cold, "timezone('UTC', timezone('UTC', now()) - interval '30 months')")
    for role in ("reviewer", "owner", "revops", "auditor", "retention"):
        conn = logins(role)
        with pytest.raises(psycopg.errors.InsufficientPrivilege,
                           match="permission denied for function brain_eval_complete_v1"):
            conn.execute(COMPLETE, (hot,))
    runner = logins("runner")
    assert runner.execute(COMPLETE, (cold,)).fetchone()[0] is False
    assert runner.execute(COMPLETE, (hot,)).fetchone()[0] is True
    assert runner.execute(COMPLETE, (hot,)).fetchone()[0] is False  # once
    assert decided(admin, hot, cold) == {hot: True, cold: False}


def test_a_crafted_zone_moves_no_run_across_the_hot_tier_for_completion(admin, logins, open_run):
    """The function asks caller_reads_v1 in UTC from the statement's clock: a run between the UTC
    boundary and where the runner's crafted TimeZone would put it is completed as UTC says."""
    runner = logins("runner")
    zone, hours = zone_that_moves(runner, "24 months")
    assert abs(hours) >= 20, "no zone moves the hot tier by a day today"
    run_id = open_run()
    age_run(admin, run_id, f"timezone('UTC', timezone('UTC', now()) - interval '24 months') - interval '{hours / 2} hours'")
    clock = admin.execute("SELECT created_at FROM evalledger.brain_eval_log WHERE eval_run_id = %s", (run_id,)).fetchone()[0]
    set_zone(runner, zone)
    hot_by_utc = hours < 0
    # In that zone the session's own arithmetic says the opposite of UTC ...
    assert runner.execute("SELECT %s::timestamptz >= now() - interval '24 months'", (clock,)).fetchone()[0] \
        is not hot_by_utc
    # ... the completion follows UTC.
    assert runner.execute(COMPLETE, (run_id,)).fetchone()[0] is hot_by_utc
    assert decided(admin, run_id) == {run_id: hot_by_utc}


def test_two_runners_completing_one_run_at_once_complete_it_once(admin, logins, open_run):
    """The second waits for the first's row lock, then finds no open run (READ COMMITTED re-reads the
    row): one decision, one count in the panel tables."""
    run_id = open_run()
    first, second = logins("runner", autocommit=False), logins("runner")
    assert first.execute(COMPLETE, (run_id,)).fetchone()[0] is True
    thread, outcome = in_thread(lambda: second.execute(COMPLETE, (run_id,)).fetchone()[0])
    wait_until_waiting(admin, LOGINS["runner"][0])
    first.commit()
    thread.join(30)
    assert outcome == {"result": False}
    assert decided(admin, run_id) == {run_id: True}
    assert admin.execute("SELECT sum(runs) FROM evalledger.brain_eval_runs_by_month").fetchone()[0] == 1


def test_the_owner_role_holds_only_what_it_uses(admin):
    tables = ledger_tables(admin)
    privileges = ["UPDATE", "DELETE", "TRUNCATE", "REFERENCES", "TRIGGER"]
    if admin.info.server_version >= 170000:
        privileges.append("MAINTAIN")
    held = [(t, p) for t in tables for p in privileges
            if admin.execute("SELECT has_table_privilege('evalledger_owner', %s, %s)", (f"evalledger.{t}", p)).fetchone()[0]]
    assert held == []
    inserts = {t for t in tables
               if admin.execute("SELECT has_table_privilege('evalledger_owner', %s, 'INSERT')", (f"evalledger.{t}",)).fetchone()[0]}
    assert inserts == OWNER_INSERTS
    unreadable = {t for t in tables
                  if not admin.execute("SELECT has_table_privilege('evalledger_owner', %s, 'SELECT')",
                                       (f"evalledger.{t}",)).fetchone()[0]}
    assert unreadable == {"capture_purge_marker", "retention_purge_marker", "capture_window"}


@pytest.mark.parametrize("role", ROLES)
def test_no_login_stores_a_large_object(admin, logins, role):
    if not admin.execute("SELECT rolsuper FROM pg_roles WHERE rolname = current_user").fetchone()[0]:
        pytest.skip("revoked only where a superuser installs (doctor warns elsewhere)")
    conn = logins(role)
    before = admin.execute("SELECT count(*) FROM pg_largeobject_metadata").fetchone()[0]
    for call in ("lo_create(0)", "lo_creat(-1)", "lo_from_bytea(0, 'a payload')"):
        with pytest.raises(errors.InsufficientPrivilege, match=rf"permission denied for function {call.split('(')[0]}"):
            conn.execute(f"SELECT {call}")
    assert admin.execute("SELECT count(*) FROM pg_largeobject_metadata").fetchone()[0] == before


def test_doctor_warns_where_any_login_may_still_store_large_objects(admin, dsn):
    from evalledger.core.doctor import diagnose

    if not admin.execute("SELECT rolsuper FROM pg_roles WHERE rolname = current_user").fetchone()[0]:
        pytest.skip("revoked only where a superuser installs")
    assert [f for f in diagnose(dsn) if f.check == "large objects"] == []
    admin.execute("GRANT EXECUTE ON FUNCTION lo_create(oid) TO PUBLIC")  # as a non-superuser install leaves it
    try:
        [found] = [f for f in diagnose(dsn) if f.check == "large objects"]
        assert (found.level, found.detail.split(":")[0]) == ("warn", "PUBLIC may still call pg_catalog.lo_create(oid)")
    finally:
        admin.execute("REVOKE EXECUTE ON FUNCTION lo_create(oid) FROM PUBLIC")
