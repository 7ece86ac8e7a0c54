"""Denial of service by any login. The capture window lock is a lock on a table of
the code role's that only the ledger's writers (its definer functions) take, not a well-known
advisory key; no role may LOCK a ledger table in a mode that stalls its readers (the owner role
keeps SELECT and its registries' INSERT only); no login may store large objects. Tried as every
role's own login (docs/guards.md, section 21)."""

from __future__ import annotations

import psycopg
import pytest
from psycopg import errors

from evalledger.suites.brain_eval import brains
from tests.builders import BRAIN_PROMPTS, record_run, register_prompt, run_fields, start_run
from tests.conftest import REVIEWER_ROLE
from tests.db.insider_logins import (  # noqa: F401 (fixture)
    LOGINS, in_thread, logins, set_zone, wait_until_waiting, zone_that_moves)
from tests.db.test_retention import age_run
from tests.db.test_takes_quality_db import start_run as start_takes_quality_run

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


def test_no_login_stalls_a_prompts_registration_by_a_key_derived_from_it(admin, logins):
    """Two registrations of one prompt's spellings once waited on an advisory key derived from the
    prompt, which any login that knew the prompt could hold: they wait on a table of their own now,
    which no role may lock (brain_version_registration, migration 0161)."""
    prompt = "You are AGT-902, the action brain.\n"
    normal = admin.execute("SELECT evalledger.prompt_normal_hash_v1(%s)", (prompt,)).fetchone()[0]
    agent = logins("agent")  # a role with no grants at all
    agent.execute("SELECT pg_advisory_lock(hashtext('evalledger.prompt_normal'), hashtext(%s))", (normal,))
    # The strongest lock any role may take on the registrations' own: ACCESS SHARE (a read), by the
    # roles that read every journalled table; it is held open here, and waits for nothing.
    for role in ROLES:
        assert set(locks_taken(logins(role, autocommit=False), {
            ("brain_version_registration", mode): f"LOCK TABLE evalledger.brain_version_registration IN {mode} MODE"
            for mode in ("ACCESS SHARE", "ROW SHARE", "ROW EXCLUSIVE", "SHARE", "EXCLUSIVE")})) <= {
            "ACCESS SHARE on brain_version_registration"}
    auditor = logins("auditor", autocommit=False)
    auditor.execute("LOCK TABLE evalledger.brain_version_registration IN ACCESS SHARE MODE")
    owner = logins("owner")
    owner.execute("SET statement_timeout = '5s'")
    brains.add(owner, "AGT-902", "anthropic:claude-sonnet-4-6", prompt)
    auditor.rollback()
    assert admin.execute("SELECT array_agg(target_id) FROM evalledger.brain_version").fetchone()[0] == ["AGT-902"]


@pytest.mark.parametrize("holder", ["a run", "a takes-quality run", "a legal hold"])
def test_an_open_write_naming_one_brain_stalls_no_other_brains_registration(admin, logins, reviewers, holder):
    """A registration waits only on its own brain's target row and the registrations' lock: an open
    transaction that wrote a row naming AGT-901 (which locks AGT-901's target row, FOR SHARE or by its
    foreign key) leaves AGT-902's registration alone."""
    register_prompt(admin, "AGT-901", BRAIN_PROMPTS["AGT-901"])
    writer = logins("owner" if holder == "a legal hold" else "runner", autocommit=False)
    if holder == "a run":
        start_run(writer, registry=admin, **run_fields("AGT-901"), question_count=3,
                  reviewer_user_id=reviewers[REVIEWER_ROLE])
    elif holder == "a takes-quality run":
        writer.execute("SET search_path = evalledger, public")
        start_takes_quality_run(writer, target_id="AGT-901")
    else:
        writer.execute("INSERT INTO evalledger.legal_hold (target_id, reason) VALUES ('AGT-901', 'matter')")
    try:
        owner = logins("owner")
        owner.execute("SET statement_timeout = '5s'")
        brains.add(owner, "AGT-902", "anthropic:claude-sonnet-4-6", "You are AGT-902, another prompt.\n")
    finally:
        writer.rollback()
    assert "AGT-902" in admin.execute("SELECT array_agg(target_id) FROM evalledger.brain_version").fetchone()[0]


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
    from evalledger.ops.doctor import diagnose

    if not admin.execute("SELECT rolsuper FROM pg_roles WHERE rolname = current_user").fetchone()[0]:
        pytest.skip("revoked only where a superuser installs")
    assert [f for f in diagnose(dsn) if f.check == "large objects"] == []
    admin.execute("GRANT EXECUTE ON FUNCTION lo_create(oid) TO PUBLIC")  # as a non-superuser install leaves it
    try:
        [found] = [f for f in diagnose(dsn) if f.check == "large objects"]
        assert (found.level, found.detail.split(":")[0]) == ("warn", "PUBLIC may still call pg_catalog.lo_create(oid)")
    finally:
        admin.execute("REVOKE EXECUTE ON FUNCTION lo_create(oid) FROM PUBLIC")


# -- issue 37, item 4: no lock a role may take stalls a writer longer than a timeout -----------------


@pytest.mark.server_timeouts
def test_a_reader_holding_captures_open_never_queues_the_partition_maker_in_front_of_readers(admin, logins):
    """RevOps' open transaction holds ACCESS SHARE on eval_candidates; creating a partition needs
    ACCESS EXCLUSIVE, and a waiting request queues every later reader and capture behind it. The
    maker waits 100 ms, leaves the months ahead to a later writer, and makes them once it can."""
    import time

    reader = logins("revops", autocommit=False)
    set_zone(reader, "Pacific/Kiritimati")  # months are UTC's whatever the sessions' zones
    reader.execute("SELECT count(*) FROM evalledger.eval_candidates")
    runner = logins("runner")
    set_zone(runner, "America/Adak")
    runner.execute("SET statement_timeout = '10s'")
    other = logins("revops")
    other.execute("SET statement_timeout = '10s'")
    began = time.monotonic()
    thread, outcome = in_thread(lambda: logins("runner").execute(
        "SELECT evalledger.capture_ensure_partitions_v2(5)").fetchone()[0])
    assert other.execute("SELECT count(*) FROM evalledger.eval_candidates").fetchone()[0] >= 0
    thread.join(10)
    assert outcome == {"result": 0} and time.monotonic() - began < 5
    assert runner.execute(CAPTURE).fetchone()[0] is not None
    reader.commit()
    assert runner.execute("SELECT evalledger.capture_ensure_partitions_v2(5)").fetchone()[0] == 2


@pytest.mark.server_timeouts
def test_the_owner_holding_the_holds_open_stops_the_purge_naming_it(admin, logins):
    """The owner role's INSERT on legal_hold lets it LOCK the table ROW EXCLUSIVE and keep its
    transaction open; the purge's SHARE lock then waited for as long as it stayed open. It waits 5
    seconds, then stops in one line naming the login that holds it, having purged nothing."""
    owner = logins("owner", autocommit=False)
    owner.execute("LOCK TABLE evalledger.legal_hold IN ROW EXCLUSIVE MODE")
    retention = logins("retention")
    retention.execute("SET statement_timeout = '30s'")
    with pytest.raises(errors.LockNotAvailable) as refused:
        retention.execute("SELECT * FROM evalledger.retention_purge_v2()")
    assert str(refused.value).splitlines()[0] == (
        f"evalledger: the purge waited 5 s for the legal holds, which {LOGINS['owner'][0]} holds in an open "
        "transaction: nothing purged")
    assert admin.execute("SELECT count(*) FROM evalledger.retention_purge_log").fetchone()[0] == 0
    owner.rollback()
    retention.execute("SELECT * FROM evalledger.retention_purge_v2()").fetchall()


@pytest.mark.server_timeouts
def test_the_purge_leaves_a_partition_a_reader_holds_to_the_next_purge(admin, logins):
    """Dropping an expired capture partition takes ACCESS EXCLUSIVE on eval_candidates: behind an
    auditor's open read it would queue every capture behind it. The purge leaves it for next time."""
    from tests.conftest import capture_partition_ago

    start = capture_partition_ago(admin, "8 years")
    part = f"eval_candidates_p{start:%Y%m}"
    reader = logins("auditor", autocommit=False)
    reader.execute("SELECT count(*) FROM evalledger.eval_candidates")
    retention = logins("retention")
    retention.execute("SET statement_timeout = '10s'")
    purged = retention.execute("SELECT * FROM evalledger.retention_purge_v2()").fetchall()
    assert [p for p in purged if p[0] == "eval_candidates"] == []
    assert admin.execute("SELECT to_regclass(%s)", (f"evalledger.{part}",)).fetchone()[0] is not None
    reader.commit()
    purged = retention.execute("SELECT * FROM evalledger.retention_purge_v2()").fetchall()
    assert ("eval_candidates", 0, None, part) in purged


TABLE_LOCKS = ("ACCESS SHARE", "ROW SHARE", "ROW EXCLUSIVE")


@pytest.mark.server_timeouts
@pytest.mark.parametrize("role", ROLES)
def test_every_lock_a_role_may_take_held_open_stalls_no_writer(admin, logins, role, open_run):
    """The role's login takes every table lock it may on every ledger table (the modes its SELECT and
    INSERT grants allow; a stronger one is refused, test_no_role_locks_a_ledger_table_against_its_readers)
    and holds them all in one open transaction. Meanwhile each writer finishes, or stops in one line
    naming the holder, well within its statement timeout: a capture, the partition maker, a
    takes-quality run judged and completed, a brain-eval run completed, the seal, and the purge."""
    from psycopg.types.json import Jsonb

    holder = logins(role, autocommit=False)
    held = []
    for table in ledger_tables(admin):
        for mode in TABLE_LOCKS:
            holder.execute("SAVEPOINT attempt")
            try:
                holder.execute(f"LOCK TABLE evalledger.{table} IN {mode} MODE NOWAIT")
                held.append(f"{mode} on {table}")
                holder.execute("RELEASE SAVEPOINT attempt")
            except psycopg.errors.InsufficientPrivilege:
                holder.execute("ROLLBACK TO SAVEPOINT attempt")
    assert held or role in ("agent", "retention")  # these two may read no ledger table
    run_to_complete = open_run()

    def within(conn, seconds="8s"):
        conn.execute(f"SET statement_timeout = '{seconds}'")
        return conn

    runner = within(logins("runner"))
    assert runner.execute(CAPTURE).fetchone()[0] is not None
    assert runner.execute("SELECT evalledger.capture_ensure_partitions_v2(5)").fetchone()[0] in (0, 2)
    run_id = runner.execute(
        "INSERT INTO evalledger.eval_takes_quality_runs (corpus_source, sample_limit, seed, n_takes, corpus_sha8, "
        "prompt_sha8, models) VALUES ('db', 10, 1, 3, 'aaaaaaaa', 'bbbbbbbb', %s) RETURNING id",
        (["openai:gpt-4o", "anthropic:claude-opus-4-7", "google:gemini-1.5-pro"],)).fetchone()[0]
    for model in ("openai:gpt-4o", "anthropic:claude-opus-4-7", "google:gemini-1.5-pro"):
        runner.execute("INSERT INTO evalledger.eval_takes_quality_judge_verdicts (run_id, cycle, model, recorded, "
                       "response_json) VALUES (%s, 1, %s, false, %s)",
                       (run_id, model, Jsonb({"scores": {d: 8 for d in ("accuracy", "attribution", "weight_calibration",
                                                                        "kind_classification", "signal_density")},
                                              "feedback": "fine", "improvements": []})))
    assert runner.execute("SELECT evalledger.takes_quality_complete_v1(%s)", (run_id,)).fetchone()[0] is not None
    assert runner.execute(COMPLETE, (run_to_complete,)).fetchone()[0] is not None
    runner.execute("SELECT evalledger.ledger_seal_v1()")
    retention = within(logins("retention"), "20s")
    if role == "owner":  # its INSERT on the holds lets it hold them ROW EXCLUSIVE: named, not waited for
        with pytest.raises(errors.LockNotAvailable, match=f"which {LOGINS['owner'][0]} holds in an open transaction"):
            retention.execute("SELECT * FROM evalledger.retention_purge_v2()")
    else:
        retention.execute("SELECT * FROM evalledger.retention_purge_v2()").fetchall()
    holder.rollback()
