"""A ledger at the release, with data in every table, upgrades: every post-release migration
applies (each recorded in the same transaction as its change) and every guard, policy and view
holds as each role after them."""

from __future__ import annotations

import os
import re

import psycopg
import pytest
from psycopg import errors, sql
from psycopg.conninfo import make_conninfo

from evalledger.core import db
from evalledger.core.migrate import migrate
from tests.cli import run_cli
from tests.conftest import REVIEWER_ROLE, ensure_login_role
from tests.db.test_capture_db import make_old_partition
from tests.ledger_forge import age_entries_after
from tests.db.test_retention import purge_committed
from tests.db.schema_objects import differences, snapshot
from tests.db.test_privileges import EXPECTED, OPERATIONS, ROLES, TABLES, allowed, attempt
from tests.released import migrations_of_the_release, post_release_migrations, released_migrations

# A ledger of the release, migrated from its migrations and filled, then upgraded: not a clone of the
# session's template, and tens of seconds of the server's time (make check leaves it out).
pytestmark = pytest.mark.long

# Tables no demo writes: filled here, each the way its users write it.
VIEWS = ["brain_quarterly_trend_v1", "most_failing_questions_v1", "stale_fixture_pass_rate_v1",
         "reviewer_calibration_v1", "cost_per_run_v1", "prompt_drift_v1", "work_quality_history_v1"]


@pytest.fixture(scope="module")
def released_ledger(clone_pool, tmp_path_factory):
    """A database migrated to the release only, then filled by every suite's demo; dropped after."""
    from evalledger.suites.brain_eval.demo import brain_eval_demo, your_run
    from evalledger.suites.capture.demo import capture_demo
    from evalledger.suites.takes_quality.demo import takes_quality_demo
    from evalledger.suites.work_quality.demo import work_quality_demo

    with clone_pool.clone() as scratch:
        name = f"evalledger_upgrade_{os.getpid()}"
        with psycopg.connect(scratch, autocommit=True) as admin:
            admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
        dsn = make_conninfo(scratch, dbname=name)
        try:
            assert migrate(dsn, migrations_of_the_release(tmp_path_factory.mktemp("release"))) == \
                released_migrations()
            quiet = lambda *_, **__: None  # noqa: E731
            db.use_database_url(dsn)  # the demos' own connections, too
            home, os.environ["EVALLEDGER_HOME"] = os.environ.get("EVALLEDGER_HOME"), str(tmp_path_factory.mktemp("home"))
            brain_eval_demo(dsn, echo=quiet)
            your_run(dsn, echo=quiet)
            takes_quality_demo(dsn)
            work_quality_demo(dsn, store=str(tmp_path_factory.mktemp("store")))
            capture_demo(dsn)
            with psycopg.connect(dsn, autocommit=True) as admin:
                fill_the_rest(admin)
            # The journal sealed into a block and its digest kept, as an auditor keeps it.
            digest = tmp_path_factory.mktemp("digest") / "release.digest"
            taken = run_cli("ledger", "digest", "--out", str(digest), "--wait", "0", env={"DATABASE_URL": dsn})
            assert taken.code == 0, taken.out + taken.err
            os.environ["EVALLEDGER_UPGRADE_DIGEST"] = str(digest)
            yield dsn
        finally:
            db.use_database_url(None)
            if home is None:
                os.environ.pop("EVALLEDGER_HOME", None)
            else:
                os.environ["EVALLEDGER_HOME"] = home
            with psycopg.connect(scratch, autocommit=True) as admin:
                admin.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))


def fill_the_rest(admin):
    """Rows in the tables the demos leave empty, written as their users write them."""
    run, question, reviewer = admin.execute(
        "SELECT q.eval_run_id, q.question_id, r.role_name FROM evalledger.brain_eval_question_score q "
        "JOIN evalledger.brain_eval_log l USING (eval_run_id) JOIN evalledger.reviewer r USING (reviewer_user_id) "
        "JOIN evalledger.brain_eval_harness_run h USING (eval_run_id) WHERE l.completed_at IS NOT NULL "
        "ORDER BY q.question_id LIMIT 1").fetchone()
    admin.execute(sql.SQL("SET ROLE {}").format(sql.Identifier(reviewer)))
    assert admin.execute("SELECT evalledger.brain_eval_show_reference_v2(%s, %s)", (run, question)).fetchone()[0]
    admin.execute("SELECT evalledger.brain_eval_show_suggestions_v2(%s, %s)", (run, question))
    admin.execute("RESET ROLE")
    admin.execute("SET ROLE evalledger_owner")
    admin.execute("INSERT INTO evalledger.prompt_tuner (target_id, user_id) VALUES ('AGT-901', gen_random_uuid())")
    hold = admin.execute("INSERT INTO evalledger.legal_hold (target_id, reason) VALUES ('AGT-901', 'audit 2026')"
                         " RETURNING hold_id").fetchone()[0]
    admin.execute("INSERT INTO evalledger.legal_hold_release (hold_id, reason) VALUES (%s, 'audit closed')", (hold,))
    admin.execute("RESET ROLE")
    admin.execute("INSERT INTO evalledger.brain_eval_import (reason, source_file) VALUES ('history', 'old.csv')")
    # A capture month past the horizon, purged: the purge log's rows (and a purge across the upgrade).
    last = admin.execute("SELECT max(entry_id) FROM evalledger.ledger_journal").fetchone()[0]
    make_old_partition(admin, "201501")
    age_entries_after(admin, last, "12 years")  # journalled as long ago as its tier clock says
    assert purge_committed(admin)
    admin.execute("INSERT INTO evalledger.eval_capture_failures (failure_key, reason, occurred_at) "
                  "VALUES (gen_random_uuid(), 'db_down', now())")


def table_counts(conn) -> dict[str, int]:
    tables = [r[0] for r in conn.execute(
        "SELECT relname FROM pg_class WHERE relnamespace = 'evalledger'::regnamespace AND relkind IN ('r', 'p') "
        "AND NOT relispartition ORDER BY relname")]
    return {t: conn.execute(sql.SQL("SELECT count(*) FROM evalledger.{}").format(sql.Identifier(t))).fetchone()[0]
            for t in tables}


# A purge's marker, which the purge deletes before it returns: empty outside one.
# Tables no committed row stays in: a purge's marker (deleted before it returns), the capture
# writers' lock (its CHECK is false) and a run's claim (refused at commit).
EMPTY_UNTIL_USED = {"capture_purge_marker", "retention_purge_marker", "capture_window", "run_claim"}
# Tables a post-release migration made (empty after the upgrade: the released ledger's runs held no
# two open runs of one brain, prompt and catalog for 0110 to close, nor of one takes-quality or
# work-quality subject for 0114; 0131 made replay's; 0133 a drafted catalog's provenance, which the
# release's catalogs, written by hand, have none of; 0139 the gate decisions; 0143 the judge batches';
# 0161 the registrations' lock, which never holds a row).
MADE_SINCE = {"brain_eval_run_closure", "eval_run_closure", "replay_run", "replay_query",
              "brain_eval_catalog_provenance", "eval_gate_decision", "judge_batch", "judge_batch_request",
              "judge_batch_event", "judge_batch_result", "brain_version_registration"}
# Tables a post-release migration made and filled with one row per run completed before it, and the runs'
# table: 0148 made each brain-eval run's stored uncertainty and 0152 filled it once its functions summed
# in a fixed order; 0153 made and filled each takes-quality run's and work-quality snapshot's (one
# INSERT entry each in the journal); 0164 made and filled each brain-eval run's trend row.
ONE_PER_COMPLETED_RUN = {"brain_eval_run_uncertainty": "brain_eval_log", "brain_eval_trend": "brain_eval_log",
                         "eval_takes_quality_run_uncertainty": "eval_takes_quality_runs",
                         "eval_work_quality_snapshot_uncertainty": "eval_work_quality_snapshots"}
# Tables a post-release migration reshaped (0128 gave the call tables their token classes and
# prices): the journal takes a BASELINE entry of each row they hold, its canonical form with the new
# columns (journal_attach_v2), and nothing else changes.
RESHAPED = {"brain_analysis_log", "brain_eval_judge_suggestion", "brain_eval_harness_run",
            "eval_takes_quality_judge_verdicts", "eval_work_quality_judge_verdicts", "eval_takes_quality_runs",
            "eval_work_quality_snapshots"}
# How many post-release migrations reshaped each (0128 the four call tables; 0137 and 0138, judge
# repeats, the quality suites' runs and verdicts; 0140, brain-eval's, its harness runs and judge
# drafts): each gives every row a BASELINE entry.
RESHAPES = {"eval_takes_quality_judge_verdicts": 2, "eval_work_quality_judge_verdicts": 2,
            "brain_eval_judge_suggestion": 2}
# Rows a post-release migration added to a table the release had: 0131's replay rubric and its
# activation, each journalled.
ADDED_SINCE = {"rubric": 1, "rubric_activation": 1, "ledger_journal": 2}


@pytest.fixture(scope="module")
def upgraded(released_ledger):
    """(row counts before, the migrations applied, the dsn) of the released ledger upgraded, by an
    installer whose session says what any may (PGOPTIONS, the role's or the database's defaults):
    float8 to 15 digits, a zone of +12:45, day-first dates, SQL-standard intervals. What the
    migrations' backfills store must not follow it (verify --recompute below re-derives it)."""
    with psycopg.connect(released_ledger, autocommit=True) as admin:
        before = table_counts(admin)
    applied = migrate(make_conninfo(released_ledger, options="-c extra_float_digits=0 -c TimeZone=Pacific/Chatham "
                                                             "-c DateStyle=SQL,DMY -c IntervalStyle=sql_standard"))
    return before, applied, released_ledger


def test_the_release_had_data_in_every_table(upgraded):
    before, _, _ = upgraded
    empty = sorted(t for t, n in before.items() if n == 0)
    assert empty == sorted(EMPTY_UNTIL_USED), before


def test_the_upgrade_applies_the_post_release_migrations_and_keeps_every_row(upgraded, clone_pool):
    before, applied, dsn = upgraded
    assert applied and applied == post_release_migrations()
    with psycopg.connect(dsn, autocommit=True) as admin:
        after = table_counts(admin)
        # The release journalled these tables' rows as they were inserted: their BASELINE entries are 0128's.
        baselines = dict(admin.execute(
            "SELECT table_name, count(*) FROM evalledger.ledger_journal"
            " WHERE operation = 'BASELINE' AND table_name = ANY(%s) GROUP BY table_name", (sorted(RESHAPED),)).fetchall())
        assert baselines == {t: before[t] * RESHAPES.get(t, 1) for t in RESHAPED}
        # 0124 journals a manifest for each run completed before it: one journal entry each.
        completed, = admin.execute("SELECT count(*) FROM evalledger.brain_eval_log WHERE completed_at IS NOT NULL").fetchone()
        assert completed > 0
        per_run = {t: admin.execute(sql.SQL("SELECT count(*) FROM evalledger.{} WHERE completed_at IS NOT NULL").format(
            sql.Identifier(runs))).fetchone()[0] for t, runs in ONE_PER_COMPLETED_RUN.items()}
        assert all(per_run.values()), per_run
        # The journal gains those BASELINE entries, the manifests, the entries of the rows ADDED_SINCE and of
        # those ONE_PER_COMPLETED_RUN, nothing else.
        journalled = (sum(baselines.values()) + completed + ADDED_SINCE["ledger_journal"] + sum(per_run.values()))
        made = MADE_SINCE | set(ONE_PER_COMPLETED_RUN)
        assert {t: n for t, n in after.items() if t not in made} == {
            t: n + (journalled if t == "ledger_journal" else ADDED_SINCE.get(t, 0)) for t, n in before.items()}
        assert {t: after[t] for t in MADE_SINCE} == dict.fromkeys(MADE_SINCE, 0)
        assert {t: after[t] for t in ONE_PER_COMPLETED_RUN} == per_run
        upgraded_schema = snapshot(admin, rows=False)
    # The same schema as a ledger migrated from nothing (which the current files build too:
    # tests/db/test_current_schema.py).
    with clone_pool.clone() as fresh, psycopg.connect(fresh, autocommit=True) as admin:
        assert differences(upgraded_schema, snapshot(admin, rows=False)) == []


# What each post-release migration makes, to tell its transaction by (a test fails on one missing).
MADE_BY = {
    "0101.panel-bounds": "SELECT xmin::text FROM pg_class WHERE oid = 'evalledger.brain_eval_log_failed_started_idx'::regclass",
    "0102.journal-cost": "SELECT xmin::text FROM pg_proc WHERE oid = 'evalledger.journal_row_v2()'::regprocedure",
    "0103.capture-keys": "SELECT xmin::text FROM pg_proc WHERE oid = 'evalledger.capture_keys_v1()'::regprocedure",
    "0104.capture-checks": "SELECT xmin::text FROM pg_proc WHERE oid = 'evalledger.capture_all_distinct_v1(text[])'::regprocedure",
    "0105.completion-clock": "SELECT xmin::text FROM pg_proc WHERE oid = 'evalledger.complete_once_v1()'::regprocedure",
    # takes_quality_regression_v1 is 0114's since (it replaced it), and 0141's grant rewrote
    # takes_quality_threshold_v1's row: nothing of 0106's is left to tell it by.
    "0106.takes-quality-regression": "SELECT xmin::text FROM _yoyo_migration "
                                     "WHERE migration_id = '0106.takes-quality-regression'",
    "0107.recorded-clocks": "SELECT xmin::text FROM pg_trigger WHERE tgname = 'reviewer_20_clock'",
    "0108.lock-timeouts": "SELECT xmin::text FROM pg_proc WHERE oid = 'evalledger.capture_ensure_partitions_v2(integer)'::regprocedure",
    # (0135 granted prompt_normal_v1 to more roles, a change of its row: the index is 0109's still.)
    "0109.prompt-spelling": "SELECT xmin::text FROM pg_class WHERE oid = 'evalledger.brain_version_prompt_normal_idx'::regclass",
    "0110.abandoned-runs": "SELECT xmin::text FROM pg_proc WHERE oid = 'evalledger.brain_eval_cancel_v1(uuid, text)'::regprocedure",
    # 0120 replaced the one function 0111 made (0111 dropped the other): nothing of 0111's is left to tell it by.
    "0111.one-merkle-root": "SELECT xmin::text FROM _yoyo_migration WHERE migration_id = '0111.one-merkle-root'",
    # 0131 replaced the suites' check 0112 widened; the column 0112 made text is still its.
    "0112.brain-eval-claims": "SELECT xmin::text FROM pg_attribute WHERE attrelid = 'evalledger.run_claim'::regclass "
                              "AND attname = 'run_id'",
    "0113.sign-off-once": "SELECT xmin::text FROM pg_proc "
                          "WHERE oid = 'evalledger.brain_eval_run_review_admit_v1()'::regprocedure",
    "0114.abandoned-quality-runs": "SELECT xmin::text FROM pg_proc "
                                   "WHERE oid = 'evalledger.eval_run_cancel_v1(text, bigint, text)'::regprocedure",
    # (0156 set extra_float_digits on uncertainty_v1: the quantile is 0116's still.)
    "0116.uncertainty": "SELECT xmin::text FROM pg_proc WHERE oid = "
                        "'evalledger.normal_quantile_v1(double precision)'::regprocedure",
    "0120.seal-waits-for-writers": "SELECT xmin::text FROM pg_proc WHERE oid = 'evalledger.ledger_writers_v1()'::regprocedure",
    # 0138 replaced the decision 0121 made; the recompute 0121 pointed at it is still 0121's.
    "0121.one-work-quality-decision": "SELECT xmin::text FROM pg_proc WHERE oid = "
                                      "'evalledger.ledger_recompute_work_quality_v2(evalledger.eval_work_quality_snapshots)'::regprocedure",
    "0124.run-manifest": "SELECT xmin::text FROM pg_proc WHERE oid = 'evalledger.brain_eval_manifest_v1(uuid)'::regprocedure",
    "0128.billed-costs": "SELECT xmin::text FROM pg_proc WHERE oid = 'evalledger.call_cost_stamp_v1()'::regprocedure",
    # (0136 replaced replay_rbo_v1, and 0135 granted the other measures: the completion is 0131's still.)
    "0131.replay": "SELECT xmin::text FROM pg_proc WHERE oid = 'evalledger.replay_complete_v1(bigint)'::regprocedure",
    "0132.constraints-as-reloaded": "SELECT xmin::text FROM pg_constraint WHERE conname = 'brain_analysis_log_origin_known'",
    # (0158 replaced the decision 0139 made and added a column to its table: the table's index is 0139's still.)
    "0139.gate-decisions": "SELECT xmin::text FROM pg_class WHERE oid = 'evalledger.eval_gate_decision_created_idx'::regclass",
    "0137.judge-repeats": "SELECT xmin::text FROM pg_class WHERE oid = 'evalledger.takes_quality_flaky_v1'::regclass",
    "0138.work-quality-repeats": "SELECT xmin::text FROM pg_class WHERE oid = 'evalledger.work_quality_flaky_v1'::regclass",
    "0140.brain-eval-repeats": "SELECT xmin::text FROM pg_class WHERE oid = 'evalledger.brain_eval_flaky_v1'::regclass",
    "0133.catalog-provenance": "SELECT xmin::text FROM pg_class WHERE oid = 'evalledger.brain_eval_catalog_provenance'::regclass",
    "0143.judge-batches": "SELECT xmin::text FROM pg_class WHERE oid = 'evalledger.judge_batch'::regclass",
    "0144.agreement-once-per-judge": "SELECT xmin::text FROM pg_proc "
                                     "WHERE oid = 'evalledger.brain_eval_agreement_pairs_v1(uuid[])'::regprocedure",
    # 0152 replaced the judges' scores 0145 made, 0153 the intervals 0145 replaced, and 0158 dropped the paired
    # comparison 0145 replaced: nothing of 0145's is left.
    "0145.work-quality-paired-by-judge": "SELECT xmin::text FROM _yoyo_migration "
                                         "WHERE migration_id = '0145.work-quality-paired-by-judge'",
    "0148.stored-uncertainty": "SELECT xmin::text FROM pg_class WHERE oid = 'evalledger.brain_eval_run_uncertainty'::regclass",
    # (0152 replaced plan_v1, which 0141 made: its grant of takes_quality_threshold_v1 is still 0141's.)
    "0141.plan": "SELECT xmin::text FROM pg_proc "
                 "WHERE oid = 'evalledger.takes_quality_threshold_v1(numeric)'::regprocedure",
    "0146.gate-decisions-recomputed-and-aged": "SELECT xmin::text FROM pg_proc "
                                               "WHERE oid = 'evalledger.retention_gate_pinned_v1(bigint)'::regprocedure",
    "0135.production-beside-eval": "SELECT xmin::text FROM pg_proc "
                                   "WHERE oid = 'evalledger.production_beside_eval_rows_v1(text, date, date, text)'::regprocedure",
    "0136.replay-outlives-capture": "SELECT xmin::text FROM pg_proc "
                                    "WHERE oid = 'evalledger.replay_capture_purged_rows_v1(bigint)'::regprocedure",
    # (0151 replaced the purge 0150 changed: the decision is 0150's still.)
    # (0155 replaced the decision 0150 changed, 0165 the admission: its outcomes are 0150's still.)
    "0150.replay-open-run-at-the-purge": "SELECT xmin::text FROM pg_constraint WHERE conname = "
                                         "'replay_query_outcome_known'",
    # 0153 replaced the four retention functions 0151 replaced, all 0151 made: nothing of 0151's is left.
    "0151.replay-ages": "SELECT xmin::text FROM _yoyo_migration WHERE migration_id = '0151.replay-ages'",
    "0152.statistics-in-a-fixed-order": "SELECT xmin::text FROM pg_proc "
                                        "WHERE oid = 'evalledger.mean_stderr_v1(double precision[])'::regprocedure",
    "0153.stored-quality-uncertainty": "SELECT xmin::text FROM pg_class "
                                       "WHERE oid = 'evalledger.eval_work_quality_snapshot_uncertainty'::regclass",
    # (0160 replaced the admission and set the decision's digits: the decision trigger is 0155's still.)
    "0155.replay-cold-open-run-closed": "SELECT xmin::text FROM pg_proc WHERE oid = "
                                        "'evalledger.replay_run_decide_v1()'::regprocedure",
    # 0156 only set extra_float_digits on functions an earlier migration made: its own record names it.
    "0156.float-digits-pinned": "SELECT xmin::text FROM _yoyo_migration WHERE migration_id = '0156.float-digits-pinned'",
    "0158.gate-recompute-rubric": "SELECT xmin::text FROM pg_proc WHERE oid = "
                                  "'evalledger.gate_decide_v2(text, text, numeric, jsonb, jsonb, bigint, bigint)'::regprocedure",
    "0160.replay-identity-and-float-digits": "SELECT xmin::text FROM pg_class "
                                             "WHERE oid = 'evalledger.replay_run_identity_key'::regclass",
    "0161.guards-without-trigger-depth": "SELECT xmin::text FROM pg_proc WHERE oid = "
                                         "'evalledger.takes_quality_receipt_built_v3(bigint)'::regprocedure",
    "0163.gate-scores-out-of-range": "SELECT xmin::text FROM pg_proc WHERE oid = "
                                     "'evalledger.gate_scores_in_range_v1(text, jsonb, text, jsonb, text)'::regprocedure",
    "0164.trend-bars-in-their-rows": "SELECT xmin::text FROM pg_class WHERE oid = 'evalledger.brain_eval_trend'::regclass",
    "0165.replay-plan-and-measures": "SELECT xmin::text FROM pg_proc WHERE oid = "
                                     "'evalledger.replay_query_measured_v1(evalledger.replay_query, numeric)'::regprocedure",
    "0166.cancelled-by-the-login": "SELECT xmin::text FROM pg_proc WHERE oid = "
                                   "'evalledger.eval_run_close_v1(text, bigint, text)'::regprocedure",
    "0167.unfinished-questions-not-passed": "SELECT xmin::text FROM pg_proc WHERE oid = "
                                            "'evalledger.most_failing_questions_rows_v1()'::regprocedure",
    "0168.unscorable-claims-named": "SELECT xmin::text FROM pg_proc WHERE oid = "
                                    "'evalledger.brain_eval_claims_problem_v1(jsonb)'::regprocedure",
    "0169.gate-threshold-within-scale": "SELECT xmin::text FROM pg_proc WHERE oid = "
                                        "'evalledger.eval_gate_decision_admit_v1()'::regprocedure",
}


def test_every_post_release_migration_names_what_it_made():
    assert sorted(MADE_BY) == post_release_migrations()


@pytest.mark.parametrize("migration", sorted(MADE_BY))
def test_the_migration_is_recorded_in_the_transaction_that_made_its_change(upgraded, migration):
    _, _, dsn = upgraded
    with psycopg.connect(dsn, autocommit=True) as admin:
        made_xmin, = admin.execute(MADE_BY[migration]).fetchone()
        recorded_xmin, = admin.execute("SELECT xmin::text FROM _yoyo_migration WHERE migration_id = %s",
                                       (migration,)).fetchone()
    assert made_xmin == recorded_xmin


def connect_as(dsn, role):
    conn = psycopg.connect(dsn, autocommit=True)
    conn.execute("SET search_path = evalledger, public")
    conn.execute(sql.SQL("SET ROLE {}").format(sql.Identifier(role)))
    return conn


@pytest.mark.parametrize("role", sorted(ROLES))
def test_every_role_may_do_exactly_what_it_could_after_the_upgrade(upgraded, role):
    _, _, dsn = upgraded
    with psycopg.connect(dsn, autocommit=True) as admin:
        ensure_login_role(admin, REVIEWER_ROLE, "evalledger_reviewer")
        conn = connect_as(dsn, ROLES[role])
        failures = []
        for table in TABLES:
            column = admin.execute("SELECT column_name FROM information_schema.columns WHERE table_schema = "
                                   "'evalledger' AND table_name = %s AND is_identity = 'NO' ORDER BY ordinal_position"
                                   " LIMIT 1", (table,)).fetchone()[0]
            for op in OPERATIONS.values():
                may = allowed(EXPECTED[(role, table)], op[0])
                try:
                    attempt(conn, table, op, None if op == "SELECT" else column)
                    refused = False
                except psycopg.Error as exc:  # past the privilege check, a row's own refusal
                    refused = isinstance(exc, errors.InsufficientPrivilege)
                if may == refused:
                    failures.append(f"{op} {table}: {'refused' if refused else 'allowed'}")
        conn.close()
    assert not failures, "\n".join(failures)


GUARDED = [
    ("UPDATE evalledger.brain_eval_log SET decision = 'pass'", "append-only|may not|refused"),
    ("DELETE FROM evalledger.brain_eval_question_score", "append-only: DELETE refused"),
    ("DELETE FROM evalledger.legal_hold", "append-only: DELETE refused"),
    ("UPDATE evalledger.target SET display_name = 'x'", "append-only: UPDATE refused"),
    ("TRUNCATE evalledger.eval_takes_quality_judge_verdicts", "append-only: TRUNCATE refused"),
    ("DELETE FROM evalledger.eval_candidate_keys", "append-only: DELETE refused"),
    ("UPDATE evalledger.eval_candidates SET query = 'x'", "append-only"),
    ("DELETE FROM evalledger.brain_eval_reference_shown", "refused"),
    ("DELETE FROM evalledger.eval_work_quality_snapshots", "append-only: DELETE refused"),
    ("ALTER TABLE evalledger.brain_eval_log DISABLE TRIGGER brain_eval_log_00_append_only",
     "stay ENABLE ALWAYS|must be owner"),
    ("DROP POLICY brain_eval_log_reviewer ON evalledger.brain_eval_log", "refused|must be owner"),
]


@pytest.mark.parametrize("who", ["evalledger_owner", "superuser"])
def test_the_guards_refuse_the_owner_and_the_superuser_after_the_upgrade(upgraded, who):
    _, _, dsn = upgraded
    failures = []
    for statement, says in GUARDED:
        conn = psycopg.connect(dsn, autocommit=True) if who == "superuser" else connect_as(dsn, who)
        try:
            conn.execute(statement)
            failures.append(f"{statement}: not refused")
        except psycopg.Error as exc:
            # The owner role holds SELECT alone (issue 17): refused by privilege before any guard.
            if not re.search(says if who == "superuser" else f"{says}|permission denied", str(exc)):
                failures.append(f"{statement}: {str(exc).splitlines()[0]}")
        finally:
            conn.close()
    assert not failures, "\n".join(failures)


def test_the_views_read_as_before_for_each_reader(upgraded):
    _, _, dsn = upgraded
    for role in ("evalledger_auditor", "evalledger_revops"):
        with connect_as(dsn, role) as conn:
            rows = {v: conn.execute(sql.SQL("SELECT count(*) FROM evalledger.{}").format(sql.Identifier(v))).fetchone()[0]
                    for v in VIEWS}
            assert rows["cost_per_run_v1"] > 0 and rows["work_quality_history_v1"] > 0, (role, rows)
    with connect_as(dsn, "evalledger_agent") as agent, pytest.raises(errors.InsufficientPrivilege):
        agent.execute("SELECT * FROM evalledger.cost_per_run_v1")


def test_ledger_verify_passes_across_the_upgrade(upgraded, tmp_path):
    """Every row, entry and block of the release still checks against the release's digest; the code does not:
    the digest pinned the release's, and verify names each definition the migrations changed since (and nothing
    else). A digest taken after the upgrade pins the code as it is now, and everything verifies against it."""
    _, _, dsn = upgraded
    result = run_cli("ledger", "verify", "--recompute", "--digest", os.environ["EVALLEDGER_UPGRADE_DIGEST"],
                     env={"DATABASE_URL": dsn})
    lines = result.out.splitlines()
    assert result.code == 1 and all(line.startswith("code_changed: ") for line in lines[:-1]), result.out + result.err
    assert "code_changed: function evalledger.ledger_writers_v1() was added since" in result.out  # 0120's
    taken = run_cli("ledger", "digest", "--out", str(tmp_path / "after.json"), "--wait", "0", env={"DATABASE_URL": dsn})
    assert taken.code == 0, taken.out + taken.err
    result = run_cli("ledger", "verify", "--recompute", "--digest", str(tmp_path / "after.json"),
                     env={"DATABASE_URL": dsn})
    assert result.code == 0, result.out + result.err
    assert "verified" in result.out


def test_rows_journalled_after_the_upgrade_verify_beside_the_releases(upgraded):
    """The upgraded ledger's journal triggers (journal_row_v2, journal_capture_v2, journal_deleted_v2)
    write entries verify checks like the release's: rows the owner registers, a capture batch and a
    purge, after the release's digest; every row checks, and the digest still holds."""
    _, _, dsn = upgraded
    with psycopg.connect(dsn, autocommit=True) as admin:
        last = admin.execute("SELECT max(entry_id) FROM evalledger.ledger_journal").fetchone()[0]
        admin.execute("SET ROLE evalledger_owner")
        hold = admin.execute("INSERT INTO evalledger.legal_hold (target_id, reason) VALUES ('AGT-901', 'upgrade')"
                             " RETURNING hold_id").fetchone()[0]
        admin.execute("INSERT INTO evalledger.legal_hold_release (hold_id, reason) VALUES (%s, 'done')", (hold,))
        admin.execute("RESET ROLE")
        admin.execute("INSERT INTO evalledger.eval_candidates (tool_name, query, vector_enabled, expansion_applied, "
                      "latency_ms, remote, capture_key) SELECT 'search', 'after the upgrade ' || g, false, false, "
                      "g * 1.25, true, gen_random_uuid() FROM generate_series(1, 20) g")
        before = admin.execute("SELECT max(entry_id) FROM evalledger.ledger_journal").fetchone()[0]
        make_old_partition(admin, "201502")
        age_entries_after(admin, before, "12 years")
        assert purge_committed(admin)
        written = admin.execute("SELECT array_agg(DISTINCT table_name || ' ' || operation ORDER BY table_name || ' ' "
                                "|| operation) FROM evalledger.ledger_journal WHERE entry_id > %s", (last,)).fetchone()[0]
    assert written == ["eval_candidate_keys DELETE", "eval_candidate_keys INSERT", "eval_candidates INSERT",
                       "legal_hold INSERT", "legal_hold_release INSERT", "retention_purge_log INSERT"], written
    result = run_cli("ledger", "verify", "--digest", os.environ["EVALLEDGER_UPGRADE_DIGEST"], env={"DATABASE_URL": dsn})
    # The release's rows and blocks hold; only the code the migrations changed since the digest is named.
    assert all(line.startswith("code_changed: ") for line in result.out.splitlines()[:-1]), result.out + result.err
