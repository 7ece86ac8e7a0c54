"""Bench: the RevOps "most failing questions" panel under the tier policies, old and new.

Seed 002's RevOps role reads the hot tier only (24 months). Its policy on question rows used to
be an EXISTS lookup of the run (the run's own policy decides), which PostgreSQL runs as a
subplan for every question row; migration 0004 gives each question row its run's recording time
(run_created_at) and the policy is a plain comparison of that column. Both are measured in the
same run, on the same data, as evalledger_revops reading most_failing_questions_v1:

- new:  the policies as migrated (run_created_at >= now() - hot_tier_v1());
- old:  brain_eval_question_score_revops put back to the EXISTS form inside a transaction that
        is rolled back (ALTER POLICY as the superuser; nothing else differs).

Data: N completed runs x 30 question rows (and their analyses), recorded over the last three
years (so about a third is cold), loaded in bulk by the superuser with the tables' triggers
switched off for the load only (the DDL guard too, inside that transaction); then ANALYZE.
The panel is timed at 1,000 runs, then at 10,000 (the same 1,000 plus 9,000 more): 10x the data
should cost about 10x, not the 26x the issue measured with the EXISTS policy.

    .venv/bin/python bench/retention_tiers.py [--sizes 1000,10000] [--repeat 7]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import psycopg
from psycopg import sql

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "runner"), str(ROOT)]

from tests.unguarded import clocks_unguarded  # noqa: E402
from evalledger.core import scratch  # noqa: E402

QUESTIONS = 30
TABLES = ["brain_eval_log", "brain_eval_question_score", "brain_analysis_log"]
PANEL = "SELECT * FROM evalledger.most_failing_questions_v1"
OLD_POLICY = ("ALTER POLICY brain_eval_question_score_revops ON evalledger.brain_eval_question_score "
              "USING (EXISTS (SELECT 1 FROM evalledger.brain_eval_log l "
              "WHERE l.eval_run_id = brain_eval_question_score.eval_run_id))")
SCORES = ('{"citation_rate": 1, "hallucination_rate": 0, "staleness_recognition_rate": 1, '
          '"diagnosis_accuracy_mean": 1, "lever_mapping_correctness": null, '
          '"confidence_calibration_in_band": 1, "narrative_coherence_mean": 5}')
IN_BAND = '{"high_confidence_pct": 60, "multi_source_pct": 50, "inference_pct": 30, "speculation_pct": 5}'


def load(admin: psycopg.Connection, first: int, last: int, reviewer_id, rubric_id) -> None:
    """Runs first..last (numbers), each with 30 analyses and question rows, in one transaction."""
    with admin.transaction(), clocks_unguarded(admin, TABLES):
        admin.execute("""
            CREATE TEMP TABLE bench_runs ON COMMIT DROP AS
            SELECT n, gen_random_uuid() AS eval_run_id,
                   now() - make_interval(days => (n * 7919) %% 1095, secs => n %% 86400) AS recorded
              FROM generate_series(%(first)s::int, %(last)s::int) n""", {"first": first, "last": last})
        admin.execute(f"""
            INSERT INTO evalledger.brain_eval_log (eval_run_id, run_trigger, brain_under_test, model_id,
                system_prompt_hash, brain_view_contracts_hash, question_catalog_version, question_count, started_at,
                completed_at, reviewer_user_id, reviewer_independence_verified, aggregated_scores,
                hard_criteria_passed, soft_criteria_passed_count, decision, decision_rationale, token_cost_usd,
                created_at, rubric_id)
            SELECT r.eval_run_id, 'quarterly', 'AGT-901', 'claude-sonnet-4-6', repeat('a', 64), repeat('b', 64),
                   'v28-2026Q2', {QUESTIONS}, r.recorded, r.recorded + interval '1 hour', %(reviewer)s, true,
                   %(scores)s::jsonb, true, 4, 'pass', 'Pass: bench.', 0.375, r.recorded, %(rubric)s
              FROM bench_runs r""", {"reviewer": reviewer_id, "scores": SCORES, "rubric": rubric_id})
        admin.execute(f"""
            CREATE TEMP TABLE bench_questions ON COMMIT DROP AS
            SELECT r.eval_run_id, r.recorded, q, gen_random_uuid() AS analysis_id
              FROM bench_runs r CROSS JOIN generate_series(1, {QUESTIONS}) q""")
        admin.execute("""
            INSERT INTO evalledger.brain_analysis_log (analysis_id, brain, origin, model_id, system_prompt_hash,
                question_id, question, output, token_cost_usd, produced_at, created_at)
            SELECT b.analysis_id, 'AGT-901', 'eval', 'claude-sonnet-4-6', repeat('a', 64),
                   'EVAL-Q' || lpad(b.q::text, 2, '0'), 'question', 'answer', 0.0125, b.recorded, b.recorded
              FROM bench_questions b""")
        admin.execute(f"""
            INSERT INTO evalledger.brain_eval_question_score (eval_run_id, question_id, brain_analysis_id,
                question_type, uses_stale_fixture, citation_rate, hallucinations_detected, total_claims,
                staleness_correctly_recognized, diagnosis_accuracy_score, lever_mapping_violations,
                confidence_distribution, narrative_coherence_rating, question_passed, created_at, run_created_at,
                run_reviewer_user_id)
            SELECT b.eval_run_id, 'EVAL-Q' || lpad(b.q::text, 2, '0'), b.analysis_id, 'plan_diagnosis', b.q <= 5, 1,
                   0, 10, CASE WHEN b.q <= 5 THEN true END, 1.0, NULL, '{IN_BAND}'::jsonb, 5,
                   abs(hashtext(b.eval_run_id::text || b.q)) % (b.q + 3) <> 0, b.recorded, b.recorded, l.reviewer_user_id
              FROM bench_questions b JOIN evalledger.brain_eval_log l USING (eval_run_id)""")
    for t in TABLES:
        admin.execute(sql.SQL("ANALYZE evalledger.{}").format(sql.Identifier(t)))


def timed(conn: psycopg.Connection, repeat: int) -> tuple[float, int]:
    """Median milliseconds of the panel as RevOps (after one warm-up read), and its row count."""
    rows = len(conn.execute(PANEL).fetchall())
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        conn.execute(PANEL).fetchall()
        samples.append((time.perf_counter() - start) * 1000)
    return statistics.median(samples), rows


def measure(admin: psycopg.Connection, repeat: int) -> dict[str, float]:
    """The panel's median ms as RevOps under the new policy, then under the old one (rolled back)."""
    found = {}
    with admin.transaction():
        admin.execute("SET LOCAL ROLE evalledger_revops")
        found["new"], _ = timed(admin, repeat)
        admin.execute("RESET ROLE")
        admin.execute(OLD_POLICY)
        admin.execute("SET LOCAL ROLE evalledger_revops")
        found["old"], _ = timed(admin, repeat)
        admin.execute("RESET ROLE")
        raise psycopg.Rollback()
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000", help="run counts to measure at, ascending")
    parser.add_argument("--repeat", type=int, default=7, help="timed reads per policy and size (median)")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]

    with scratch.server() as server_url, scratch.migrated_database(server_url, "evalledger_bench") as dsn:
        with psycopg.connect(dsn, autocommit=True) as admin:
            version = admin.execute("SHOW server_version").fetchone()[0]
            reviewer_id = admin.execute(
                "INSERT INTO evalledger.reviewer (reviewer_user_id, role_name, display_name) "
                "VALUES (gen_random_uuid(), 'evalledger_bench_reviewer', 'bench') RETURNING reviewer_user_id"
            ).fetchone()[0]
            rubric_id = admin.execute("SELECT rubric_id FROM evalledger.rubric WHERE suite = 'brain-eval' "
                                      "ORDER BY rubric_id LIMIT 1").fetchone()[0]
            results, loaded = {}, 0
            for size in sizes:
                load(admin, loaded + 1, size, reviewer_id, rubric_id)
                loaded = size
                results[size] = measure(admin, args.repeat)
                hot = admin.execute("SELECT count(*) FROM evalledger.brain_eval_question_score "
                                    "WHERE run_created_at >= now() - evalledger.hot_tier_v1()").fetchone()[0]
                print(f"  {size} runs loaded ({size * QUESTIONS} question rows, {hot} in the hot tier)", flush=True)

    print(f"retention tiers: PostgreSQL {version}; most_failing_questions_v1 as evalledger_revops, "
          f"median of {args.repeat} reads")
    print(f"{'runs':>8}{'old EXISTS ms':>16}{'new column ms':>16}{'old/new':>10}")
    for size in sizes:
        r = results[size]
        print(f"{size:>8}{r['old']:>16.1f}{r['new']:>16.1f}{r['old'] / r['new']:>10.1f}")
    if len(sizes) > 1:
        small, large = results[sizes[0]], results[sizes[-1]]
        factor = sizes[-1] / sizes[0]
        print(f"growth for {factor:.0f}x the data: old {large['old'] / small['old']:.1f}x, "
              f"new {large['new'] / small['new']:.1f}x")


if __name__ == "__main__":
    main()
