"""Seed 002's retention tiers, as each role: hot (24 months) for every reader, cold (to 7 years)
for auditors only, purged after 7 years by the retention role alone, unless a legal hold covers
the rows.

The tier clock is the database's own recording time, which no caller supplies. To put a row at
an exact age, tests rewrite its clock as the superuser inside one transaction (`clocks_unguarded`:
the DDL event trigger and the table's own triggers off for that transaction only, every trigger
ENABLE ALWAYS again before the statement that reads), and read in that same transaction: now()
is the transaction's start, so "24 months and 1 second ago" is exact for the read. No test-only
path exists in the database itself.
"""

from __future__ import annotations

import contextlib
import re

import psycopg
import pytest
from psycopg import errors, sql

from tests.builders import BRAIN_PROMPTS, record_run, register_prompt
from tests.unguarded import clocks_unguarded
from tests.conftest import OTHER_REVIEWER_ROLE, REVIEWER_ROLE, capture_partition_ago

RUNNER, OWNER, REVOPS, AUDITOR, RETENTION = ("evalledger_runner", "evalledger_owner", "evalledger_revops",
                                             "evalledger_auditor", "evalledger_retention")
HOT_ONLY = [RUNNER, REVIEWER_ROLE, REVOPS]
SEES_ALL = [AUDITOR, OWNER]

# A brain-eval run's rows: each table and the column carrying the run's tier clock.
RUN_TABLES = {
    "brain_eval_log": "created_at",
    "brain_eval_question_score": "run_created_at",
    "brain_eval_harness_run": "run_created_at",
    "brain_eval_harness_answer": "run_created_at",
    "brain_eval_judge_suggestion": "run_created_at",
    "brain_eval_review_entry": "run_created_at",
    "brain_eval_run_review": "run_created_at",
    "brain_eval_suggestion_shown": "run_created_at",
    "brain_eval_reference_shown": "run_created_at",
    "brain_eval_run_closure": "run_created_at",
    "brain_eval_run_uncertainty": "run_created_at",
    "brain_eval_trend": "run_created_at",
}
HOT = "now() - interval '24 months'"
HORIZON = "now() - interval '7 years'"
SECOND = "interval '1 second'"


@pytest.fixture(autouse=True)
def registered_prompts(admin):
    for brain, prompt in BRAIN_PROMPTS.items():
        register_prompt(admin, brain, prompt)


# -- moving the tier clock (the superuser, one transaction) ----------------------------------------
def set_run_clock(admin, run_id, clock: str) -> None:
    """Within admin's transaction: run_id recorded at the SQL expression clock, its rows and its
    analyses with it."""
    with clocks_unguarded(admin, [*RUN_TABLES, "brain_analysis_log"]):
        admin.execute(f"UPDATE evalledger.brain_analysis_log SET created_at = {clock} WHERE analysis_id IN ("
                      "SELECT brain_analysis_id FROM evalledger.brain_eval_question_score WHERE eval_run_id = %(r)s "
                      "UNION SELECT analysis_id FROM evalledger.brain_eval_harness_answer WHERE eval_run_id = %(r)s)",
                      {"r": run_id})
        for table, column in RUN_TABLES.items():
            admin.execute(sql.SQL("UPDATE evalledger.{} SET {} = " + clock + " WHERE eval_run_id = %s").format(
                sql.Identifier(table), sql.Identifier(column)), (run_id,))


def age_run(admin, run_id, clock: str) -> None:
    """run_id recorded at clock, committed."""
    with admin.transaction():
        set_run_clock(admin, run_id, clock)


def set_clock(admin, table: str, column: str, clock: str, where: str = "true") -> None:
    """Within admin's transaction: the rows of table matching where recorded at clock."""
    with clocks_unguarded(admin, [table]):
        admin.execute(sql.SQL("UPDATE evalledger.{} SET {} = " + clock + " WHERE " + where).format(
            sql.Identifier(table), sql.Identifier(column)))


@contextlib.contextmanager
def acting_as(conn, role):
    """conn (the superuser, in a transaction) acting as role until the block ends."""
    conn.execute(sql.SQL("SET LOCAL ROLE {}").format(sql.Identifier(role)))
    try:
        yield conn
    finally:
        conn.execute("RESET ROLE")


def new_run(runner, reviewer_id, brain="AGT-901"):
    """An open run of 2 questions (question rows and analyses recorded now)."""
    return record_run(runner, reviewer_id, brain=brain, count=2, complete=False)


def rows_of_run(conn, run_id) -> dict[str, int]:
    """How many rows of run_id each of its tables shows conn's role, and its analyses."""
    found = {}
    for table in ("brain_eval_log", "brain_eval_question_score"):
        found[table] = conn.execute(sql.SQL("SELECT count(*) FROM evalledger.{} WHERE eval_run_id = %s").format(
            sql.Identifier(table)), (run_id,)).fetchone()[0]
    found["brain_analysis_log"] = conn.execute(
        "SELECT count(*) FROM evalledger.brain_analysis_log WHERE analysis_id IN "
        "(SELECT brain_analysis_id FROM evalledger.brain_eval_question_score WHERE eval_run_id = %s)",
        (run_id,)).fetchone()[0] if found["brain_eval_question_score"] else 0
    return found


def superuser_counts(admin, run_id, tables=("brain_eval_log", "brain_eval_question_score")) -> dict[str, int]:
    return {t: admin.execute(sql.SQL("SELECT count(*) FROM evalledger.{} WHERE eval_run_id = %s").format(
        sql.Identifier(t)), (run_id,)).fetchone()[0] for t in tables}


def expected_purge(admin, run_id) -> list[tuple]:
    """What purging run_id deletes: every table's rows of it, then its analyses."""
    counts = superuser_counts(admin, run_id, RUN_TABLES)
    analyses = counts["brain_eval_question_score"]
    return sorted([(t, n, run_id, None) for t, n in counts.items() if n]
                  + ([("brain_analysis_log", analyses, None, None)] if analyses else []), key=str)


# -- the tier clock is the database's -------------------------------------------------------------
def test_a_runs_rows_carry_its_recording_time(admin, connect_as, reviewer_id):
    run_id = new_run(connect_as(RUNNER), reviewer_id)
    clocks = admin.execute("SELECT l.created_at, q.run_created_at, a.created_at FROM evalledger.brain_eval_log l "
                           "JOIN evalledger.brain_eval_question_score q USING (eval_run_id) "
                           "JOIN evalledger.brain_analysis_log a ON a.analysis_id = q.brain_analysis_id "
                           "WHERE l.eval_run_id = %s", (run_id,)).fetchall()
    assert len(clocks) == 2
    assert all(run == child for run, child, _ in clocks)
    assert all(analysis >= run for run, _, analysis in clocks)


@pytest.mark.parametrize("statement", [
    "INSERT INTO evalledger.legal_hold (target_id, reason, placed_at, placed_by) "
    "VALUES ('AGT-901', 'probe', '2001-01-01', 'someone_else') RETURNING placed_at, placed_by",
    "INSERT INTO evalledger.eval_capture_failures (failure_key, reason, occurred_at, recorded_at) "
    "VALUES (gen_random_uuid(), 'other', now(), '2001-01-01') RETURNING recorded_at, NULL",
    "INSERT INTO evalledger.brain_analysis_log (brain, origin, model_id, system_prompt_hash, question, output, "
    "token_cost_usd, created_at) VALUES ('AGT-901', 'production', 'm', repeat('a', 64), 'q', 'o', 0, '2001-01-01') "
    "RETURNING created_at, NULL",
])
def test_a_supplied_tier_clock_is_replaced_by_the_databases(admin, connect_as, statement):
    # The superuser holds every column privilege (the owner role now only the registries' and holds'
    # INSERT): only the trigger stops it.
    conn = connect_as(OWNER) if "legal_hold" in statement else admin
    with conn.transaction():
        clock, who = conn.execute(statement).fetchone()
        now = conn.execute("SELECT now()").fetchone()[0]
    assert clock == now
    assert who in (None, admin.info.user)


# -- tiers at their exact boundaries, as each role -------------------------------------------------
@pytest.mark.parametrize("role", [*HOT_ONLY, *SEES_ALL])
def test_hot_tier_ends_at_24_months_to_the_second(admin, connect_as, reviewer_id, role):
    runner = connect_as(RUNNER)
    inside, edge, outside = (new_run(runner, reviewer_id) for _ in range(3))
    with admin.transaction():
        set_run_clock(admin, inside, f"{HOT} + {SECOND}")
        set_run_clock(admin, edge, HOT)
        set_run_clock(admin, outside, f"{HOT} - {SECOND}")
        with acting_as(admin, role):
            seen = {name: rows_of_run(admin, run) for name, run in
                    (("inside", inside), ("edge", edge), ("outside", outside))}
    every = {"brain_eval_log": 1, "brain_eval_question_score": 2, "brain_analysis_log": 2}
    none = dict.fromkeys(every, 0)
    assert seen["inside"] == every
    # The window is the reading statement's (hot_tier_start_v1), not the transaction's: a run recorded
    # exactly 24 months before this transaction began is past the hot tier when a later statement reads.
    assert seen["edge"] == seen["outside"] == (every if role in SEES_ALL else none)


def test_other_tables_are_hot_only_for_every_reader_but_the_auditor(admin, connect_as):
    """Capture failures: 24 months ± 1 second (and the transaction's start, 24 months back, is past by the reading statement)."""
    admin.execute("INSERT INTO evalledger.eval_capture_failures (failure_key, reason, occurred_at) "
                  "SELECT gen_random_uuid(), 'other', now() FROM generate_series(1, 3)")
    ids = [r[0] for r in admin.execute("SELECT failure_id FROM evalledger.eval_capture_failures ORDER BY 1")]
    with admin.transaction():
        for failure_id, clock in zip(ids, (f"{HOT} + {SECOND}", HOT, f"{HOT} - {SECOND}")):
            set_clock(admin, "eval_capture_failures", "recorded_at", clock, f"failure_id = {failure_id}")
        seen = {}
        for role in (RUNNER, REVOPS, AUDITOR):
            with acting_as(admin, role):
                seen[role] = [r[0] for r in admin.execute(
                    "SELECT failure_id FROM evalledger.eval_capture_failures ORDER BY 1")]
    assert seen == {RUNNER: ids[:1], REVOPS: ids[:1], AUDITOR: ids}


# -- the purge horizon, to the second ---------------------------------------------------------------
def purge_as_retention(conn) -> list[tuple]:
    with acting_as(conn, RETENTION):
        return conn.execute("SELECT * FROM evalledger.retention_purge_v2()").fetchall()


def test_purge_takes_rows_recorded_more_than_7_years_ago_to_the_second(admin, connect_as, reviewer_id):
    runner = connect_as(RUNNER)
    inside, edge, past = (new_run(runner, reviewer_id) for _ in range(3))
    with admin.transaction():
        gone = [e for run in (edge, past) for e in expected_purge(admin, run) if e[0] != "brain_analysis_log"]
        expected = sorted(gone + [("brain_analysis_log", 4, None, None)], key=str)
        set_run_clock(admin, edge, HORIZON)
        set_run_clock(admin, past, f"{HORIZON} - {SECOND}")
        # A second inside the horizon the purge's statement computes: from the clock as it is just
        # before it, not the transaction's start, which a busy machine puts seconds earlier.
        set_run_clock(admin, inside, f"clock_timestamp() - interval '7 years' + {SECOND}")
        purged = purge_as_retention(admin)
    assert sorted(purged, key=str) == expected
    # The horizon is the purging statement's (purge_horizon_at_v1): a run recorded exactly 7 years
    # before the transaction began is past it by then.
    for gone in (edge, past):
        assert superuser_counts(admin, gone) == {"brain_eval_log": 0, "brain_eval_question_score": 0}
    assert superuser_counts(admin, inside) == {"brain_eval_log": 1, "brain_eval_question_score": 2}
    log = admin.execute("SELECT purged_by, table_name, row_count, eval_run_id FROM evalledger.retention_purge_log "
                        "ORDER BY purge_log_id").fetchall()
    assert sorted(((t, n, r, None) for _, t, n, r in log), key=str) == expected
    assert {who for who, *_ in log} == {admin.info.user}
    assert [t for _, t, _, _ in log][-2:] == ["brain_eval_log", "brain_analysis_log"]  # foreign-key order


# -- legal holds ------------------------------------------------------------------------------------
HOLDS = {
    "run": "INSERT INTO evalledger.legal_hold (eval_run_id, reason) VALUES (%(run)s, 'matter 1') RETURNING hold_id",
    "brain": "INSERT INTO evalledger.legal_hold (target_id, reason) VALUES ('AGT-902', 'matter 2') RETURNING hold_id",
    "range": "INSERT INTO evalledger.legal_hold (held_from, held_to, reason) VALUES "
             "(now() - interval '9 years', now() - interval '8 years' + interval '1 day', 'matter 3') RETURNING hold_id",
}


@pytest.mark.parametrize("scope", list(HOLDS))
def test_a_hold_keeps_rows_past_the_horizon_until_released(admin, connect_as, reviewer_id, scope):
    runner = connect_as(RUNNER)
    held = new_run(runner, reviewer_id, brain="AGT-902")
    age_run(admin, held, "now() - interval '8 years'")
    owner = connect_as(OWNER)
    hold_id = owner.execute(HOLDS[scope], {"run": held}).fetchone()[0]

    plan = {r[0]: r[1:] for r in connect_as(AUDITOR).execute("SELECT * FROM evalledger.retention_plan_v2()")}
    assert plan["brain_eval_log"][:4] == (0, 0, 0, 1)
    assert re.match(rf"hold {hold_id} \({scope} .*\): 1$", plan["brain_eval_log"][4])
    assert plan["brain_eval_question_score"][:4] == (0, 0, 0, 2)

    with admin.transaction():
        assert purge_as_retention(admin) == []
    assert superuser_counts(admin, held) == {"brain_eval_log": 1, "brain_eval_question_score": 2}

    owner.execute("INSERT INTO evalledger.legal_hold_release (hold_id, reason) VALUES (%s, 'settled')", (hold_id,))
    with admin.transaction():
        purged = purge_as_retention(admin)
    assert ("brain_eval_log", 1, held, None) in purged
    assert superuser_counts(admin, held) == {"brain_eval_log": 0, "brain_eval_question_score": 0}
    if scope == "run":  # a released run hold goes with its run, its release with it
        assert ("legal_hold", 1, held, None) in purged
        assert admin.execute("SELECT count(*) FROM evalledger.legal_hold_release").fetchone()[0] == 0


def test_a_hold_needs_exactly_one_scope(admin, connect_as):
    owner = connect_as(OWNER)
    before = admin.execute("SELECT count(*) FROM evalledger.legal_hold").fetchone()[0]
    for statement in ("INSERT INTO evalledger.legal_hold (reason) VALUES ('none')",
                      "INSERT INTO evalledger.legal_hold (target_id, held_from, held_to, reason) "
                      "VALUES ('AGT-901', now(), now(), 'two')",
                      "INSERT INTO evalledger.legal_hold (held_from, reason) VALUES (now(), 'half a range')"):
        with pytest.raises(errors.CheckViolation) as caught:
            owner.execute(statement)
        assert caught.value.diag.constraint_name == "legal_hold_one_scope"
    assert admin.execute("SELECT count(*) FROM evalledger.legal_hold").fetchone()[0] == before


def test_a_range_hold_keeps_a_capture_partition(admin):
    start = capture_partition_ago(admin, "8 years")
    admin.execute("INSERT INTO evalledger.eval_candidates (tool_name, query, vector_enabled, expansion_applied, "
                  "latency_ms, remote, capture_key, created_at) VALUES ('query', 'old', true, false, 1, false, "
                  "gen_random_uuid(), %s::date + interval '1 day')", (start,))
    part = f"eval_candidates_p{start:%Y%m}"
    hold_id = admin.execute("INSERT INTO evalledger.legal_hold (held_from, held_to, reason) VALUES "
                            "(%s::date + interval '20 days', %s::date + interval '21 days', 'matter') RETURNING hold_id",
                            (start, start)).fetchone()[0]
    with admin.transaction():
        purged = purge_as_retention(admin)
    assert [p for p in purged if p[0] == "eval_candidates"] == []
    assert admin.execute("SELECT to_regclass(%s)", (f"evalledger.{part}",)).fetchone()[0] is not None
    admin.execute("INSERT INTO evalledger.legal_hold_release (hold_id, reason) VALUES (%s, 'done')", (hold_id,))
    with admin.transaction():
        purged = purge_as_retention(admin)
    assert ("eval_candidates", 1, None, part) in purged
    assert admin.execute("SELECT to_regclass(%s)", (f"evalledger.{part}",)).fetchone()[0] is None


# -- only the purge deletes, and only the retention role purges -------------------------------------
def test_every_role_but_the_retention_role_is_refused(admin, connect_as, reviewer_id):
    run_id = new_run(connect_as(RUNNER), reviewer_id)
    age_run(admin, run_id, "now() - interval '8 years'")
    before = superuser_counts(admin, run_id)
    for role in (OWNER, RUNNER, REVIEWER_ROLE, REVOPS, AUDITOR):
        conn = connect_as(role)
        with pytest.raises(errors.InsufficientPrivilege) as caught:
            conn.execute("DELETE FROM evalledger.brain_eval_question_score WHERE eval_run_id = %s", (run_id,))
        # The owner role too holds no DELETE (issue 17); the superuser meets the guard (next test).
        assert "permission denied for table brain_eval_question_score" in str(caught.value)
        with pytest.raises(errors.InsufficientPrivilege, match="permission denied for function retention_purge_v2"):
            conn.execute("SELECT * FROM evalledger.retention_purge_v2()")
        with pytest.raises(errors.InsufficientPrivilege, match="permission denied for table retention_purge_marker"):
            conn.execute("INSERT INTO evalledger.retention_purge_marker VALUES (txid_current())")
    with pytest.raises(errors.InsufficientPrivilege, match="permission denied for table retention_purge_log"):
        connect_as(OWNER).execute("INSERT INTO evalledger.retention_purge_log (table_name, row_count) "
                                  "VALUES ('brain_eval_log', 1)")
    with pytest.raises(errors.InsufficientPrivilege, match="written by the retention purge alone"):
        admin.execute("INSERT INTO evalledger.retention_purge_log (table_name, row_count) VALUES ('brain_eval_log', 1)")
    assert superuser_counts(admin, run_id) == before
    assert admin.execute("SELECT count(*) FROM evalledger.retention_purge_log").fetchone()[0] == 0


def test_the_superuser_deletes_nothing_outside_the_purge(admin, connect_as, reviewer_id):
    run_id = new_run(connect_as(RUNNER), reviewer_id)
    age_run(admin, run_id, "now() - interval '8 years'")
    with pytest.raises(errors.InsufficientPrivilege, match="brain_eval_question_score is append-only: DELETE refused"):
        admin.execute("DELETE FROM evalledger.brain_eval_question_score WHERE eval_run_id = %s", (run_id,))
    assert superuser_counts(admin, run_id) == {"brain_eval_log": 1, "brain_eval_question_score": 2}


def test_inside_the_purge_a_young_row_is_still_refused(admin, connect_as, reviewer_id):
    run_id = new_run(connect_as(RUNNER), reviewer_id)
    with admin.transaction():
        admin.execute("INSERT INTO evalledger.retention_purge_marker VALUES (txid_current())")
        with pytest.raises(errors.InsufficientPrivilege, match="append-only: DELETE refused"):
            admin.execute("DELETE FROM evalledger.brain_eval_question_score WHERE eval_run_id = %s", (run_id,))
        raise psycopg.Rollback()
    assert superuser_counts(admin, run_id) == {"brain_eval_log": 1, "brain_eval_question_score": 2}


def test_the_purge_log_is_append_only(admin, connect_as, reviewer_id):
    run_id = new_run(connect_as(RUNNER), reviewer_id)
    age_run(admin, run_id, "now() - interval '8 years'")
    with admin.transaction():
        purge_as_retention(admin)
    log = admin.execute("SELECT * FROM evalledger.retention_purge_log ORDER BY 1").fetchall()
    assert log
    for statement in ("UPDATE evalledger.retention_purge_log SET row_count = 0",
                      "DELETE FROM evalledger.retention_purge_log",
                      "TRUNCATE evalledger.retention_purge_log"):
        with pytest.raises(errors.InsufficientPrivilege, match="retention_purge_log is append-only"):
            admin.execute(statement)
    assert admin.execute("SELECT * FROM evalledger.retention_purge_log ORDER BY 1").fetchall() == log
    assert connect_as(AUDITOR).execute("SELECT count(*) FROM evalledger.retention_purge_log").fetchone()[0] == len(log)


# -- no tier check is a lookup per row ---------------------------------------------------------------
CHILD_TABLES = ["brain_eval_question_score", "brain_eval_harness_run", "brain_eval_harness_answer",
                "brain_eval_judge_suggestion", "brain_eval_review_entry", "brain_eval_run_review",
                "brain_eval_suggestion_shown",
                "brain_analysis_log", "eval_takes_quality_judge_verdicts", "eval_work_quality_judge_verdicts"]


@pytest.mark.parametrize("role", [REVOPS, RUNNER, REVIEWER_ROLE])
def test_no_tier_policy_is_a_subplan_per_row(connect_as, reviewers, role):
    """The plan of every child table's read, as each hot-only role: its tier check is a filter on
    the row's own clock, and nothing runs once per row (a SubPlan); a reviewer's own-run check is
    an InitPlan, run once per statement."""
    conn = connect_as(role)
    explained = 0
    for table in CHILD_TABLES:
        try:
            plan = "\n".join(r[0] for r in conn.execute(
                sql.SQL("EXPLAIN SELECT * FROM evalledger.{}").format(sql.Identifier(table))))
        except errors.InsufficientPrivilege:
            continue  # the role reads no row of it at all
        explained += 1
        assert "SubPlan" not in plan, (role, table, plan)
        assert re.search(r"\b(run_created_at|snapshot_created_at|created_at) >= ", plan), (role, table, plan)
    assert explained >= 7
    if role == REVOPS:
        plan = "\n".join(r[0] for r in conn.execute("EXPLAIN SELECT * FROM evalledger.most_failing_questions_v1"))
        assert "SubPlan" not in plan, plan


def purge_committed(admin) -> list[tuple]:
    """retention apply's path: the purge as evalledger_retention, committed; what it purged."""
    with admin.transaction():
        return purge_as_retention(admin)
