"""Who may do what to which table: seed 002's role table as an exact privilege matrix.

The matrix is checked twice: on the grant side (has_table_privilege / has_column_privilege) and
by a real attempt of every cell as that role. Which rows a granted SELECT returns is row-level
security's business: the visibility tests below. docs/guards.md explains each part.
"""

from __future__ import annotations

import psycopg
import pytest
from psycopg import errors

from evalledger.suites.brain_eval import store as brain_eval
from tests.builders import BRAIN_PROMPTS, SHA_A, question, record_run, register_prompt, run_fields
from tests.conftest import OTHER_REVIEWER_ROLE, REVIEWER_ROLE
from tests.db.test_retention import age_run

# Seed 002's role table, per table and operation. S = SELECT, s = SELECT of every column but those
# in HIDDEN_COLUMNS, I = INSERT, U = UPDATE of any column, u = UPDATE of the columns in
# UPDATE_COLUMNS only, D = DELETE, - = nothing. DELETE is
# granted to no one (the retention purge is the owner's), and neither are TRUNCATE, REFERENCES
# and TRIGGER. "reviewer" is a login role that is a member of evalledger_reviewer.
MATRIX = """
table                       runner  reviewer  revops  auditor  agent
target                      S       S         S       S        -
rubric                      S       S         S       S        -
reviewer                    S       S         -       S        -
prompt_tuner                -       -         -       -        -
brain_analysis_log          SI      S         S       S        -
brain_eval_log              SI      S         S       S        -
brain_eval_question_score   SI      su        S       S        -
legal_hold                  -       -         -       S        -
brain_eval_review_entry     -       S         S       S        -
brain_eval_run_review       -       SI        S       S        -
brain_eval_import           -       -         -       S        -
brain_eval_suggestion_shown -       S         S       S        -
retention_purge_log         -       -         -       S        -
"""
UPDATE_COLUMNS = {
    ("reviewer", "brain_eval_question_score"): {"hallucinations_detected", "total_claims",
                                                "staleness_correctly_recognized", "diagnosis_accuracy_score",
                                                "narrative_coherence_rating", "reviewer_comments"},
}
# A reviewer reads no question's verdict before its run completes (issue 17, class 8): a verdict read
# and rolled back would let it learn the thresholds unrecorded.
HIDDEN_COLUMNS = {
    ("reviewer", "brain_eval_question_score"): {"question_passed"},
}
ROLES = {
    "runner": "evalledger_runner",
    "reviewer": REVIEWER_ROLE,
    "revops": "evalledger_revops",
    "auditor": "evalledger_auditor",
    "agent": "evalledger_agent",
}
OPERATIONS = {"S": "SELECT", "I": "INSERT", "U": "UPDATE", "D": "DELETE"}
NEVER_GRANTED = ["TRUNCATE", "REFERENCES", "TRIGGER"]


@pytest.fixture(autouse=True)
def registered_prompts(admin):
    """Runs here start from run_fields' prompt, which each brain registered (`brain add`)."""
    for brain, prompt in BRAIN_PROMPTS.items():
        register_prompt(admin, brain, prompt)


def parse_matrix(text: str) -> dict[tuple[str, str], str]:
    """{(role, table): cell} from the MATRIX text."""
    header, *rows = [line.split() for line in text.strip().splitlines()]
    return {(role, row[0]): cell for row in rows for role, cell in zip(header[1:], row[1:])}


EXPECTED = parse_matrix(MATRIX)
TABLES = sorted({table for _, table in EXPECTED})
CELLS = sorted(EXPECTED)


def allowed(cell: str, op: str) -> bool:
    """Whether the cell grants op on the whole table (u: UPDATE only on some columns)."""
    return op in cell


def columns_of(admin, table) -> list[str]:
    return [r[0] for r in admin.execute(
        "SELECT column_name FROM information_schema.columns WHERE table_schema = 'evalledger' AND table_name = %s "
        "ORDER BY ordinal_position", (table,))]


@pytest.mark.shared_db
def test_matrix_covers_every_table_and_role(admin):
    tables = {r[0] for r in admin.execute(
        "SELECT relname FROM pg_class WHERE relnamespace = 'evalledger'::regnamespace AND relkind IN ('r', 'p') "
        "AND NOT relispartition")}
    ledger = {"target", "rubric", "reviewer", "prompt_tuner", "brain_analysis_log", "brain_eval_log",
              "brain_eval_question_score", "legal_hold", "brain_eval_review_entry", "brain_eval_run_review",
              "brain_eval_import", "brain_eval_suggestion_shown", "retention_purge_log"}
    assert set(TABLES) == ledger and ledger <= tables
    assert set(ROLES) == {role for role, _ in EXPECTED}


# -------------------------------------------------------------------------------------------------
# The grant side
# -------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("role, table", CELLS)
@pytest.mark.shared_db
def test_granted_privileges_are_the_matrix(admin, reviewers, role, table):
    cell = EXPECTED[(role, table)]
    name, relation = ROLES[role], f"evalledger.{table}"
    for letter, op in OPERATIONS.items():
        granted = admin.execute("SELECT has_table_privilege(%s, %s, %s)", (name, relation, op)).fetchone()[0]
        assert granted is allowed(cell, letter), f"{role} {op} on {table}"
    for op in NEVER_GRANTED:
        assert admin.execute("SELECT has_table_privilege(%s, %s, %s)", (name, relation, op)).fetchone()[0] is False
    # Column privileges: only the listed columns are updatable; no column is insertable or
    # readable beyond what the table grant says.
    update_columns = UPDATE_COLUMNS.get((role, table), set())
    assert ("u" in cell) == bool(update_columns)
    hidden = HIDDEN_COLUMNS.get((role, table), set())
    assert ("s" in cell) == bool(hidden)
    for column in columns_of(admin, table):
        found = admin.execute(
            "SELECT has_column_privilege(%(r)s, %(t)s, %(c)s, 'SELECT'), has_column_privilege(%(r)s, %(t)s, %(c)s, "
            "'INSERT'), has_column_privilege(%(r)s, %(t)s, %(c)s, 'UPDATE')",
            {"r": name, "t": relation, "c": column}).fetchone()
        readable = allowed(cell, "S") or ("s" in cell and column not in hidden)
        assert found == (readable, allowed(cell, "I"), allowed(cell, "U") or column in update_columns), \
            f"{role} on {table}.{column}"


@pytest.mark.shared_db
def test_reviewer_members_hold_exactly_the_group_privileges(admin, reviewers):
    for member in (REVIEWER_ROLE, OTHER_REVIEWER_ROLE):
        for table in TABLES:
            for op in [*OPERATIONS.values(), *NEVER_GRANTED]:
                member_has, group_has = admin.execute(
                    "SELECT has_table_privilege(%s, %s, %s), has_table_privilege('evalledger_reviewer', %s, %s)",
                    (member, f"evalledger.{table}", op, f"evalledger.{table}", op)).fetchone()
                assert member_has is group_has, f"{member} {op} {table}"


@pytest.mark.shared_db
def test_public_holds_nothing(admin):
    assert admin.execute(
        "SELECT c.relname, a.privilege_type FROM pg_class c, aclexplode(c.relacl) a "
        "WHERE c.relnamespace = 'evalledger'::regnamespace AND a.grantee = 0").fetchall() == []
    assert admin.execute("SELECT has_schema_privilege('public', 'evalledger', 'USAGE')").fetchone()[0] is False


@pytest.mark.shared_db
def test_schema_usage(admin, reviewers):
    for role, name in ROLES.items():
        usage = admin.execute("SELECT has_schema_privilege(%s, 'evalledger', 'USAGE')", (name,)).fetchone()[0]
        assert usage is (role != "agent"), role
        assert admin.execute("SELECT has_schema_privilege(%s, 'evalledger', 'CREATE')", (name,)).fetchone()[0] is False


@pytest.mark.shared_db
def test_agent_executes_no_function(admin):
    assert admin.execute(
        "SELECT p.oid::regprocedure::text FROM pg_proc p WHERE p.pronamespace = 'evalledger'::regnamespace "
        "AND has_function_privilege('evalledger_agent', p.oid, 'EXECUTE')").fetchall() == []


# -------------------------------------------------------------------------------------------------
# The real attempt of every cell
# -------------------------------------------------------------------------------------------------
def attempt(conn, table, op, column):
    """Try op on table as conn's role without touching a row (SELECT: of column, or of every column)."""
    if op == "SELECT":
        conn.execute(f"SELECT {column or '*'} FROM evalledger.{table} LIMIT 0")
    elif op == "INSERT":
        conn.execute(f"INSERT INTO evalledger.{table} DEFAULT VALUES")
    elif op == "UPDATE":
        conn.execute(f"UPDATE evalledger.{table} SET {column} = {column} WHERE false")
    else:
        conn.execute(f"DELETE FROM evalledger.{table} WHERE false")


@pytest.mark.parametrize("role", sorted(ROLES))
@pytest.mark.shared_db
def test_every_cell_attempted(admin, connect_as, reviewers, role):
    conn = connect_as(ROLES[role])
    failures = []
    for table in TABLES:
        cell = EXPECTED[(role, table)]
        # An identity column refuses `SET col = col` before any privilege check: update another.
        plain = [r[0] for r in admin.execute(
            "SELECT column_name FROM information_schema.columns WHERE table_schema = 'evalledger' "
            "AND table_name = %s AND is_identity = 'NO' ORDER BY ordinal_position", (table,))]
        update_columns = UPDATE_COLUMNS.get((role, table), set())
        hidden = HIDDEN_COLUMNS.get((role, table), set())
        tries = [(op, None if op == "SELECT" else plain[0]) for op in OPERATIONS.values()]
        tries += [("UPDATE", c) for c in sorted(update_columns)]
        tries += [("SELECT", c) for c in columns_of(admin, table) if hidden]
        for op, column in tries:
            letter = op[0]
            may = (allowed(cell, letter) or (op == "UPDATE" and column in update_columns)
                   or (op == "SELECT" and column is not None and column not in hidden))
            label = f"{op} {table}" + (f".{column}" if column and op in ("SELECT", "UPDATE") else "")
            try:
                attempt(conn, table, op, column)
                outcome = None
            except psycopg.Error as exc:
                outcome = exc
            if may and isinstance(outcome, errors.InsufficientPrivilege):
                failures.append(f"{label}: refused ({outcome})")
            elif not may and not isinstance(outcome, errors.InsufficientPrivilege):
                failures.append(f"{label}: not refused ({outcome!r})")
            elif not may:
                expected = ("permission denied for schema evalledger" if role == "agent"
                            else f"permission denied for table {table}")
                if expected not in str(outcome):
                    failures.append(f"{label}: {outcome}")
    assert not failures, "\n".join(failures)


# -------------------------------------------------------------------------------------------------
# Row-level security: which rows a granted SELECT returns
# -------------------------------------------------------------------------------------------------
def backdated_run(runner, reviewer_user_id, months_ago):
    """A completed 3-question run started months_ago months back, analyses produced then."""
    started = runner.execute("SELECT now() - make_interval(months => %s)", (months_ago,)).fetchone()[0]
    run_id = record_run(runner, reviewer_user_id, count=3, started_at=started, complete=False)
    brain_eval.complete_run(runner, run_id)  # now: completed_at is the database's clock
    return run_id


@pytest.fixture
def runs(admin, connect_as, reviewers):
    """Three runs: A (reviewer a, recent), B (reviewer b, recent, still open) and C (reviewer a,
    30 months old: cold tier), with a legal hold on C and a prompt tuner registered."""
    runner = connect_as("evalledger_runner")
    a = record_run(runner, reviewers[REVIEWER_ROLE], count=3).eval_run_id
    b = record_run(runner, reviewers[OTHER_REVIEWER_ROLE], count=3, complete=False)
    c = backdated_run(runner, reviewers[REVIEWER_ROLE], months_ago=30)
    age_run(admin, c, "now() - interval '30 months'")  # recorded then: the tier clock is the database's
    admin.execute("INSERT INTO evalledger.legal_hold (eval_run_id, reason) VALUES (%s, 'audit')", (c,))
    admin.execute("INSERT INTO evalledger.prompt_tuner (target_id, user_id) VALUES ('AGT-902', %s)",
                  (reviewers[OTHER_REVIEWER_ROLE],))
    return {"A": a, "B": b, "C": c}


def visible_runs(conn, runs) -> dict[str, set[str]]:
    """Which of the runs each table shows conn's role (by run name)."""
    names = {v: k for k, v in runs.items()}
    log = {names[r[0]] for r in conn.execute("SELECT eval_run_id FROM evalledger.brain_eval_log")}
    questions = {names[r[0]] for r in conn.execute("SELECT eval_run_id FROM evalledger.brain_eval_question_score")}
    analyses = {names[r[0]] for r in conn.execute(
        "SELECT DISTINCT q.eval_run_id FROM evalledger.brain_analysis_log a "
        "JOIN evalledger.brain_eval_question_score q ON q.brain_analysis_id = a.analysis_id")}
    return {"brain_eval_log": log, "brain_eval_question_score": questions, "brain_analysis_log": analyses}


def count(conn, table) -> int:
    return conn.execute(f"SELECT count(*) FROM evalledger.{table}").fetchone()[0]


def test_auditor_sees_every_row(admin, connect_as, runs):
    auditor = connect_as("evalledger_auditor")
    for table in ("brain_eval_log", "brain_eval_question_score", "brain_analysis_log", "legal_hold",
                  "target", "rubric"):
        assert count(auditor, table) == count(admin, table) > 0, table


def test_revops_sees_the_hot_tier_only(admin, connect_as, runs):
    revops = connect_as("evalledger_revops")
    every = {"A", "B"}
    assert visible_runs(revops, runs) == {t: every for t in
                                          ("brain_eval_log", "brain_eval_question_score", "brain_analysis_log")}
    assert count(revops, "brain_analysis_log") == count(admin, "brain_analysis_log") - 3
    # The auditor reads the same cold run.
    assert runs["C"] in {r[0] for r in connect_as("evalledger_auditor").execute(
        "SELECT eval_run_id FROM evalledger.brain_eval_log")}
    with pytest.raises(errors.InsufficientPrivilege, match="permission denied for table legal_hold"):
        revops.execute("SELECT * FROM evalledger.legal_hold")


def test_reviewer_sees_only_own_runs(connect_as, runs):
    mine = connect_as(REVIEWER_ROLE)
    # Its own runs in the hot tier: C, its own too, is cold (auditors only).
    assert visible_runs(mine, runs) == {t: {"A"} for t in
                                        ("brain_eval_log", "brain_eval_question_score", "brain_analysis_log")}
    other = connect_as(OTHER_REVIEWER_ROLE)
    assert visible_runs(other, runs) == {t: {"B"} for t in
                                         ("brain_eval_log", "brain_eval_question_score", "brain_analysis_log")}
    assert count(other, "brain_analysis_log") == 3  # no analysis outside its own run either
    assert [r[0] for r in other.execute("SELECT role_name FROM evalledger.reviewer")] == [OTHER_REVIEWER_ROLE]


def test_runner_reads_what_it_writes(admin, connect_as, runs):
    """Every run in the hot tier; the cold run C is the auditors' alone."""
    runner = connect_as("evalledger_runner")
    assert visible_runs(runner, runs) == {t: {"A", "B"} for t in
                                          ("brain_eval_log", "brain_eval_question_score", "brain_analysis_log")}
    assert count(runner, "brain_analysis_log") == count(admin, "brain_analysis_log") - 3
    assert count(runner, "reviewer") == count(admin, "reviewer")


def test_prompt_tuner_readable_by_no_application_role(connect_as, runs):
    for name in [*ROLES.values(), OTHER_REVIEWER_ROLE, "evalledger_reviewer"]:
        conn = connect_as(name)
        with pytest.raises(errors.InsufficientPrivilege, match="permission denied for"):
            conn.execute("SELECT * FROM evalledger.prompt_tuner")


def test_agent_reads_nothing(connect_as, runs):
    agent = connect_as("evalledger_agent")
    for table in TABLES:
        with pytest.raises(errors.InsufficientPrivilege, match="permission denied for schema evalledger"):
            agent.execute(f"SELECT * FROM evalledger.{table}")


def test_revops_inserts_nothing(connect_as, runs, reviewer_id):
    revops = connect_as("evalledger_revops")
    with pytest.raises(errors.InsufficientPrivilege, match="permission denied for table brain_eval_log"):
        brain_eval.start_run(revops, **run_fields(), question_count=3, reviewer_user_id=reviewer_id)
    with pytest.raises(errors.InsufficientPrivilege, match="permission denied for table brain_analysis_log"):
        brain_eval.record_analysis(revops, brain="AGT-901", model_id="m", system_prompt_hash=SHA_A,
                                   question="q", output="o", token_cost_usd="0")


# -------------------------------------------------------------------------------------------------
# Role attributes, RLS and trigger modes
# -------------------------------------------------------------------------------------------------
@pytest.mark.shared_db
def test_no_evalledger_role_is_superuser_or_bypasses_rls(admin, reviewers):
    found = admin.execute("SELECT rolname, rolsuper, rolbypassrls FROM pg_roles "
                          "WHERE rolname LIKE 'evalledger\\_%' ORDER BY 1").fetchall()
    assert {name for name, *_ in found} >= {*ROLES.values(), "evalledger_owner", "evalledger_reviewer"}
    assert [name for name, su, bypass in found if su or bypass] == []


@pytest.mark.shared_db
def test_owner_cannot_log_in(admin):
    assert admin.execute("SELECT rolcanlogin FROM pg_roles WHERE rolname = 'evalledger_owner'").fetchone()[0] is False


@pytest.mark.shared_db
def test_every_table_has_rls_enabled_and_forced(admin):
    found = admin.execute("SELECT relname, relrowsecurity, relforcerowsecurity FROM pg_class "
                          "WHERE relnamespace = 'evalledger'::regnamespace AND relkind IN ('r', 'p')").fetchall()
    assert {name for name, *_ in found} >= set(TABLES)
    assert [name for name, enabled, forced in found if not (enabled and forced)] == []


@pytest.mark.shared_db
def test_every_trigger_is_enable_always(admin):
    found = admin.execute("SELECT c.relname, t.tgname, t.tgenabled FROM pg_trigger t "
                          "JOIN pg_class c ON c.oid = t.tgrelid "
                          "WHERE c.relnamespace = 'evalledger'::regnamespace AND NOT t.tgisinternal").fetchall()
    assert {name for name, *_ in found} >= set(TABLES)
    assert [(table, trigger, mode) for table, trigger, mode in found if mode != "A"] == []


@pytest.mark.shared_db
def test_event_triggers_are_enable_always(admin):
    found = admin.execute("SELECT evtname, evtenabled FROM pg_event_trigger "
                          "WHERE evtname LIKE 'evalledger\\_%'").fetchall()
    if not found:
        pytest.skip("the migrating user was not a superuser: no event triggers")
    assert {name for name, _ in found} >= {"evalledger_ddl_guard_v1", "evalledger_drop_guard_v1"}
    assert [name for name, mode in found if mode != "A"] == []


# -------------------------------------------------------------------------------------------------
# Views (dashboards and audit): readers read them, agents do not
# -------------------------------------------------------------------------------------------------
# Views over the purge log, which only auditors read (docs/bi.md, who reads what): RevOps may not.
AUDITOR_ONLY_VIEWS = {"replay_capture_purged_v1"}


def test_views_read_by_revops_and_auditor_not_agent(admin, connect_as, runs):
    views = [r[0] for r in admin.execute(
        "SELECT relname FROM pg_class WHERE relnamespace = 'evalledger'::regnamespace AND relkind IN ('v', 'm') "
        "ORDER BY 1")]
    if not views:
        pytest.skip("no views in schema evalledger")
    revops, auditor, agent = (connect_as(r) for r in ("evalledger_revops", "evalledger_auditor", "evalledger_agent"))
    failures = []
    for view in views:
        for reader in (auditor,) if view in AUDITOR_ONLY_VIEWS else (revops, auditor):
            try:
                reader.execute(f"SELECT * FROM evalledger.{view}").fetchall()
            except psycopg.Error as exc:
                failures.append(f"{view}: {reader.execute('SELECT current_user').fetchone()[0]} refused: {exc}")
        try:
            agent.execute(f"SELECT * FROM evalledger.{view}")
            failures.append(f"{view}: agent may read it")
        except errors.InsufficientPrivilege:
            pass
        # A view must not lift RevOps past its 24-month window (the owner's policy sees everything).
        if view in AUDITOR_ONLY_VIEWS:
            with pytest.raises(errors.InsufficientPrivilege):
                revops.execute(f"SELECT * FROM evalledger.{view}")
        elif "eval_run_id" in columns_of(admin, view):
            seen = {r[0] for r in revops.execute(f"SELECT eval_run_id FROM evalledger.{view}")}
            if runs["C"] in seen:
                failures.append(f"{view}: shows RevOps a run older than 24 months")
    assert not failures, "\n".join(failures)
