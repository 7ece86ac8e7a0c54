"""Bench: every dashboard panel, as every reading role, at 1k and at 10k runs x 30 questions, with
EXPLAIN naming which of seed 002's six indexes (and of the panels' own, migration 0101's) each
one's plan uses.

The dashboards (web app and `evalledger report`) read each panel through its named queries
(sql/bi/queries.sql); this times those queries, as they run for a signed-in login: SET ROLE to
evalledger_auditor, evalledger_revops, and a registered reviewer's own login role. No filters
(the whole history each role may read), then a brain filter. The per-run panels read the latest
N runs through an index; the aggregates read the by-month panel tables that completion keeps
(issue 22), whose size depends on months, brains, triggers and reviewers, not on runs.
A run's rows are written together, as a run writes them (so a run's 30 question rows share a few
pages, not 30), and each brain has runs of every trigger (so the quarterly trend finds its 8 runs
among the latest, as it does in a ledger that runs quarterly).

Data, built like bench/retention_tiers.py's (the superuser, the tables' triggers off for the bulk
load only, then VACUUM (ANALYZE)): N completed brain-eval runs recorded over the last three years (a third
cold), two brains, each with every trigger, three reviewers, a catalog version per quarter, 30 question rows
each (5 stale-fixture, about 2% of them missed), the brain's 30 analyses, a harness run with 30
answers and 3 judges' drafts on each (90), the reviewer's trail (3 entries per question) with a
third of the drafts shown (half of those before scoring), a sign-off; production analyses (one per
two runs); as many takes-quality runs and half as many work-quality snapshots. The by-month
tables are filled for the loaded runs by brain_eval_by_month_add_v1 (what completion calls), and
that backfill is timed too. The panels are timed at 1,000 runs, then at 10,000 (the same 1,000
plus 9,000 more): the aim is at most 1.5x for 10x the data. For reference the same run times
most_failing_questions_v1 (the RevOps panel issue 22 measured at 10.8x) and two per-run views
read whole (stale_fixture_pass_rate_v2, cost_per_run_v1), which list every run and so grow with
them by nature.

Error bars (issue 36): the trend panel with its error bars (panel_trend, as the dashboards read it:
brain_trend_rows_v2, each run and its bounds in its trend row) against the same panel without them
(TREND_WITHOUT_BARS: v2's columns but the bounds) and against the panel as it was before it had any
(TREND_BEFORE_BARS: brain_trend_rows_v1, the runs' own rows), as each role, at both sizes, the three
timed in turn; the aim is at most 1.25x. Both the ratio of the medians and that of the fastest are
printed, with the load average: on a shared machine the other load stretches the longer query more
than its own cost does, and the fastest is what it adds least to. What completion stores (each run's
uncertainty, brain_eval_run_uncertainty, migration 0148, and its trend row, brain_eval_trend, 0164)
the load fills for its runs as completion would.

EXPLAIN: each panel query's plan as the role; a panel function with its own search_path is not
inlined by PostgreSQL, so its body is explained with the filters substituted (what its plan runs).

    .venv/bin/python bench/panels.py [--sizes 1000,10000] [--repeat 7]
"""

from __future__ import annotations

import argparse
import os
import re
import signal
import statistics
import sys
import time
from pathlib import Path

import psycopg
from psycopg import sql

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "runner"), str(ROOT)]

from tests.unguarded import clocks_unguarded  # noqa: E402
from evalledger.bi.panels import QUERIES  # noqa: E402
from evalledger.core import scratch  # noqa: E402

QUESTIONS = 30
JUDGES = ("openai:gpt-4o", "anthropic:claude-opus-4-7", "google:gemini-1.5-pro")
REVIEWERS = ("evalledger_bench_reviewer_1", "evalledger_bench_reviewer_2", "evalledger_bench_reviewer_3")
TABLES = ["brain_eval_log", "brain_eval_question_score", "brain_analysis_log", "brain_eval_harness_run",
          "brain_eval_harness_answer", "brain_eval_judge_suggestion", "brain_eval_review_entry",
          "brain_eval_suggestion_shown", "brain_eval_run_review", "eval_takes_quality_runs",
          "eval_work_quality_snapshots"]
SEED_INDEXES = {
    "brain_eval_log_brain_started_idx": "1 (brain, started_at)",
    "brain_eval_log_decision_started_idx": "2 (decision, started_at)",
    "brain_eval_log_system_prompt_hash_idx": "3 (system_prompt_hash)",
    "brain_eval_question_score_question_created_idx": "4 (question_id, created_at)",
    "brain_eval_question_score_run_idx": "5 (eval_run_id)",
    "brain_eval_question_score_stale_fixture_idx": "6 (stale fixture)",
}
# The panels' own (migration 0101): what the failed runs, the sev-2 incidents and prompt drift's
# first month read instead of the whole history.
PANEL_INDEXES = {
    "brain_eval_log_failed_started_idx": "failed runs",
    "brain_eval_question_score_stale_missed_idx": "misses by run",
    "brain_analysis_log_production_first_idx": "production first",
    "brain_eval_log_brain_first_idx": "runs first",
    "brain_analysis_log_production_recorded_idx": "production recorded",
    "brain_eval_log_brain_recorded_idx": "runs recorded",
    "brain_analysis_log_production_late_idx": "production late",
    "brain_eval_log_brain_late_idx": "runs late",
    # The trend's (migration 0164): each run's trend row newest first, and the open runs past their deadline.
    "brain_eval_trend_brain_trigger_started_idx": "trend rows",
    "brain_eval_log_open_trend_idx": "open runs",
}
# Each panel: the named queries it reads (in bi/panels.py's order).
PANELS = {
    "trend": ["panel_trend"],
    "most-failing": ["panel_most_failing"],
    "stale-fixture": ["panel_stale_runs", "panel_stale_total", "panel_stale_misses"],
    "calibration": ["panel_calibration"],
    "cost": ["panel_cost"],
    "drift": ["panel_drift"],
    "agreement": ["panel_agreement", "panel_agreement_total"],
    "takes-quality": ["panel_takes_quality"],
    "work-quality": ["panel_work_quality"],
    "failed": ["panel_failed"],
}
NOT_FOR_REVIEWERS = {"most-failing", "drift", "agreement", "takes-quality", "work-quality"}
REFERENCE = {
    "most_failing_questions_v1 (issue 22's panel)": "SELECT * FROM evalledger.most_failing_questions_v1",
    "stale_fixture_pass_rate_v2, whole (per run)": "SELECT * FROM evalledger.stale_fixture_pass_rate_v2",
    "cost_per_run_v1, whole (per run)": "SELECT * FROM evalledger.cost_per_run_v1",
}
# Queries the docs give (docs/bi.md) for the indexes no panel needs to read whole.
DOCUMENTED = {
    "runs of one prompt (index 3)": ("SELECT eval_run_id, started_at, decision FROM evalledger.brain_eval_log "
                                     "WHERE system_prompt_hash = %(hash)s ORDER BY started_at DESC", {"hash": "a" * 64}),
    "one question over time (index 4)": (QUERIES["question_history"],
                                         {"question_id": "EVAL-Q07", "brain": None, "catalog": None}),
}
# The trend panel without its error bars: panel_trend's function, every column but the intervals (what
# the panel reads of each run's trend row, less the bars) ...
TREND_COLUMNS = ("brain_under_test, recency_rank, eval_run_id, run_trigger, quarter, started_at, completed_at, model_id, "
                 "system_prompt_hash, question_catalog_version, decision, citation_rate, hallucination_rate, "
                 "staleness_recognition_rate, diagnosis_accuracy_mean, lever_mapping_correctness, "
                 "confidence_calibration_in_band, narrative_coherence_mean")
TREND_WITHOUT_BARS = (f"SELECT {TREND_COLUMNS} FROM evalledger.brain_trend_rows_v2(%(brain)s::text, %(from_month)s::date, "
                      "%(to_month)s::date, %(trigger)s::text, 8) ORDER BY brain_under_test, recency_rank")
# ... and the panel as it was before it had any (brain_trend_rows_v1, which reads the runs' own rows).
TREND_BEFORE_BARS = ("SELECT t.* FROM evalledger.brain_trend_rows_v1(%(brain)s::text, %(from_month)s::date, "
                     "%(to_month)s::date, %(trigger)s::text, 8) t ORDER BY t.brain_under_test, t.recency_rank")
SCORES = ('jsonb_build_object(\'citation_rate\', 0.9 + (n %% 10) / 100.0, \'hallucination_rate\', (n %% 5) / 100.0, '
          '\'staleness_recognition_rate\', CASE WHEN n %% 50 = 0 THEN 0.8 ELSE 1 END, \'diagnosis_accuracy_mean\', '
          '0.5 + (n %% 6) / 10.0, \'lever_mapping_correctness\', CASE WHEN n %% 2 = 0 THEN 1 END, '
          '\'confidence_calibration_in_band\', 0.7 + (n %% 4) / 10.0, \'narrative_coherence_mean\', 3 + (n %% 3) / 2.0)')


def load(admin: psycopg.Connection, first: int, last: int, setup: dict, complete: bool = True) -> float:
    """Runs first..last, with everything a run has, in one transaction; then the by-month tables
    filled for them (timed: the seconds it took). complete=False: the runs are left open (reviewed
    and signed off, for completion to decide), and nothing goes into the by-month tables."""
    with admin.transaction():
        with clocks_unguarded(admin, TABLES):
            params = {"first": first, "last": last, "complete": complete, **setup}
            admin.execute("""
                CREATE TEMP TABLE bench_runs ON COMMIT DROP AS
                SELECT n, gen_random_uuid() AS eval_run_id,
                       now() - make_interval(days => (n * 7919) %% 1095, secs => n %% 86400) AS recorded,
                       CASE WHEN n %% 2 = 0 THEN 'AGT-901' ELSE 'AGT-902' END AS brain,
                       (ARRAY['quarterly', 'on_demand', 'on_demand', 'prompt_change', 'pre_launch', 'model_promotion',
                              'quarterly', 'on_demand'])[1 + ((n / 2) * 31) %% 8]::evalledger.eval_run_trigger AS run_trigger,
                       (%(reviewers)s::uuid[])[1 + (n * 7) %% 3] AS reviewer,
                       (ARRAY['pass', 'pass_with_notes', 'pass_with_notes', 'conditional', 'fail'])[1 + (n * 13) %% 5]
                           ::evalledger.eval_decision AS decision
                  FROM generate_series(%(first)s::int, %(last)s::int) n""", params)
            admin.execute(f"""
                INSERT INTO evalledger.brain_eval_log (eval_run_id, run_trigger, brain_under_test, model_id,
                    system_prompt_hash, brain_view_contracts_hash, question_catalog_version, question_count, started_at,
                    completed_at, reviewer_user_id, reviewer_independence_verified, aggregated_scores,
                    hard_criteria_passed, soft_criteria_passed_count, decision, decision_rationale, token_cost_usd,
                    reviewer_hours_spent, created_at, rubric_id)
                SELECT r.eval_run_id, r.run_trigger, r.brain, 'claude-sonnet-4-6',
                       lpad(to_hex(extract(year FROM r.recorded)::int %% 7), 64, 'a'), repeat('b', 64),
                       'v' || to_char(r.recorded AT TIME ZONE 'UTC', 'YY') || '-' || to_char(r.recorded AT TIME ZONE 'UTC', 'YYYY"Q"Q'),
                       {QUESTIONS}, r.recorded, CASE WHEN %(complete)s THEN r.recorded + interval '1 hour' END, r.reviewer,
                       true, CASE WHEN %(complete)s THEN {SCORES} END, CASE WHEN %(complete)s THEN r.decision <> 'fail' END,
                       CASE WHEN %(complete)s THEN 3 END, CASE WHEN %(complete)s THEN r.decision END,
                       CASE WHEN %(complete)s THEN 'Bench.' END, CASE WHEN %(complete)s THEN 0.375 END,
                       CASE WHEN %(complete)s THEN 1 + (r.n %% 8) / 2.0 END, r.recorded, %(rubric)s
                  FROM bench_runs r""", params)
            admin.execute(f"""
                CREATE TEMP TABLE bench_questions ON COMMIT DROP AS
                SELECT r.*, q, 'EVAL-Q' || lpad(q::text, 2, '0') AS question_id, gen_random_uuid() AS analysis_id,
                       abs(hashtext(r.eval_run_id::text || q)) AS h
                  FROM bench_runs r CROSS JOIN generate_series(1, {QUESTIONS}) q
                 ORDER BY r.n, q""")
            admin.execute("""
                INSERT INTO evalledger.brain_analysis_log (analysis_id, brain, origin, model_id, system_prompt_hash,
                    question_id, question, output, token_cost_usd, produced_at, created_at)
                SELECT b.analysis_id, b.brain, 'eval', 'claude-sonnet-4-6', repeat('a', 64), b.question_id, 'question',
                       'answer', 0.0125, b.recorded, b.recorded
                  FROM bench_questions b""")
            admin.execute("""
                INSERT INTO evalledger.brain_analysis_log (brain, origin, model_id, system_prompt_hash, question, output,
                    token_cost_usd, produced_at, created_at)
                SELECT r.brain, 'production', 'claude-sonnet-4-6', lpad(to_hex(extract(year FROM r.recorded)::int % 5), 64, 'a'),
                       'a user''s question', 'answer', 0.0125, r.recorded + interval '2 hours', r.recorded + interval '2 hours'
                  FROM bench_runs r WHERE r.n % 2 = 0""")
            admin.execute("""
                INSERT INTO evalledger.brain_eval_question_score (eval_run_id, question_id, brain_analysis_id,
                    question_type, uses_stale_fixture, citation_rate, hallucinations_detected, total_claims,
                    staleness_correctly_recognized, diagnosis_accuracy_score, lever_mapping_violations,
                    confidence_distribution, narrative_coherence_rating, question_passed, created_at, run_created_at,
                    run_reviewer_user_id)
                SELECT b.eval_run_id, b.question_id, b.analysis_id, 'plan_diagnosis', b.q <= 5, 1, b.h % 3, 10,
                       CASE WHEN b.q <= 5 THEN b.h % 50 <> 0 END, (b.h % 3) / 2.0,
                       CASE WHEN b.brain = 'AGT-902' THEN (b.h % 7 = 0)::int END,
                       '{"high_confidence_pct": 60, "multi_source_pct": 50, "inference_pct": 30, "speculation_pct": 5}',
                       1 + b.h % 5, b.h % (b.q + 3) <> 0, b.recorded, b.recorded, l.reviewer_user_id
                  FROM bench_questions b JOIN evalledger.brain_eval_log l USING (eval_run_id)""")
            admin.execute("""
                INSERT INTO evalledger.brain_eval_harness_run (eval_run_id, brain_version_id, catalog_version, question_ids,
                    contracts, answers, created_at, run_created_at)
                SELECT r.eval_run_id, (%(versions)s::bigint[])[CASE WHEN r.brain = 'AGT-901' THEN 1 ELSE 2 END],
                       'v28-2026Q2', ARRAY(SELECT 'EVAL-Q' || lpad(g::text, 2, '0') FROM generate_series(1, 30) g),
                       '{"brain_view_contracts_hash": "c", "source": "bench", "views": [{"name": "v"}]}', 'live',
                       r.recorded, r.recorded
                  FROM bench_runs r""", params)
            admin.execute("""
                INSERT INTO evalledger.brain_eval_harness_answer (eval_run_id, question_id, analysis_id, recorded,
                    citation_rate, confidence_distribution, created_at, run_created_at)
                SELECT b.eval_run_id, b.question_id, b.analysis_id, false, 1,
                       '{"high_confidence_pct": 60, "multi_source_pct": 50, "inference_pct": 30, "speculation_pct": 5}',
                       b.recorded, b.recorded
                  FROM bench_questions b""")
            admin.execute("""
                INSERT INTO evalledger.brain_eval_judge_suggestion (eval_run_id, question_id, model, family, same_family,
                    recorded, total_claims, unsupported_claims, diagnosis_accuracy, contributes, created_at, run_created_at)
                SELECT b.eval_run_id, b.question_id, j.model, split_part(j.model, ':', 1), j.model LIKE 'anthropic:%%', false,
                       10, CASE WHEN (b.h + j.k) %% 4 = 0 THEN '["x"]'::jsonb ELSE '[]'::jsonb END,
                       ((b.h + j.k) %% 3) / 2.0, true, b.recorded, b.recorded
                  FROM bench_questions b CROSS JOIN unnest(%(judges)s::text[]) WITH ORDINALITY j(model, k)""", params)
            admin.execute("""
                INSERT INTO evalledger.brain_eval_suggestion_shown (eval_run_id, question_id, reviewer_user_id, shown_by,
                    shown_at, run_created_at)
                SELECT b.eval_run_id, b.question_id, b.reviewer, 'bench',
                       b.recorded + CASE WHEN b.h % 6 = 0 THEN interval '1 minute' ELSE interval '20 minutes' END, b.recorded
                  FROM bench_questions b WHERE b.h % 3 = 0""")
            admin.execute("""
                INSERT INTO evalledger.brain_eval_review_entry (eval_run_id, question_id, field, value, reviewer_user_id,
                    acting_role, entered_by, entered_at, suggestions_shown, run_created_at)
                SELECT b.eval_run_id, b.question_id, f.field, to_jsonb(f.value), b.reviewer, 'evalledger_reviewer', 'bench',
                       b.recorded + interval '10 minutes', b.h % 6 = 0, b.recorded
                  FROM bench_questions b
                 CROSS JOIN LATERAL (VALUES ('hallucinations_detected', (b.h % 3)::numeric), ('total_claims', 10),
                                            ('diagnosis_accuracy_score', (b.h % 3) / 2.0)) f(field, value)""")
            admin.execute("""
                INSERT INTO evalledger.brain_eval_run_review (eval_run_id, reviewer_hours_spent, reviewer_user_id, entered_by,
                    created_at, run_created_at)
                SELECT r.eval_run_id, 1 + (r.n % 8) / 2.0, r.reviewer, 'bench', r.recorded + interval '50 minutes', r.recorded
                  FROM bench_runs r""")
            admin.execute("""
                INSERT INTO evalledger.eval_takes_quality_runs (started_at, completed_at, rubric_id, target_id, corpus_source,
                    sample_limit, seed, n_takes, corpus_sha8, prompt_sha8, models_sha8, rubric_sha8, models, cycles_run,
                    verdict, overall_score, cost_usd, receipt_json, created_at, scope_sha8)
                SELECT r.recorded, r.recorded + interval '5 minutes', %(takes_rubric)s, r.brain, 'db', 12, r.n, 12,
                       substr(md5(r.n::text), 1, 8), 'aaaaaaaa', 'bbbbbbbb', CASE WHEN r.n %% 3 = 0 THEN 'cccccccc' ELSE 'dddddddd' END,
                       %(judges)s::text[], 1, CASE WHEN r.n %% 4 = 0 THEN 'fail' ELSE 'pass' END, 6 + (r.n %% 30) / 10.0, 0.01,
                       jsonb_build_object('judges', 'live', 'scores', jsonb_build_object(
                           'accuracy', jsonb_build_object('mean', 7), 'attribution', jsonb_build_object('mean', 8))),
                       r.recorded, left(encode(sha256(convert_to(jsonb_build_array('db', NULL, NULL)::text, 'UTF8')), 'hex'), 8)
                  FROM bench_runs r""", params)
            admin.execute("""
                INSERT INTO evalledger.eval_work_quality_snapshots (origin, rubric_id, kind, name, run_id, at, models,
                    completed_at, mean_scores, note, judges_cost_usd, snapshot_json, created_at)
                SELECT 'run', %(work_rubric)s, 'bot', 'target-' || (r.n %% 5), 'run-' || r.n, r.recorded, '{openai/gpt-4o}',
                       r.recorded + interval '5 minutes', jsonb_build_object('overall', 0.5 + (r.n %% 40) / 100.0),
                       'bench', 0, '{}', r.recorded
                  FROM bench_runs r WHERE r.n %% 2 = 0""", params)
        start = time.perf_counter()
        if complete:
            admin.execute("SELECT evalledger.brain_eval_by_month_add_v1(ARRAY(SELECT eval_run_id FROM bench_runs))")
        backfill = time.perf_counter() - start
        if complete:
            # What each run's completion stores (brain_eval_uncertainty_complete_v1; migration 0148 for the
            # runs before it): its uncertainty, which the trend's error bars read.
            admin.execute("""
                INSERT INTO evalledger.brain_eval_run_uncertainty (eval_run_id, uncertainty, reviewer_user_id, run_created_at)
                SELECT l.eval_run_id, coalesce(evalledger.brain_eval_uncertainty_v1(l.eval_run_id), '{}'::jsonb),
                       l.reviewer_user_id, l.created_at
                  FROM evalledger.brain_eval_log l JOIN bench_runs r USING (eval_run_id)
                 ORDER BY l.created_at, l.eval_run_id""")
            # And its trend row (brain_eval_trend_complete_v1; migration 0164 for the runs before it), which
            # the trend panel reads: the run and its error bars in one row.
            admin.execute("""
                INSERT INTO evalledger.brain_eval_trend
                SELECT t.*
                  FROM evalledger.brain_eval_log l JOIN bench_runs r USING (eval_run_id)
                  LEFT JOIN evalledger.brain_eval_run_uncertainty u ON u.eval_run_id = l.eval_run_id
                 CROSS JOIN LATERAL evalledger.brain_eval_trend_of_v1(l, u.uncertainty) t
                 ORDER BY l.created_at, l.eval_run_id""")
            # And each takes-quality run's and work-quality snapshot's (migration 0153), which their intervals read.
            admin.execute("""
                INSERT INTO evalledger.eval_takes_quality_run_uncertainty (run_id, uncertainty, run_created_at)
                SELECT t.id, coalesce(evalledger.takes_quality_uncertainty_v1(t.id), '{}'::jsonb), t.created_at
                  FROM evalledger.eval_takes_quality_runs t
                 WHERE t.completed_at IS NOT NULL
                   AND NOT EXISTS (SELECT 1 FROM evalledger.eval_takes_quality_run_uncertainty u WHERE u.run_id = t.id)
                 ORDER BY t.created_at, t.id""")
            admin.execute("""
                INSERT INTO evalledger.eval_work_quality_snapshot_uncertainty (snapshot_id, uncertainty, run_created_at)
                SELECT s.snapshot_id, coalesce(evalledger.work_quality_uncertainty_v1(s.snapshot_json), '{}'::jsonb), s.created_at
                  FROM evalledger.eval_work_quality_snapshots s
                 WHERE s.completed_at IS NOT NULL
                   AND NOT EXISTS (SELECT 1 FROM evalledger.eval_work_quality_snapshot_uncertainty u
                                    WHERE u.snapshot_id = s.snapshot_id)
                 ORDER BY s.created_at, s.snapshot_id""")
    # VACUUM as well: a ledger's history has long been vacuumed (its cold rows frozen) by the time
    # it is read, and an index-only scan counts on that; a bulk load leaves every page unvisited.
    for t in TABLES + ["brain_eval_runs_by_month", "brain_eval_questions_by_month", "brain_eval_agreement_by_month",
                       "brain_eval_run_uncertainty", "brain_eval_trend", "eval_takes_quality_run_uncertainty",
                       "eval_work_quality_snapshot_uncertainty"]:
        admin.execute(sql.SQL("VACUUM (ANALYZE) evalledger.{}").format(sql.Identifier(t)))
    return backfill


def completions(dsn: str, admin: psycopg.Connection, size: int, setup: dict, count: int = 12) -> tuple[float, float]:
    """Median milliseconds of completing a run (its decision and every trigger, the by-month one
    included), each in a session of its own as a runner's command would, and of the by-month part
    alone (brain_eval_by_month_add_v1 for an already completed run, in a session of its own, rolled
    back): what completion pays for the panels, at this much history."""
    first = 10 * size + 1  # past every size loaded later (n * 7919 stays an integer)
    whole, part = [], []
    for n in range(first, first + count):
        # One at a time: one run of a brain, prompt and catalog is open at a time (docs/guards.md, section 31).
        load(admin, n, n, setup, complete=False)
        run = admin.execute("SELECT eval_run_id FROM evalledger.brain_eval_log WHERE completed_at IS NULL").fetchone()[0]
        with psycopg.connect(dsn, autocommit=True) as conn:
            start = time.perf_counter()
            conn.execute("UPDATE evalledger.brain_eval_log SET completed_at = now() WHERE eval_run_id = %s", (run,))
            whole.append((time.perf_counter() - start) * 1000)
        with psycopg.connect(dsn) as conn:
            start = time.perf_counter()
            conn.execute("SELECT evalledger.brain_eval_by_month_add_v1(ARRAY[%s::uuid])", (run,))
            part.append((time.perf_counter() - start) * 1000)
            conn.rollback()
    return statistics.median(whole), statistics.median(part)


def act_as(admin: psycopg.Connection, role: str) -> None:
    admin.execute(sql.SQL("SET ROLE {}").format(sql.Identifier(role)))


def sample(conn: psycopg.Connection, role: str, queries: list[tuple[str, dict]]) -> float:
    """Milliseconds of running the queries once each, as role, each planned for its values (the
    dashboards never prepare them on the server)."""
    act_as(conn, role)
    try:
        start = time.perf_counter()
        for query, params in queries:
            conn.execute(query, params, prepare=False).fetchall()
        return (time.perf_counter() - start) * 1000
    finally:
        conn.execute("RESET ROLE")


def paired(small: psycopg.Connection, large: psycopg.Connection, role: str, queries: list[tuple[str, dict]],
           repeat: int) -> tuple[list[float], list[float]]:
    """The queries timed on both ledgers in turn, repeat times each after a warm-up of both: what
    the machine's other load does to one, it does to the other."""
    sample(small, role, queries)
    sample(large, role, queries)
    a, b = [], []
    for _ in range(repeat):
        a.append(sample(small, role, queries))
        b.append(sample(large, role, queries))
    return a, b


def trend_read(conn: psycopg.Connection, role: str, params: dict, query: str) -> float:
    """Milliseconds of reading one form of the trend panel as role."""
    act_as(conn, role)
    try:
        start = time.perf_counter()
        conn.execute(query, params, prepare=False).fetchall()
        return (time.perf_counter() - start) * 1000
    finally:
        conn.execute("RESET ROLE")


def error_bars(conn: psycopg.Connection, role: str, params: dict, repeat: int) -> dict[str, list[float]]:
    """The trend panel as it was before its error bars, without them and with them, each timed in turn
    repeat times after a warm-up of each."""
    forms = {"before": TREND_BEFORE_BARS, "without": TREND_WITHOUT_BARS, "with": QUERIES["panel_trend"]}
    for query in forms.values():
        trend_read(conn, role, params, query)
    times = {form: [] for form in forms}
    for _ in range(repeat):
        for form, query in forms.items():
            times[form].append(trend_read(conn, role, params, query))
    return times


_CALL = re.compile(r"evalledger\.(\w+)\(([^()]*)\)")


def plan_of(admin: psycopg.Connection, role: str, query: str, params: dict) -> str:
    """The plan of a query as role; a function with its own search_path (not inlined) has its body
    explained too, the call's arguments substituted for its parameters."""
    statement = psycopg.ClientCursor(admin).mogrify(query, params)
    act_as(admin, role)
    try:
        lines = [r[0] for r in admin.execute("EXPLAIN " + statement)]
        for name, args in _CALL.findall(statement):
            found = admin.execute("SELECT prosrc, proargnames FROM pg_proc WHERE proname = %s "
                                  "AND pronamespace = 'evalledger'::regnamespace AND proconfig IS NOT NULL",
                                  (name,)).fetchone()
            if not found or not found[1]:
                continue
            body = found[0]
            for argname, value in zip(found[1], [a.strip() for a in args.split(",")]):
                body = re.sub(rf"\b{argname}\b", value, body)
            lines += [r[0] for r in admin.execute("EXPLAIN " + body)]
    finally:
        admin.execute("RESET ROLE")
    return "\n".join(lines)


def indexes_in(plan: str) -> list[str]:
    return [label for name, label in {**SEED_INDEXES, **PANEL_INDEXES}.items() if re.search(rf"\b{name}\b", plan)]


def main() -> None:
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))  # a stopped bench still stops its server
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000", help="the two run counts to compare, smaller first")
    parser.add_argument("--repeat", type=int, default=15, help="timed reads per panel, role and size")
    parser.add_argument("--error-bars-only", action="store_true",
                        help="time only the trend panel with and without its error bars (no completions, no other panel)")
    args = parser.parse_args()
    small_n, large_n = (int(s) for s in args.sizes.split(","))
    roles = {"auditor": "evalledger_auditor", "revops": "evalledger_revops", "reviewer": REVIEWERS[0]}
    filters = {"all": {"brain": None, "from_month": None, "to_month": None, "trigger": None},
               "AGT-902": {"brain": "AGT-902", "from_month": None, "to_month": None, "trigger": None}}

    with scratch.server() as server_url, \
            scratch.migrated_database(server_url, "evalledger_bench_panels_small") as small_dsn, \
            scratch.migrated_database(server_url, "evalledger_bench_panels_large") as large_dsn, \
            psycopg.connect(small_dsn, autocommit=True) as small, psycopg.connect(large_dsn, autocommit=True) as large:
        version = small.execute("SHOW server_version").fetchone()[0]
        backfills, costs, sizes = {}, {}, {}
        for n, dsn, conn in ((small_n, small_dsn, small), (large_n, large_dsn, large)):
            setup = prepare(conn)
            start = time.perf_counter()
            backfills[n] = load(conn, 1, n, setup)
            sizes[n] = {t: conn.execute(sql.SQL("SELECT count(*) FROM evalledger.{}").format(sql.Identifier(t))).fetchone()[0]
                        for t in ("brain_eval_question_score", "brain_eval_judge_suggestion", "brain_eval_runs_by_month",
                                  "brain_eval_questions_by_month", "brain_eval_agreement_by_month")}
            print(f"  {n} runs loaded in {time.perf_counter() - start:.0f} s: " +
                  ", ".join(f"{t} {c}" for t, c in sizes[n].items()), flush=True)
            if not args.error_bars_only:
                costs[n] = completions(dsn, conn, n, setup)
        results, plans = {}, {}
        for role, name in roles.items() if not args.error_bars_only else ():
            for fname, params in filters.items():
                for panel, names in PANELS.items():
                    if role == "reviewer" and panel in NOT_FOR_REVIEWERS:
                        continue
                    results[(role, fname, panel)] = paired(small, large, name, [(QUERIES[q], params) for q in names],
                                                           args.repeat)
            for label, query in REFERENCE.items():
                if role != "reviewer" or "v1" not in label:
                    results[(role, "all", label)] = paired(small, large, name, [(query, {})], max(3, args.repeat // 3))
            if role == "auditor":
                for label, (query, params) in DOCUMENTED.items():
                    results[(role, "all", label)] = paired(small, large, name, [(query, params)], args.repeat)
            for panel, names in PANELS.items():
                if role == "reviewer" and panel in NOT_FOR_REVIEWERS:
                    continue
                plans[(role, panel)] = sorted({i for q in names for i in indexes_in(
                    plan_of(large, name, QUERIES[q], filters["all"]))})
        for label, (query, params) in DOCUMENTED.items() if not args.error_bars_only else ():
            plans[("auditor", label)] = indexes_in(plan_of(large, roles["auditor"], query, params))
        loads = [f"{os.getloadavg()[0]:.1f}"]
        bars = {(role, n): error_bars(conn, name, filters["all"], args.repeat)
                for role, name in roles.items() for n, conn in ((small_n, small), (large_n, large))}

    if not args.error_bars_only:
        print(f"\npanels: PostgreSQL {version}; each panel's queries as the dashboards run them, timed on a "
              f"{small_n}-run and a {large_n}-run ledger in turn, {args.repeat} times each; ms: fastest and median")
        worst = 0.0
        for role in roles:
            print(f"\nas {role}")
            print(f"  {'panel':<44}{'filter':>8}{'fastest':>10}{'':>9}{'ratio':>7}{'median':>10}{'':>9}{'ratio':>7}  "
                  f"indexes in the plan (seed 002's numbered)")
            print(f"  {'':<44}{'':>8}{small_n:>10}{large_n:>9}{'':>7}{small_n:>10}{large_n:>9}")
            for (r, fname, panel), (a, b) in results.items():
                if r != role:
                    continue
                fast = min(b) / min(a)
                middle = statistics.median(b) / statistics.median(a)
                if panel in PANELS:
                    worst = max(worst, fast)
                used = ", ".join(plans.get((r, panel), [])) if fname == "all" else ""
                print(f"  {panel:<44}{fname:>8}{min(a):>10.2f}{min(b):>9.2f}{fast:>7.2f}"
                      f"{statistics.median(a):>10.2f}{statistics.median(b):>9.2f}{middle:>7.2f}  {used}")
        print(f"\nworst panel ratio (fastest of {args.repeat}) for {large_n / small_n:.0f}x the data: {worst:.2f} "
              f"(aim: at most 1.5)")
    print(f"\nthe trend panel with its error bars against the same panel without them, and against the panel as it "
          f"was before it had any (brain_trend_rows_v1, the runs' own rows) (PostgreSQL {version}), {args.repeat} times "
          f"each in turn; ms: the median of each form, then the ratios with/without and with/before of the medians and "
          f"of the fastest (what the machine's other load adds least to); aim: at most 1.25; load average {loads[0]} "
          f"at the start of the timing, {os.getloadavg()[0]:.1f} at its end")
    print(f"  {'':<20}{'before':>10}{'without':>10}{'with':>10}{'with/without':>14}{'with/before':>13}"
          f"{'fastest w/wo':>14}{'fastest w/b':>13}")
    worst = {"without": 0.0, "before": 0.0, "fastest without": 0.0, "fastest before": 0.0}
    for (role, n), times in bars.items():
        middle = {form: statistics.median(t) for form, t in times.items()}
        fastest = {form: min(t) for form, t in times.items()}
        ratios = {"without": middle["with"] / middle["without"], "before": middle["with"] / middle["before"],
                  "fastest without": fastest["with"] / fastest["without"],
                  "fastest before": fastest["with"] / fastest["before"]}
        worst = {k: max(worst[k], ratios[k]) for k in worst}
        print(f"  as {role:<9}{n:>6} runs{middle['before']:>10.2f}{middle['without']:>10.2f}{middle['with']:>10.2f}"
              f"{ratios['without']:>14.2f}{ratios['before']:>13.2f}{ratios['fastest without']:>14.2f}"
              f"{ratios['fastest before']:>13.2f}")
    print(f"worst error-bar ratio: with/without {worst['without']:.2f} of the medians, {worst['fastest without']:.2f} of "
          f"the fastest; with/before {worst['before']:.2f} of the medians, {worst['fastest before']:.2f} of the fastest "
          f"(aim: at most 1.25)")
    print("by-month backfill of every loaded run at once: " +
          ", ".join(f"{n} runs {backfills[n]:.1f} s" for n in (small_n, large_n)))
    if costs:
        print("completing one run, each in a session of its own (median ms): " + "; ".join(
            f"with {n} runs of history: the whole completion {costs[n][0]:.1f}, of which the by-month tables "
            f"{costs[n][1]:.1f}" for n in (small_n, large_n)))


def prepare(admin: psycopg.Connection) -> dict:
    """Reviewers (login roles of their own), the two brains' versions, the demo catalog, rubric ids."""
    from evalledger.suites.brain_eval import brains, catalog
    from evalledger.suites.brain_eval.store import add_reviewer

    reviewers = []
    for role in REVIEWERS:
        admin.execute(sql.SQL("DO $$ BEGIN IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = {}) THEN "
                              "CREATE ROLE {} LOGIN; END IF; END $$").format(sql.Literal(role), sql.Identifier(role)))
        admin.execute(sql.SQL("GRANT evalledger_reviewer TO {}").format(sql.Identifier(role)))
        reviewers.append(add_reviewer(admin, role, role.rsplit("_", 1)[-1]))
    catalog.load(admin, catalog.check_file(catalog.demo_catalog_path()), catalog.demo_catalog_path().name)
    versions = []
    for brain in ("AGT-901", "AGT-902"):
        brains.add(admin, brain, "anthropic:claude-sonnet-4-6", f"The bench brain {brain}.\n")
        versions.append(admin.execute("SELECT max(brain_version_id) FROM evalledger.brain_version WHERE target_id = %s",
                                      (brain,)).fetchone()[0])
    rubric = {suite: admin.execute("SELECT rubric_id FROM evalledger.rubric WHERE suite = %s ORDER BY rubric_id LIMIT 1",
                                   (suite,)).fetchone()[0] for suite in ("brain-eval", "takes-quality", "work-quality")}
    return {"reviewers": reviewers, "versions": versions, "judges": list(JUDGES), "rubric": rubric["brain-eval"],
            "takes_rubric": rubric["takes-quality"], "work_rubric": rubric["work-quality"]}


if __name__ == "__main__":
    main()
