"""No insider can bend the ledger: every attempt below was seen to succeed once.

Each attempt is made as the role that succeeded: a real login that is a member of
evalledger_owner (not a SET ROLE from the superuser's session, so session_user is the insider
too), or the runner. Each asserts the refusal (SQLSTATE class and message), that no row changed
and, for the escalations, that the insider is still not a superuser afterwards.
docs/guards.md ("Insiders") maps each attempt to the guard that stops it.
"""

from __future__ import annotations

import contextlib
import copy
import re
import uuid

import psycopg
import pytest
from psycopg import errors
from psycopg.conninfo import make_conninfo
from psycopg.types.json import Jsonb

from evalledger.ops.doctor import EVENT_TRIGGER_PROTECTIONS, diagnose
from evalledger.core.migrate import migrate
from evalledger.suites.brain_eval import brains
from evalledger.suites.brain_eval import store as brain_eval
from tests.builders import SHA_A, load_catalog, record_run, run_fields
from tests.conftest import OTHER_REVIEWER_ROLE, REVIEWER_ROLE, ensure_login_role
from tests.db.test_append_only import backdated_run, in_thread, purge, transaction_as, wait_until_blocked
from tests.db.test_retention import age_run, purge_committed

INSIDER = "evalledger_test_insider"
INSIDER_PASSWORD = "insider-" + uuid.uuid4().hex  # works where the server asks for one, and where it trusts
# The search_path every definer function must run with: nothing an application role can create in.
SAFE_PATH = "search_path=pg_catalog, pg_temp"
LEDGER_TABLES = ("target", "rubric", "rubric_activation", "reviewer", "prompt_tuner", "brain_analysis_log",
                 "brain_eval_log", "brain_eval_question_score", "legal_hold", "legal_hold_release", "take",
                 "eval_takes_quality_runs", "eval_takes_quality_judge_verdicts", "eval_candidates",
                 "eval_candidate_keys", "eval_capture_failures")


@pytest.fixture(autouse=True)
def standard_catalog(admin):
    """The catalog run_fields() names: a run names a loaded catalog."""
    load_catalog(admin)


@pytest.fixture
def insider(admin, dsn):
    """A login of its own, member of evalledger_owner: what a deploy account or a DBA's helper is."""
    ensure_login_role(admin, INSIDER, "evalledger_owner")
    admin.execute(psycopg.sql.SQL("ALTER ROLE {} NOSUPERUSER PASSWORD {}").format(
        psycopg.sql.Identifier(INSIDER), psycopg.sql.Literal(INSIDER_PASSWORD)))
    with psycopg.connect(make_conninfo(dsn, user=INSIDER, password=INSIDER_PASSWORD), autocommit=True) as conn:
        assert conn.execute("SELECT session_user, pg_has_role('evalledger_owner', 'MEMBER')").fetchone() \
            == (INSIDER, True)
        conn.execute("SET search_path = evalledger, public")
        yield conn
    admin.execute(psycopg.sql.SQL("ALTER ROLE {} NOSUPERUSER").format(psycopg.sql.Identifier(INSIDER)))


def is_superuser(admin, role=INSIDER) -> bool:
    return admin.execute("SELECT rolsuper FROM pg_roles WHERE rolname = %s", (role,)).fetchone()[0]


# An insider's payload: it makes the insider a superuser if a superuser runs it, and it gives itself
# away if the ledger's code (the code role) runs it; run by anyone else it does nothing.
PAYLOAD = (f"IF (SELECT rolsuper FROM pg_catalog.pg_roles WHERE rolname = current_user) THEN "
           f"EXECUTE 'ALTER ROLE {INSIDER} SUPERUSER'; END IF; "
           f"IF current_user = 'evalledger_code' THEN RAISE EXCEPTION 'insider code ran as %', current_user; END IF;")


def ledger_rows(admin) -> dict:
    return {t: admin.execute(f"SELECT * FROM evalledger.{t} ORDER BY 1").fetchall() for t in LEDGER_TABLES}


def catalog_state(admin) -> dict:
    """Everything about the ledger's tables that DDL could change: columns, constraints, policies,
    rules, persistence, owners, privileges, triggers, default privileges."""
    def q(sql):
        return admin.execute(sql).fetchall()
    ledger = "c.relnamespace = 'evalledger'::regnamespace"
    return {
        "tables": q(f"SELECT c.relname, c.relkind, c.relpersistence, pg_get_userbyid(c.relowner), c.relacl::text, "
                    f"c.relrowsecurity, c.relforcerowsecurity FROM pg_class c WHERE {ledger} ORDER BY 1"),
        "columns": q(f"SELECT c.relname, a.attname, format_type(a.atttypid, a.atttypmod), a.attnotnull, "
                     f"pg_get_expr(d.adbin, d.adrelid), a.attacl::text FROM pg_attribute a "
                     f"JOIN pg_class c ON c.oid = a.attrelid LEFT JOIN pg_attrdef d ON (d.adrelid, d.adnum) = "
                     f"(a.attrelid, a.attnum) WHERE {ledger} AND a.attnum > 0 AND NOT a.attisdropped ORDER BY 1, 2"),
        "constraints": q(f"SELECT c.relname, k.conname, pg_get_constraintdef(k.oid) FROM pg_constraint k "
                         f"JOIN pg_class c ON c.oid = k.conrelid WHERE {ledger} ORDER BY 1, 2"),
        "policies": q("SELECT tablename, policyname, permissive, roles::text, cmd, qual, with_check FROM pg_policies "
                      "WHERE schemaname = 'evalledger' ORDER BY 1, 2"),
        "rules": q("SELECT tablename, rulename, definition FROM pg_rules WHERE schemaname = 'evalledger' ORDER BY 1, 2"),
        "triggers": q(f"SELECT c.relname, t.tgname, t.tgenabled, t.tgfoid::regprocedure::text FROM pg_trigger t "
                      f"JOIN pg_class c ON c.oid = t.tgrelid WHERE {ledger} ORDER BY 1, 2"),
        "functions": q("SELECT p.oid::regprocedure::text, pg_get_userbyid(p.proowner), md5(p.prosrc), p.proacl::text "
                       "FROM pg_proc p WHERE p.pronamespace = 'evalledger'::regnamespace ORDER BY 1"),
        "operators": q("SELECT o.oid::regoperator::text FROM pg_operator o "
                       "WHERE o.oprnamespace = 'evalledger'::regnamespace ORDER BY 1"),
        "default_acl": q("SELECT pg_get_userbyid(defaclrole), defaclnamespace::regnamespace::text, defaclobjtype, "
                         "defaclacl::text FROM pg_default_acl ORDER BY 1, 2, 3"),
        "schema": q("SELECT nspname, pg_get_userbyid(nspowner), nspacl::text FROM pg_namespace "
                    "WHERE nspname LIKE 'evalledger%' ORDER BY 1"),
    }


@contextlib.contextmanager
def nothing_changes(admin):
    rows, catalog = ledger_rows(admin), catalog_state(admin)
    yield
    assert ledger_rows(admin) == rows, "ledger rows changed"
    after = catalog_state(admin)
    assert {k: v for k, v in after.items() if v != catalog[k]} == {}, "the ledger's catalog changed"


def each_refused(admin, conn, cases):
    """Run every (statement, error, message) on conn; report every one that was not refused so, or
    that changed a row or the catalog (a refusal changes nothing, so the cases cannot disturb each other)."""
    failures = []
    for statement, error, says in cases:
        try:
            with nothing_changes(admin), pytest.raises(error, match=says):
                conn.execute(statement)
        except (AssertionError, pytest.fail.Exception, psycopg.Error) as exc:
            failures.append(f"{statement}: {(str(exc).splitlines() or [type(exc).__name__])[0]}")
    assert not failures, "\n".join(failures)


@pytest.fixture
def ledger(admin, connect_as, reviewer_id):
    """A completed run (pass), an open one, a legal hold and a capture: rows for DDL to bend."""
    runner = connect_as("evalledger_runner")
    done = record_run(runner, reviewer_id, count=3)
    record_run(runner, reviewer_id, count=3, complete=False)
    admin.execute("INSERT INTO evalledger.legal_hold (eval_run_id, reason) VALUES (%s, 'litigation')",
                  (done.eval_run_id,))
    runner.execute("INSERT INTO evalledger.eval_candidates (tool_name, query, vector_enabled, expansion_applied, "
                   "latency_ms, remote, capture_key) VALUES ('query', 'q', true, false, 1, false, gen_random_uuid())")
    return done


# =================================================================================================
# No name an insider controls: definer code resolves nothing outside pg_catalog
# =================================================================================================
def test_every_definer_function_runs_with_the_safe_search_path(admin):
    definers = admin.execute(
        "SELECT p.oid::regprocedure::text, p.proconfig FROM pg_proc p "
        "WHERE p.prosecdef AND p.pronamespace NOT IN ('pg_catalog'::regnamespace, 'information_schema'::regnamespace) "
        "ORDER BY 1").fetchall()
    assert len(definers) >= 15, definers  # the ledger's own; a catalog query that found none proves nothing
    unsafe = [name for name, config in definers
              if not config or [c for c in config if c.startswith("search_path=")] != [SAFE_PATH]]
    assert unsafe == [], f"definer functions without {SAFE_PATH}: {unsafe}"


def test_the_check_lists_a_definer_function_without_the_safe_path(admin):
    """The test above fails on a definer function that forgets its search_path (shown, not assumed)."""
    admin.execute("CREATE FUNCTION evalledger.careless_v1() RETURNS int LANGUAGE sql SECURITY DEFINER "
                  "SET search_path = evalledger, pg_temp AS $$ SELECT 1 $$")
    with pytest.raises(AssertionError, match=r"careless_v1\(\)"):
        test_every_definer_function_runs_with_the_safe_search_path(admin)


def test_no_ledger_code_is_a_superusers(admin):
    """Definer code runs as the code role, which is no superuser: a payload it ran would gain nothing."""
    assert admin.execute(
        "SELECT DISTINCT pg_get_userbyid(p.proowner), r.rolsuper, r.rolcanlogin, r.rolbypassrls FROM pg_proc p "
        "JOIN pg_roles r ON r.oid = p.proowner WHERE p.pronamespace = 'evalledger'::regnamespace").fetchall() \
        == [("evalledger_code", False, False, False)]


def test_shadowed_advisory_lock_does_not_run_in_a_capture(admin, insider, connect_as):
    shadow = ("CREATE FUNCTION evalledger.pg_advisory_xact_lock(integer, integer) RETURNS void "
              f"LANGUAGE plpgsql AS $$ BEGIN {PAYLOAD} END $$")
    with nothing_changes(admin), pytest.raises(errors.InsufficientPrivilege, match="permission denied for schema evalledger"):
        insider.execute(shadow)
    # Neighbours: in the insider's own temporary schema, and in the caller's search_path.
    insider.execute(shadow.replace("evalledger.", "pg_temp."))
    insider.execute("SET search_path = pg_temp, evalledger, pg_catalog")
    assert insider.execute("SELECT evalledger.capture_ensure_partitions_v2(4)").fetchone()[0] >= 0
    # Planted in the ledger's schema itself, it is still not what the capture calls.
    admin.execute(shadow)
    admin.execute(f"ALTER FUNCTION evalledger.pg_advisory_xact_lock(integer, integer) OWNER TO {INSIDER}")
    admin.execute("GRANT EXECUTE ON FUNCTION evalledger.pg_advisory_xact_lock(integer, integer) TO PUBLIC")
    runner = connect_as("evalledger_runner")
    runner.execute("SET search_path = evalledger, pg_catalog")
    assert runner.execute("SELECT evalledger.capture_ensure_partitions_v2(5)").fetchone()[0] >= 0
    assert not is_superuser(admin)


def test_exact_type_operator_does_not_run_in_a_run_insert(admin, insider, connect_as, reviewer_id):
    function = ("CREATE FUNCTION evalledger.varchar_eq(varchar, varchar) RETURNS boolean LANGUAGE plpgsql "
                f"AS $$ BEGIN {PAYLOAD} RETURN $1::text OPERATOR(pg_catalog.=) $2::text; END $$")
    operator = "CREATE OPERATOR evalledger.= (LEFTARG = varchar, RIGHTARG = varchar, FUNCTION = evalledger.varchar_eq)"
    with nothing_changes(admin), pytest.raises(errors.InsufficientPrivilege, match="permission denied for schema evalledger"):
        insider.execute(function)
    # Planted in the ledger's schema by someone who could, it is still not what the triggers use.
    admin.execute(function)
    admin.execute(f"ALTER FUNCTION evalledger.varchar_eq(varchar, varchar) OWNER TO {INSIDER}")
    admin.execute("GRANT EXECUTE ON FUNCTION evalledger.varchar_eq(varchar, varchar) TO PUBLIC")
    admin.execute(operator)
    admin.execute(f"ALTER OPERATOR evalledger.= (varchar, varchar) OWNER TO {INSIDER}")
    decided = record_run(connect_as("evalledger_runner"), reviewer_id, count=3)
    assert decided.decision == "pass"
    # The insider's own writes (the registries, a hold) go through the same triggers, under its own
    # search_path.
    insider.execute("SET search_path = evalledger, pg_catalog")
    brains.add(insider, "AGT-901", "anthropic:claude-sonnet-4-6", "An insider's brain version.")
    insider.execute("INSERT INTO evalledger.legal_hold (eval_run_id, reason) VALUES (%s, 'matter')", (decided.eval_run_id,))
    assert not is_superuser(admin)


def test_temporary_tables_do_not_shadow_the_ledger_in_definer_code(admin, connect_as, reviewer_id):
    """pg_temp is on every definer path (last): a temporary prompt_tuner or brain_prompt without the
    tuner must not let the tuner review, nor a temporary rubric decide. (The runner writes runs; the
    owner role no longer may.)"""
    admin.execute("INSERT INTO evalledger.prompt_tuner (target_id, user_id) VALUES ('AGT-901', %s)", (reviewer_id,))
    runner = connect_as("evalledger_runner")
    runner.execute("CREATE TEMP TABLE prompt_tuner (target_id varchar(16), user_id uuid, registered_at timestamptz)")
    runner.execute("CREATE TEMP TABLE brain_prompt (system_prompt_hash varchar(64), target_id varchar(16))")
    runner.execute("CREATE TEMP TABLE rubric AS SELECT * FROM evalledger.rubric")
    runner.execute("UPDATE pg_temp.rubric SET definition = jsonb_set(definition, '{hard_failure_decision}', '\"pass\"')")
    runner.execute("SET search_path = pg_temp, evalledger, pg_catalog")
    with pytest.raises(errors.CheckViolation, match="is not independent of this run's system prompt"):
        record_run(runner, reviewer_id, count=3)


def test_check_constraint_on_a_table_definer_code_writes_is_refused(admin, insider, connect_as, ledger):
    """capture_keys_v1 writes eval_candidate_keys as the code role: nothing of the insider's may run there."""
    insider.execute(f"CREATE FUNCTION pg_temp.gate(uuid) RETURNS boolean LANGUAGE plpgsql AS $$ BEGIN {PAYLOAD} "
                    "RETURN true; END $$")
    each_refused(admin, insider, [
        ("ALTER TABLE evalledger.eval_candidate_keys ADD CONSTRAINT gate CHECK (pg_temp.gate(capture_key))",
         errors.InsufficientPrivilege, "must be owner of table eval_candidate_keys"),
        # Neighbours: everything else a write evaluates.
        ("CREATE INDEX gate_idx ON evalledger.eval_candidate_keys ((pg_temp.gate(capture_key)))",
         errors.InsufficientPrivilege, "must be owner of table eval_candidate_keys"),
        ("ALTER TABLE evalledger.eval_candidate_keys ADD COLUMN gate boolean DEFAULT pg_temp.gate(NULL)",
         errors.InsufficientPrivilege, "must be owner of table eval_candidate_keys"),
        ("ALTER TABLE evalledger.eval_candidate_keys ALTER COLUMN created_at SET DEFAULT now()",
         errors.InsufficientPrivilege, "must be owner of table eval_candidate_keys"),
        ("CREATE TRIGGER gate BEFORE INSERT ON evalledger.eval_candidate_keys FOR EACH ROW "
         "EXECUTE FUNCTION pg_temp.gate()", errors.InsufficientPrivilege, "permission denied for table eval_candidate_keys"),
        ("ALTER TABLE evalledger.eval_candidates ADD CONSTRAINT gate CHECK (pg_temp.gate(capture_key))",
         errors.InsufficientPrivilege, "must be owner of table eval_candidates"),
        ("CREATE TABLE evalledger.eval_candidates_p209901 PARTITION OF evalledger.eval_candidates "
         "FOR VALUES FROM ('2099-01-01') TO ('2099-02-01')", errors.InsufficientPrivilege,
         "permission denied for schema evalledger"),
        ("CREATE DOMAIN evalledger.gated AS uuid CHECK (pg_temp.gate(VALUE))", errors.InsufficientPrivilege,
         "permission denied for schema evalledger"),
    ])
    runner = connect_as("evalledger_runner")
    runner.execute("INSERT INTO evalledger.eval_candidates (tool_name, query, vector_enabled, expansion_applied, "
                   "latency_ms, remote, capture_key) VALUES ('query', 'q2', true, false, 1, false, gen_random_uuid())")
    assert not is_superuser(admin)


# =================================================================================================
# A code owner no person holds: the owner role owns nothing whose DDL could rewrite history
# =================================================================================================
MUST_OWN = "must be owner of"
NO_CREATE = "permission denied for schema evalledger"
DDL_REFUSED = "DDL refused on the ledger"

# Every DDL once seen to succeed as a member of evalledger_owner, then neighbours of each.
INSIDER_DDL = [
    # Rewriting stored values: no row trigger fires for a table rewrite.
    ("ALTER TABLE evalledger.brain_eval_log ALTER COLUMN decision TYPE text USING ('fail')", MUST_OWN),
    ("ALTER TABLE evalledger.brain_eval_question_score ALTER COLUMN hallucinations_detected TYPE integer USING 0",
     MUST_OWN),
    ("ALTER TABLE evalledger.eval_takes_quality_runs ALTER COLUMN verdict TYPE text USING 'pass'", MUST_OWN),
    ("ALTER TABLE evalledger.brain_eval_log ALTER COLUMN decision SET DATA TYPE evalledger.eval_decision "
     "USING 'pass'::evalledger.eval_decision", MUST_OWN),
    ("ALTER TYPE evalledger.eval_decision RENAME VALUE 'fail' TO 'pass_quietly'", "must be owner of type"),
    ("ALTER TYPE evalledger.eval_decision ADD VALUE 'waived'", "must be owner of type"),
    # Destroying history.
    ("ALTER TABLE evalledger.brain_eval_log DROP COLUMN decision", MUST_OWN),
    ("ALTER TABLE evalledger.legal_hold DROP COLUMN released_at", MUST_OWN),
    ("DROP TABLE evalledger.legal_hold", MUST_OWN),
    # Renaming, then forging a copy that the readers' views would read.
    ("ALTER TABLE evalledger.brain_eval_log RENAME COLUMN started_at TO started_at_real", MUST_OWN),
    ("ALTER TABLE evalledger.brain_eval_log ADD COLUMN recorded_on timestamptz DEFAULT '2000-01-01'", MUST_OWN),
    ("ALTER TABLE evalledger.brain_eval_log RENAME TO brain_eval_log_real", MUST_OWN),
    ("ALTER TABLE evalledger.brain_eval_log SET SCHEMA public", MUST_OWN),
    ("CREATE TABLE evalledger.brain_eval_log_forged (LIKE evalledger.brain_eval_log)", NO_CREATE),
    ("CREATE VIEW evalledger.cost_per_run_v2 AS SELECT 1", NO_CREATE),
    ("CREATE OR REPLACE VIEW evalledger.cost_per_run_v1 AS SELECT * FROM evalledger.cost_per_run_rows_v1() "
     "WHERE false", NO_CREATE),
    ("ALTER VIEW evalledger.stale_fixture_pass_rate_v1 RENAME TO stale_fixture_pass_rate_real", MUST_OWN),
    # Losing rows in a crash.
    ("ALTER TABLE evalledger.legal_hold SET UNLOGGED", MUST_OWN),
    ("ALTER TABLE evalledger.brain_eval_question_score SET UNLOGGED", MUST_OWN),
    ("ALTER TABLE evalledger.eval_takes_quality_judge_verdicts SET UNLOGGED", MUST_OWN),
    # Discarding writes.
    ("CREATE RULE no_holds AS ON INSERT TO evalledger.legal_hold DO INSTEAD NOTHING", MUST_OWN),
    ("CREATE RULE no_failures AS ON INSERT TO evalledger.brain_eval_log WHERE NEW.decision = 'fail' "
     "DO INSTEAD NOTHING", MUST_OWN),
    # Who reads what.
    ("ALTER POLICY brain_eval_log_revops ON evalledger.brain_eval_log USING (true)", MUST_OWN),
    ("ALTER POLICY brain_eval_log_auditor ON evalledger.brain_eval_log USING (decision <> 'fail')", MUST_OWN),
    ("CREATE POLICY agent_reads ON evalledger.brain_eval_log FOR SELECT TO evalledger_agent USING (true)", MUST_OWN),
    ("CREATE POLICY hide_failures ON evalledger.brain_eval_log AS RESTRICTIVE FOR SELECT TO evalledger_auditor "
     "USING (decision IS DISTINCT FROM 'fail')", MUST_OWN),
    ("ALTER TABLE evalledger.brain_eval_log NO FORCE ROW LEVEL SECURITY", MUST_OWN),
    ("GRANT SELECT ON evalledger.brain_eval_log TO evalledger_agent", DDL_REFUSED),
    ("GRANT USAGE ON SCHEMA evalledger TO evalledger_agent", DDL_REFUSED),
    ("REVOKE SELECT ON evalledger.brain_eval_log FROM evalledger_auditor", DDL_REFUSED),
    ("GRANT EXECUTE ON FUNCTION evalledger.lock_run_v1(uuid) TO PUBLIC", DDL_REFUSED),
    ("ALTER DEFAULT PRIVILEGES IN SCHEMA evalledger GRANT SELECT ON TABLES TO evalledger_agent", DDL_REFUSED),
    ("ALTER DEFAULT PRIVILEGES FOR ROLE evalledger_code IN SCHEMA evalledger GRANT SELECT ON TABLES "
     "TO evalledger_agent", "permission denied to change default privileges|must be member of role"),
    # Lifting the checks.
    ("ALTER TABLE evalledger.brain_eval_log DROP CONSTRAINT brain_eval_log_reviewer_independent", MUST_OWN),
    ("ALTER TABLE evalledger.brain_eval_log DROP CONSTRAINT brain_eval_log_computed_iff_complete", MUST_OWN),
    ("ALTER TABLE evalledger.brain_eval_log ALTER COLUMN reviewer_user_id DROP NOT NULL", MUST_OWN),
    ("ALTER TABLE evalledger.brain_eval_log ALTER CONSTRAINT brain_eval_log_rubric_fkey DEFERRABLE", MUST_OWN),
    ("ALTER TABLE evalledger.brain_eval_log ADD CONSTRAINT fake_fk FOREIGN KEY (rubric_id) "
     "REFERENCES evalledger.rubric NOT VALID", MUST_OWN),
    ("ALTER TRIGGER brain_eval_log_20_decide ON evalledger.brain_eval_log RENAME TO brain_eval_log_00_decide",
     MUST_OWN),
    ("ALTER TABLE evalledger.brain_eval_log DISABLE TRIGGER brain_eval_log_20_decide", MUST_OWN),
    ("ALTER TABLE evalledger.legal_hold OWNER TO evalledger_owner", MUST_OWN),
    ("ALTER FUNCTION evalledger.refuse_change_v3() SECURITY INVOKER", MUST_OWN),
    ("ALTER FUNCTION evalledger.brain_eval_decide_v2(evalledger.brain_eval_log) SET search_path = evalledger",
     MUST_OWN),
    ("CREATE OR REPLACE FUNCTION evalledger.hot_tier_v1() RETURNS interval LANGUAGE sql IMMUTABLE "
     "AS $$ SELECT interval '100 years' $$", NO_CREATE),
    ("ALTER SEQUENCE evalledger.legal_hold_hold_id_seq RESTART WITH 1", MUST_OWN),
    ("ALTER TABLE evalledger.eval_candidates DETACH PARTITION evalledger.{partition}", MUST_OWN),
    ("ALTER TABLE evalledger.{partition} NO INHERIT evalledger.eval_candidates", MUST_OWN),
    ("ALTER TABLE evalledger.{partition} DISABLE TRIGGER eval_candidates_00_append_only", MUST_OWN),
    ("ALTER SCHEMA evalledger RENAME TO evalledger_old", MUST_OWN),
    ("COMMENT ON TABLE evalledger.brain_eval_log IS 'forged'", MUST_OWN),
    ("CREATE STATISTICS evalledger.s ON decision, brain_under_test FROM evalledger.brain_eval_log", MUST_OWN),
    # Further neighbours: a copy that inherits, a forged partition, the sequences, maintenance.
    ("CREATE TEMP TABLE hold_copy () INHERITS (evalledger.legal_hold)", MUST_OWN),
    ("ALTER TABLE evalledger.eval_candidates ATTACH PARTITION pg_temp.nothing FOR VALUES FROM ('2098-01-01') "
     "TO ('2098-02-01')", MUST_OWN),
    ("CREATE TRIGGER late BEFORE INSERT ON evalledger.legal_hold FOR EACH ROW "
     "EXECUTE FUNCTION evalledger.refuse_change_v3()", "permission denied for table legal_hold"),
    ("SELECT setval('evalledger.legal_hold_hold_id_seq', 1)", "permission denied for sequence legal_hold_hold_id_seq"),
    # PostgreSQL 17+ words these as a missing privilege, 15 and 16 as a missing ownership.
    ("REINDEX TABLE evalledger.brain_eval_log", "permission denied for table brain_eval_log|must be owner of table"),
    ("CLUSTER evalledger.brain_eval_log USING brain_eval_log_pkey",
     "permission denied for table brain_eval_log|must be owner of table"),
    ("CREATE PUBLICATION insider_pub FOR TABLE evalledger.brain_eval_log", "permission denied for database"),
]


def current_partition(admin) -> str:
    return admin.execute("SELECT 'eval_candidates_p' || to_char(now() AT TIME ZONE 'UTC', 'YYYYMM')").fetchone()[0]


def test_owner_role_owns_nothing_of_the_ledger(admin):
    owned = admin.execute(
        "SELECT 'table ' || c.relname FROM pg_class c WHERE c.relnamespace = 'evalledger'::regnamespace "
        "AND c.relowner <> 'evalledger_code'::regrole "
        "UNION ALL SELECT 'function ' || p.oid::regprocedure FROM pg_proc p "
        "WHERE p.pronamespace = 'evalledger'::regnamespace AND p.proowner <> 'evalledger_code'::regrole "
        "UNION ALL SELECT 'type ' || t.typname FROM pg_type t "
        "WHERE t.typnamespace = 'evalledger'::regnamespace AND t.typowner <> 'evalledger_code'::regrole "
        "UNION ALL SELECT 'schema ' || n.nspname FROM pg_namespace n "
        "WHERE n.nspname = 'evalledger' AND n.nspowner <> 'evalledger_code'::regrole").fetchall()
    assert owned == []
    assert admin.execute("SELECT has_schema_privilege('evalledger_owner', 'evalledger', 'CREATE')").fetchone()[0] \
        is False


def test_no_login_holds_the_code_role(admin, insider):
    if not admin.execute("SELECT rolsuper FROM pg_roles WHERE rolname = current_user").fetchone()[0]:
        pytest.skip("installed by a non-superuser, which is the code role's member (doctor names it)")
    assert admin.execute("SELECT rolcanlogin, rolsuper, rolbypassrls FROM pg_roles WHERE rolname = 'evalledger_code'"
                         ).fetchone() == (False, False, False)
    members = admin.execute("SELECT m.rolname FROM pg_auth_members a JOIN pg_roles m ON m.oid = a.member "
                            "WHERE a.roleid = 'evalledger_code'::regrole").fetchall()
    assert members == []
    with pytest.raises(errors.InsufficientPrivilege, match='permission denied to set role "evalledger_code"'):
        insider.execute("SET ROLE evalledger_code")
    with pytest.raises(errors.InsufficientPrivilege,
                       match="permission denied to grant role|must have admin option on role"):
        insider.execute(f"GRANT evalledger_code TO {INSIDER}")


def test_every_ddl_an_insider_tried_is_refused_to_the_owner_role(admin, insider, ledger):
    partition = current_partition(admin)
    guarded = admin.execute("SELECT count(*) FROM pg_event_trigger WHERE evtname = 'evalledger_ddl_guard_v1'"
                            ).fetchone()[0]
    cases = [(statement.replace("{partition}", partition), says) for statement, says in INSIDER_DDL]
    each_refused(admin, insider, [(statement, errors.InsufficientPrivilege, says) for statement, says in cases
                                  if guarded or says != DDL_REFUSED])
    # Without the event triggers (a non-superuser install) a GRANT the owner role may not give is
    # only a warning: it must still grant nothing. (Its own default privileges it may set: they
    # concern only what it creates, and it can create nothing in the schema.)
    for statement, says in cases:
        if not guarded and says == DDL_REFUSED and not statement.startswith("ALTER DEFAULT PRIVILEGES"):
            with nothing_changes(admin):
                insider.execute(statement)
    # What the attempts were for: still as before.
    assert admin.execute("SELECT decision::text FROM evalledger.brain_eval_log WHERE eval_run_id = %s",
                         (ledger.eval_run_id,)).fetchone()[0] == "pass"
    assert not is_superuser(admin)


# =================================================================================================
# Rubrics are validated policy, activated by an audited step the owner role cannot take
# =================================================================================================
def brain_eval_v1(admin) -> dict:
    return admin.execute("SELECT definition FROM evalledger.rubric WHERE suite = 'brain-eval' AND version = 'v1'"
                         ).fetchone()[0]


def with_change(definition: dict, path: list, value) -> dict:
    """A deep copy of definition with the value at path replaced (None: removed)."""
    changed = copy.deepcopy(definition)
    node = changed
    for key in path[:-1]:
        node = node[key]
    if value is None:
        del node[path[-1]]
    else:
        node[path[-1]] = value
    return changed


def test_a_rubric_that_decides_pass_on_a_hard_failure_is_refused(admin, insider, ledger):
    v1 = brain_eval_v1(admin)
    hard = v1["hard_criteria"]
    bad = {
        "hard_failure_decision pass": (with_change(v1, ["hard_failure_decision"], "pass"),
                                       "hard_failure_decision must be fail, not pass"),
        "hard_failure_decision missing": (with_change(v1, ["hard_failure_decision"], None),
                                          "hard_failure_decision must be fail, not missing"),
        "hallucination limit loosened": (with_change(v1, ["hard_criteria", 0, "threshold"], 0.5),
                                         "hard criterion hallucination_rate <= 0.02 is required"),
        "threshold a string": (with_change(v1, ["hard_criteria", 0, "threshold"], "0.02"),
                               "needs a key, an op .* and a numeric threshold"),
        "staleness dropped": (with_change(v1, ["hard_criteria"], [hard[0], hard[2]]),
                              "hard criterion staleness_recognition_rate >= 1.0 is required"),
        "hallucination only for AGT-902": (
            with_change(v1, ["hard_criteria", 0], {**hard[0], "applies_to": ["AGT-902"]}),
            "hard criterion hallucination_rate <= 0.02 is required"),
        "lever mapping not for AGT-902": (
            with_change(v1, ["hard_criteria", 2, "applies_to"], ["AGT-901"]),
            "hard criterion lever_mapping_correctness >= 1.0 is required"),
        "op flipped": (with_change(v1, ["hard_criteria", 1, "op"], "<="),
                       "hard criterion staleness_recognition_rate >= 1.0 is required"),
        "ladder decides maybe": (with_change(v1, ["decision_ladder", 0, "decision"], "maybe"),
                                 "decision_ladder step .* needs a numeric min_soft_passed and a decision"),
        "ladder without a floor": (with_change(v1, ["decision_ladder"], v1["decision_ladder"][:3]),
                                   "decision_ladder needs a step at min_soft_passed 0"),
        "soft threshold missing": (with_change(v1, ["soft_criteria", 0, "threshold"], None),
                                   "needs a key, an op .* and a numeric threshold"),
        "question_pass untyped": (with_change(v1, ["question_pass", "max_hallucinations"], "none"),
                                  "question_pass.max_hallucinations must be a number"),
        "suite mislabelled": (with_change(v1, ["suite"], "takes-quality"),
                              "definition.suite is takes-quality, not brain-eval"),
    }
    failures = []
    for label, (definition, says) in bad.items():
        try:
            with nothing_changes(admin), pytest.raises(errors.CheckViolation, match=says):
                insider.execute("INSERT INTO evalledger.rubric (suite, version, definition) "
                                "VALUES ('brain-eval', 'v1.1', %s)", (Jsonb(definition),))
        except (AssertionError, pytest.fail.Exception, psycopg.Error) as exc:
            failures.append(f"{label}: {(str(exc).splitlines() or [type(exc).__name__])[0]}")
    assert not failures, "\n".join(failures)
    tq = admin.execute("SELECT definition FROM evalledger.rubric WHERE suite = 'takes-quality'").fetchone()[0]
    with nothing_changes(admin), pytest.raises(errors.CheckViolation, match="pass_rule needs numeric"):
        insider.execute("INSERT INTO evalledger.rubric (suite, version, definition) VALUES ('takes-quality', 'v9', %s)",
                        (Jsonb(with_change(tq, ["pass_rule", "every_dim_min_at_least"], None)),))
    with nothing_changes(admin), pytest.raises(errors.CheckViolation, match="no suite free-for-all"):
        insider.execute("INSERT INTO evalledger.rubric (suite, version, definition) VALUES ('free-for-all', 'v1', %s)",
                        (Jsonb({**v1, "suite": "free-for-all"}),))


def test_a_new_rubric_never_takes_over_by_being_newest(admin, insider, connect_as, reviewer_id):
    v1 = brain_eval_v1(admin)
    lenient = with_change(v1, ["soft_criteria"], [{**c, "threshold": 0} for c in v1["soft_criteria"]])
    insider.execute("INSERT INTO evalledger.rubric (suite, version, definition) VALUES ('brain-eval', 'v1.1', %s)",
                    (Jsonb({**lenient, "version": "v1.1"}),))
    v1_1 = admin.execute("SELECT rubric_id FROM evalledger.rubric WHERE (suite, version) = ('brain-eval', 'v1.1')").fetchone()[0]
    runner = connect_as("evalledger_runner")

    def miss_coherence(number, row):
        row["narrative_coherence_rating"] = 1
    decided = record_run(runner, reviewer_id, count=3, bend=miss_coherence)
    assert decided.decision != "pass"  # judged by v1, the active rubric, not by the newest row
    assert admin.execute("SELECT r.version FROM evalledger.brain_eval_log l JOIN evalledger.rubric r USING (rubric_id) "
                         "WHERE l.eval_run_id = %s", (decided.eval_run_id,)).fetchone()[0] == "v1"
    # Naming it does not help either: only an activated rubric judges a run.
    with pytest.raises(errors.ForeignKeyViolation, match=f"rubric {v1_1} is not an activated brain-eval rubric"):
        record_run(runner, reviewer_id, count=3, rubric_id=v1_1)
    # The owner role cannot activate it, nor rewrite the activations.
    each_refused(admin, insider, [
        (f"INSERT INTO evalledger.rubric_activation (suite, rubric_id, reason) VALUES ('brain-eval', {v1_1}, 'mine')",
         errors.InsufficientPrivilege, "permission denied for table rubric_activation"),
        (f"UPDATE evalledger.rubric_activation SET rubric_id = {v1_1}", errors.InsufficientPrivilege,
         "permission denied for table rubric_activation"),
        ("DELETE FROM evalledger.rubric_activation", errors.InsufficientPrivilege,
         "permission denied for table rubric_activation"),
        ("TRUNCATE evalledger.rubric_activation", errors.InsufficientPrivilege,
         "permission denied for table rubric_activation"),
    ])
    # A migration activates it, and says who and why.
    admin.execute("INSERT INTO evalledger.rubric_activation (suite, rubric_id, reason, activated_by) "
                  "VALUES ('brain-eval', %s, 'v1.1: reviewed', 'someone_else')", (v1_1,))
    assert admin.execute("SELECT activated_by = session_user, reason FROM evalledger.rubric_activation "
                         "ORDER BY activation_id DESC LIMIT 1").fetchone() == (True, "v1.1: reviewed")
    assert record_run(runner, reviewer_id, count=3, bend=miss_coherence).decision == "pass"


# =================================================================================================
# Races and probes
# =================================================================================================
TQ_PANEL = ["openai:gpt-4o", "anthropic:claude-opus-4-7", "google:gemini-1.5-pro"]
TQ_DIMS = ["accuracy", "attribution", "weight_calibration", "kind_classification", "signal_density"]


def tq_verdict(conn, run_id, model, score, cycle):
    conn.execute("INSERT INTO evalledger.eval_takes_quality_judge_verdicts (run_id, cycle, model, recorded, "
                 "response_json) VALUES (%s, %s, %s, false, %s)",
                 (run_id, cycle, model, Jsonb({"scores": {d: score for d in TQ_DIMS}})))


@pytest.fixture
def tq_run(connect_as):
    """A takes-quality run whose first cycle passes (every judge 8 of 10), not completed yet."""
    runner = connect_as("evalledger_runner")
    run_id = runner.execute(
        "INSERT INTO evalledger.eval_takes_quality_runs (corpus_source, sample_limit, seed, n_takes, corpus_sha8, "
        "prompt_sha8, models) VALUES ('db', 10, 1, 3, 'aaaaaaaa', 'bbbbbbbb', %s) RETURNING id", (TQ_PANEL,)
    ).fetchone()[0]
    for model in TQ_PANEL:
        tq_verdict(runner, run_id, model, 8, 1)
    return run_id


def stored_and_recomputed(admin, run_id):
    return admin.execute("SELECT receipt_json ->> 'verdict', evalledger.takes_quality_receipt_v3(id) ->> 'verdict', "
                         "cycles_run FROM evalledger.eval_takes_quality_runs WHERE id = %s", (run_id,)).fetchone()


def test_a_verdict_racing_the_completion_lands_in_the_receipt(admin, dsn, tq_run):
    verdict_tx, complete_tx = transaction_as(dsn, "evalledger_runner"), transaction_as(dsn, "evalledger_runner")
    try:
        for model in TQ_PANEL:  # a failing second cycle, not committed yet
            tq_verdict(verdict_tx, tq_run, model, 2, 2)

        def complete():
            complete_tx.execute("SELECT evalledger.takes_quality_complete_v1(%s)",
                                (tq_run,))
            complete_tx.commit()
        thread, outcome = in_thread(complete)
        assert wait_until_blocked(admin, complete_tx.info.backend_pid, thread), "the completion did not wait"
        verdict_tx.commit()
        thread.join(20)
        assert "error" not in outcome, outcome
    finally:
        verdict_tx.close()
        complete_tx.close()
    assert stored_and_recomputed(admin, tq_run) == ("fail", "fail", 2)


def test_a_verdict_after_the_completion_is_refused(admin, dsn, tq_run):
    verdict_tx, complete_tx = transaction_as(dsn, "evalledger_runner"), transaction_as(dsn, "evalledger_runner")
    try:
        complete_tx.execute("SELECT evalledger.takes_quality_complete_v1(%s)",
                            (tq_run,))

        def late_verdict():
            try:
                tq_verdict(verdict_tx, tq_run, TQ_PANEL[0], 2, 2)
                verdict_tx.commit()
            finally:
                verdict_tx.rollback()
        thread, outcome = in_thread(late_verdict)
        assert wait_until_blocked(admin, verdict_tx.info.backend_pid, thread), "the verdict did not wait"
        complete_tx.commit()
        thread.join(20)
    finally:
        verdict_tx.close()
        complete_tx.close()
    assert isinstance(outcome.get("error"), errors.InsufficientPrivilege), outcome
    assert f"no open takes-quality run {tq_run} takes verdicts" in str(outcome["error"])
    assert stored_and_recomputed(admin, tq_run) == ("pass", "pass", 1)


def test_completed_at_is_never_in_the_future(admin, connect_as, reviewer_id, tq_run):
    runner = connect_as("evalledger_runner")
    open_run = record_run(runner, reviewer_id, count=3, complete=False)
    # No time the caller gives is taken (issue 37, item 8): completed_at is the database's clock.
    each_refused(admin, runner, [
        (f"SELECT evalledger.brain_eval_complete_v1('{open_run}', '2099-01-01')",
         errors.InsufficientPrivilege, "completed_at is the database's clock at completion"),
        (f"SELECT evalledger.brain_eval_complete_v1('{open_run}', now() + interval '1 minute')",
         errors.InsufficientPrivilege, "completed_at is the database's clock at completion"),
        # A takes-quality run completes at the database's now(): the runner names no time at all.
        (f"UPDATE evalledger.eval_takes_quality_runs SET completed_at = '2099-01-01' WHERE id = {tq_run}",
         errors.InsufficientPrivilege, "permission denied for table eval_takes_quality_runs"),
    ])


def test_the_independence_check_does_not_probe_the_tuner_registry(admin, connect_as, reviewer_id):
    """A uuid that is a prompt tuner but no reviewer gets the same answer as any unknown uuid."""
    tuner, nobody = uuid.uuid4(), uuid.uuid4()
    admin.execute("INSERT INTO evalledger.prompt_tuner (target_id, user_id) VALUES ('AGT-901', %s)", (tuner,))
    runner = connect_as("evalledger_runner")
    answers = []
    for who in (tuner, nobody):
        with nothing_changes(admin), pytest.raises(errors.ForeignKeyViolation) as caught:
            record_run(runner, who, count=3, complete=False)
        answers.append(caught.value.diag.message_primary.replace(str(who), "<uuid>"))
    assert answers[0] == answers[1] == "evalledger: no reviewer <uuid>"


def test_a_reviewer_neither_locks_nor_looks_up_another_reviewers_run(admin, dsn, connect_as, reviewers):
    runner = connect_as("evalledger_runner")
    theirs = record_run(runner, reviewers[REVIEWER_ROLE], count=3, complete=False)
    other = transaction_as(dsn, OTHER_REVIEWER_ROLE)
    try:
        other.execute("SELECT evalledger.lock_run_v1(%s)", (theirs,))
        # The run's completion does not wait for the other reviewer's transaction.
        runner.execute("SET lock_timeout = '2s'")
        assert runner.execute("SELECT evalledger.brain_eval_complete_v1(%s, NULL)", (theirs,)).fetchone()[0] is True
        assert other.execute("SELECT evalledger.reviewer_id_of_v1(%s), evalledger.reviewer_id_of_v1(%s)",
                             (REVIEWER_ROLE, OTHER_REVIEWER_ROLE)).fetchone() \
            == (None, reviewers[OTHER_REVIEWER_ROLE])
    finally:
        other.close()


def test_a_hold_is_released_by_a_row_never_rewritten(admin, insider, connect_as, reviewer_id, ledger):
    other = record_run(connect_as("evalledger_runner"), reviewer_id, count=3)
    hold = admin.execute("SELECT hold_id FROM evalledger.legal_hold").fetchone()[0]
    each_refused(admin, insider, [
        (f"UPDATE evalledger.legal_hold SET eval_run_id = '{other.eval_run_id}'", errors.InsufficientPrivilege,
         "permission denied for table legal_hold"),
        ("UPDATE evalledger.legal_hold SET reason = 'none'", errors.InsufficientPrivilege,
         "permission denied for table legal_hold"),
        ("UPDATE evalledger.legal_hold SET released_at = now()", errors.InsufficientPrivilege,
         "permission denied for table legal_hold"),
        ("UPDATE evalledger.legal_hold SET placed_at = placed_at - interval '10 years'", errors.InsufficientPrivilege,
         "permission denied for table legal_hold"),
    ])
    insider.execute("INSERT INTO evalledger.legal_hold_release (hold_id, reason, released_at, released_by) "
                    "VALUES (%s, 'settled', '2001-01-01', 'someone_else')", (hold,))
    # Who and when are the database's: the insider's login, now.
    assert admin.execute("SELECT released_by, now() - released_at < interval '1 minute' "
                         "FROM evalledger.legal_hold_release").fetchone() \
        == (INSIDER, True)
    each_refused(admin, insider, [
        ("UPDATE evalledger.legal_hold_release SET reason = 'never held'", errors.InsufficientPrivilege,
         "permission denied for table legal_hold_release"),
        ("DELETE FROM evalledger.legal_hold_release", errors.InsufficientPrivilege,
         "permission denied for table legal_hold_release"),
        (f"INSERT INTO evalledger.legal_hold_release (hold_id, reason) VALUES ({hold}, 'again')",
         errors.UniqueViolation, "legal_hold_release_pkey"),
    ])
    assert admin.execute("SELECT h.eval_run_id, x.reason FROM evalledger.legal_hold h "
                         "JOIN evalledger.legal_hold_release x USING (hold_id)").fetchone() \
        == (ledger.eval_run_id, "settled")


def test_a_released_hold_goes_with_its_run_past_the_horizon(admin, connect_as, reviewer_id):
    old_id, analyses = backdated_run(connect_as("evalledger_runner"), reviewer_id, months_ago=96)
    age_run(admin, old_id, "now() - interval '96 months'")
    hold = admin.execute("INSERT INTO evalledger.legal_hold (eval_run_id, reason) VALUES (%s, 'litigation') "
                         "RETURNING hold_id", (old_id,)).fetchone()[0]
    owner = connect_as("evalledger_owner")
    with pytest.raises(errors.InsufficientPrivilege, match="brain_eval_question_score is append-only: DELETE refused"):
        purge(admin, old_id, analyses)
    assert purge_committed(admin) == []
    owner.execute("INSERT INTO evalledger.legal_hold_release (hold_id, reason) VALUES (%s, 'settled')", (hold,))
    with pytest.raises(errors.InsufficientPrivilege, match="permission denied for table brain_eval_question_score"):
        purge(owner, old_id, analyses)  # released or not, only the retention purge deletes
    with pytest.raises(errors.InsufficientPrivilege, match="brain_eval_question_score is append-only: DELETE refused"):
        purge(admin, old_id, analyses)
    purged = purge_committed(admin)
    assert ("legal_hold", 1, old_id, None) in purged and ("brain_eval_log", 1, old_id, None) in purged
    assert admin.execute("SELECT count(*) FROM evalledger.legal_hold_release").fetchone()[0] == 0


# =================================================================================================
# Where no superuser installed: doctor says which protections are missing
# =================================================================================================
def test_doctor_says_what_is_missing_without_event_triggers(admin, dsn, insider):
    ok = {(f.level, f.check) for f in diagnose(dsn)}
    assert ("ok", "code") in ok and ("ok", "event triggers") in ok
    # A managed server: no event triggers, and the installer (here: the insider) acts as the code role.
    admin.execute("DROP EVENT TRIGGER evalledger_ddl_guard_v1")
    admin.execute("DROP EVENT TRIGGER evalledger_drop_guard_v1")
    admin.execute(f"GRANT evalledger_code TO {INSIDER}")
    try:
        found = {f.check: (f.level, f.detail) for f in diagnose(dsn)}
    finally:
        admin.execute(f"REVOKE evalledger_code FROM {INSIDER}")
    assert found["code"] == ("warn", f"logins that may act as evalledger_code and so lift every guard: {INSIDER} "
                                     "(expected only where no superuser installed: the installer)")
    level, detail = found["event triggers"]
    assert level == "warn" and all(p in detail for p in EVENT_TRIGGER_PROTECTIONS)


def test_an_operator_on_the_readers_path_does_not_hide_rows_from_the_dashboards(admin, connect_as, reviewer_id):
    """The dashboard functions are inlined SQL without a SET search_path, parsed with the reader's:
    an exact-type operator planted in a schema on that path must not be picked over pg_catalog's."""
    runner = connect_as("evalledger_runner")
    record_run(runner, reviewer_id, count=3)
    record_run(runner, reviewer_id, count=3, run_trigger="on_demand")
    views = ["brain_quarterly_trend_v1", "most_failing_questions_v1", "stale_fixture_pass_rate_v1",
             "reviewer_calibration_v1", "cost_per_run_v1", "prompt_drift_v1"]
    auditor = connect_as("evalledger_auditor")
    before = {v: auditor.execute(f"SELECT * FROM evalledger.{v} ORDER BY 1, 2").fetchall() for v in views}
    assert before["brain_quarterly_trend_v1"] and before["prompt_drift_v1"]
    admin.execute("CREATE SCHEMA insider_ops")
    for left, right in (("varchar", "varchar"), ("evalledger.eval_run_trigger", "evalledger.eval_run_trigger"),
                        ("evalledger.eval_decision", "evalledger.eval_decision"), ("uuid", "uuid"),
                        ("integer", "integer"), ("text", "text")):
        name = "never_" + left.rsplit(".", 1)[-1]
        admin.execute(f"CREATE FUNCTION insider_ops.{name}({left}, {right}) RETURNS boolean LANGUAGE sql "
                      "IMMUTABLE AS 'SELECT false'")
        admin.execute(f"CREATE OPERATOR insider_ops.= (LEFTARG = {left}, RIGHTARG = {right}, "
                      f"FUNCTION = insider_ops.{name})")
    admin.execute("GRANT USAGE ON SCHEMA insider_ops TO PUBLIC")
    auditor.execute("SET search_path = insider_ops, pg_catalog, evalledger")
    assert auditor.execute("SELECT 'a'::varchar = 'a'::varchar").fetchone()[0] is False  # the trap is live
    after = {v: auditor.execute(f"SELECT * FROM evalledger.{v} ORDER BY 1, 2").fetchall() for v in views}
    assert after == before


@pytest.mark.parametrize("isolation", ["REPEATABLE READ", "SERIALIZABLE"])
def test_a_completion_under_an_old_snapshot_is_refused(admin, dsn, reviewer_id, tq_run, isolation):
    """Waiting for a racing verdict or question row helps only if the completion then reads it."""
    open_run = record_run(admin, reviewer_id, count=3, complete=False)
    for statement, says in (
        (f"SELECT evalledger.takes_quality_complete_v1({tq_run})",
         f"a takes-quality run is completed under READ COMMITTED, not {isolation}"),
        (f"SELECT evalledger.brain_eval_complete_v1('{open_run}', NULL)",
         f"a run is completed under READ COMMITTED, not {isolation}"),
    ):
        tx = transaction_as(dsn, "evalledger_runner", isolation)
        try:
            with nothing_changes(admin), pytest.raises(errors.InvalidTransactionState, match=says):
                tx.execute(statement)
        finally:
            tx.close()


def test_a_non_superuser_install_leaves_the_owner_role_powerless_and_doctor_names_the_gaps(admin, dsn, insider):
    """A managed server: the installer is no superuser, so there are no event triggers and the
    installer acts as the code role; the owner role's members can still alter nothing."""
    installer, password = "evalledger_test_installer", "installer-" + uuid.uuid4().hex
    ensure_login_role(admin, installer, "evalledger_owner")
    # What a managed server's administrator hands the deploy account: the roles, with ADMIN OPTION.
    admin.execute(f"GRANT evalledger_code, evalledger_owner TO {installer} WITH ADMIN OPTION")
    admin.execute(psycopg.sql.SQL("ALTER ROLE {} NOSUPERUSER PASSWORD {}").format(
        psycopg.sql.Identifier(installer), psycopg.sql.Literal(password)))
    name = admin.execute("SELECT current_database() || '_managed'").fetchone()[0]
    admin.execute(psycopg.sql.SQL("CREATE DATABASE {} OWNER {}").format(
        psycopg.sql.Identifier(name), psycopg.sql.Identifier(installer)))
    url = make_conninfo(dsn, dbname=name, user=installer, password=password)
    try:
        migrate(url)
        found = {f.check: (f.level, f.detail) for f in diagnose(url)}
        assert found["code"][0] == "warn" and installer in found["code"][1]
        assert found["event triggers"][0] == "warn"
        assert all(p in found["event triggers"][1] for p in EVENT_TRIGGER_PROTECTIONS)
        with psycopg.connect(make_conninfo(dsn, dbname=name, user=INSIDER, password=INSIDER_PASSWORD),
                             autocommit=True) as member:
            for statement in ("ALTER TABLE evalledger.brain_eval_log DROP COLUMN decision",
                              "ALTER TABLE evalledger.legal_hold SET UNLOGGED",
                              "CREATE RULE r AS ON INSERT TO evalledger.legal_hold DO INSTEAD NOTHING"):
                with pytest.raises(errors.InsufficientPrivilege, match="must be owner of"):
                    member.execute(statement)
            with pytest.raises(errors.InsufficientPrivilege, match="permission denied for schema evalledger"):
                member.execute("CREATE FUNCTION evalledger.pg_advisory_xact_lock(integer, integer) RETURNS void "
                               "LANGUAGE sql AS 'SELECT'")
    finally:
        admin.execute(psycopg.sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(psycopg.sql.Identifier(name)))
        admin.execute(f"REVOKE evalledger_code, evalledger_owner FROM {installer} CASCADE")


# =================================================================================================
# Independence follows the prompt: a run's prompt is one its brain registered
# =================================================================================================
AGT_902_PROMPT = "You are AGT-902, the pipeline brain. Cite every number."


def unregistered_prompt_refusal(brain: str, prompt_hash: str) -> str:
    """The whole refusal: the brain and the hash the caller sent, nothing about who registered it."""
    return re.escape(f"evalledger: {brain} has no registered version with system prompt {prompt_hash}") + "$"


def start_run_of(runner, reviewer_user_id, brain: str, prompt_hash: str):
    return brain_eval.start_run(runner, **run_fields(brain, system_prompt_hash=prompt_hash), question_count=3,
                                reviewer_user_id=reviewer_user_id)


def test_a_run_labelled_agt_901_carrying_agt_902s_prompt_is_refused(admin, connect_as, reviewer_id):
    """The label cannot lend a run to another brain's prompt (and so dodge that brain's tuners)."""
    agt_902, _ = brains.add(connect_as("evalledger_owner"), "AGT-902", "anthropic:claude-sonnet-4-6", AGT_902_PROMPT)
    runner = connect_as("evalledger_runner")
    with nothing_changes(admin), pytest.raises(errors.ForeignKeyViolation) as caught:
        start_run_of(runner, reviewer_id, "AGT-901", agt_902.system_prompt_hash)
    assert re.match(unregistered_prompt_refusal("AGT-901", agt_902.system_prompt_hash), caught.value.diag.message_primary)
    assert (caught.value.diag.sqlstate, caught.value.diag.column_name) == ("23503", "system_prompt_hash")
    record_run(runner, reviewer_id, brain="AGT-902", count=3, system_prompt_hash=agt_902.system_prompt_hash)


@pytest.mark.parametrize("role", ["evalledger_runner", None])
def test_a_run_with_an_unregistered_prompt_hash_is_refused(admin, connect_as, reviewer_id, role):
    """A hash never registered: the same refusal as another brain's, so it tells nothing more (to
    the runner, and to the superuser; the owner role inserts no run at all)."""
    never = "9" * 64
    conn = connect_as(role) if role else admin
    for brain in ("AGT-901", "AGT-902"):
        with nothing_changes(admin), pytest.raises(errors.ForeignKeyViolation) as caught:
            start_run_of(conn, reviewer_id, brain, never)
        assert re.match(unregistered_prompt_refusal(brain, never), caught.value.diag.message_primary)
    # Production analyses carrying the hash do not register it either.
    brain_eval.record_analysis(connect_as("evalledger_runner"), brain="AGT-901", model_id="claude-sonnet-4-6",
                               system_prompt_hash=never, question="q", output="a", token_cost_usd="0.01",
                               origin="production")
    with nothing_changes(admin), pytest.raises(errors.ForeignKeyViolation, match="AGT-901 has no registered version"):
        start_run_of(conn, reviewer_id, "AGT-901", never)


def test_agt_902s_tuner_cannot_review_its_prompt_whatever_the_label(admin, connect_as, reviewers):
    """AGT-901 registers AGT-902's prompt too (the same text): a run of it under either label is
    AGT-902's prompt under review, before any analysis of AGT-902 carries it."""
    owner = connect_as("evalledger_owner")
    agt_902, _ = brains.add(owner, "AGT-902", "anthropic:claude-sonnet-4-6", AGT_902_PROMPT)
    adopted, _ = brains.add(owner, "AGT-901", "anthropic:claude-sonnet-4-6", AGT_902_PROMPT)
    shared = agt_902.system_prompt_hash
    assert adopted.system_prompt_hash == shared
    runner, tuner = connect_as("evalledger_runner"), reviewers[OTHER_REVIEWER_ROLE]
    admin.execute("INSERT INTO evalledger.prompt_tuner (target_id, user_id) VALUES ('AGT-902', %s)", (tuner,))
    for label in ("AGT-901", "AGT-902"):
        with nothing_changes(admin), pytest.raises(
                errors.CheckViolation, match=f"reviewer {tuner} is not independent of this run's system prompt"):
            start_run_of(runner, tuner, label, shared)
    assert record_run(runner, tuner, count=3, system_prompt_hash=SHA_A).decision == "pass"  # AGT-901's own prompt
    # The other way round: reviewing an open run labelled AGT-901 that carries the shared prompt
    # bars becoming AGT-902's tuner.
    reviewer = reviewers[REVIEWER_ROLE]
    start_run_of(runner, reviewer, "AGT-901", shared)
    with nothing_changes(admin), pytest.raises(errors.CheckViolation, match="reviews an open run of AGT-902"):
        admin.execute("INSERT INTO evalledger.prompt_tuner (target_id, user_id) VALUES ('AGT-902', %s)", (reviewer,))
