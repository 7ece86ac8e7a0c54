"""Bench: ledger write throughput through every guard and trigger, against guard-free copies.

Two paths write the same rows in the same run, on the same server, as the same role
(SET ROLE evalledger_runner), with the same statements shape and the same client calls
(one INSERT for the run, then executemany -- psycopg's pipeline mode -- for its question rows,
then COMMIT; afterwards one UPDATE + COMMIT completing the run):

- guarded:  the evalledger tables, with row-level security, the admission, append-only and
            question-write triggers, and the decision trigger that computes aggregates, criteria,
            decision and rationale when completed_at is set;
- baseline: bench.* copies made with CREATE TABLE ... (LIKE evalledger.x INCLUDING DEFAULTS
            INCLUDING CONSTRAINTS INCLUDING INDEXES) plus the same foreign keys, and no triggers,
            no row-level security. What the triggers compute, the baseline supplies as literals
            (question_passed, reviewer_independence_verified, rubric_id, and on completion the
            aggregates, criteria, decision, rationale and cost).

Runs alternate guarded / baseline so both see the same table sizes, caches and checkpoints.
Figures:
  question rows/s  question score rows / seconds spent writing runs (run INSERT + question
                   executemany + COMMIT, summed over runs)
  verdict rows/s   (question score rows + run rows) / the same seconds
  completions/s    runs completed / seconds spent completing (UPDATE + COMMIT)
  ratio            guarded / baseline (1.0 = the guards cost nothing)

It starts its own database: DATABASE_URL's server when set, else a throwaway embedded server
under a temporary EVALLEDGER_HOME (stopped and removed at the end).

    .venv/bin/python bench/ledger_writes.py [--runs 200] [--questions 30] [--synchronous-commit on|off]
"""

from __future__ import annotations

import argparse
import sys
import time
import uuid
from pathlib import Path

import psycopg
from psycopg.types.json import Jsonb

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "runner"))

from evalledger.core import scratch  # noqa: E402

SHA_A = "a" * 64
SHA_B = "b" * 64
IN_BAND = {"high_confidence_pct": 60, "multi_source_pct": 50, "inference_pct": 30, "speculation_pct": 5}
WARMUP_RUNS = 5

RUN_COLUMNS = ("eval_run_id, run_trigger, brain_under_test, model_id, system_prompt_hash, "
               "brain_view_contracts_hash, question_catalog_version, question_count, started_at, "
               "reviewer_user_id, rubric_id")
RUN_VALUES = ("%(eval_run_id)s, %(run_trigger)s, %(brain_under_test)s, %(model_id)s, %(system_prompt_hash)s, "
              "%(brain_view_contracts_hash)s, %(question_catalog_version)s, %(question_count)s, now(), "
              "%(reviewer_user_id)s, %(rubric_id)s")
QUESTION_COLUMNS = ("eval_run_id, question_id, brain_analysis_id, question_type, uses_stale_fixture, "
                    "citation_rate, hallucinations_detected, total_claims, staleness_correctly_recognized, "
                    "diagnosis_accuracy_score, lever_mapping_violations, confidence_distribution, "
                    "narrative_coherence_rating, reviewer_comments")
QUESTION_VALUES = ("%(eval_run_id)s, %(question_id)s, %(brain_analysis_id)s, %(question_type)s, "
                   "%(uses_stale_fixture)s, %(citation_rate)s, %(hallucinations_detected)s, %(total_claims)s, "
                   "%(staleness_correctly_recognized)s, %(diagnosis_accuracy_score)s, "
                   "%(lever_mapping_violations)s, %(confidence_distribution)s, "
                   "%(narrative_coherence_rating)s, %(reviewer_comments)s")

GUARDED = {
    "run": f"INSERT INTO evalledger.brain_eval_log ({RUN_COLUMNS}) VALUES ({RUN_VALUES})",
    "question": f"INSERT INTO evalledger.brain_eval_question_score ({QUESTION_COLUMNS}) VALUES ({QUESTION_VALUES})",
    # The decision trigger computes everything else.
    "complete": "UPDATE evalledger.brain_eval_log SET completed_at = now() "
                "WHERE eval_run_id = %(eval_run_id)s AND completed_at IS NULL",
}
BASELINE = {
    "run": f"INSERT INTO bench.brain_eval_log ({RUN_COLUMNS}, reviewer_independence_verified) "
           f"VALUES ({RUN_VALUES}, true)",
    "question": f"INSERT INTO bench.brain_eval_question_score ({QUESTION_COLUMNS}, question_passed) "
                f"VALUES ({QUESTION_VALUES}, true)",
    # The same columns the decision trigger sets, supplied as the values a clean run gets.
    "complete": "UPDATE bench.brain_eval_log SET completed_at = now(), aggregated_scores = %(scores)s, "
                "hard_criteria_passed = true, soft_criteria_passed_count = 4, decision = 'pass', "
                "decision_rationale = %(rationale)s, token_cost_usd = %(cost)s "
                "WHERE eval_run_id = %(eval_run_id)s AND completed_at IS NULL",
}
SCORES = {"citation_rate": 1, "hallucination_rate": 0, "staleness_recognition_rate": 1,
          "diagnosis_accuracy_mean": 1, "lever_mapping_correctness": None,
          "confidence_calibration_in_band": 1, "narrative_coherence_mean": 5}
RATIONALE = "Pass: all hard criteria passed; all 4 soft criteria within threshold."

COPIES = """
CREATE SCHEMA bench;
CREATE TABLE bench.brain_eval_log
    (LIKE evalledger.brain_eval_log INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING INDEXES);
CREATE TABLE bench.brain_eval_question_score
    (LIKE evalledger.brain_eval_question_score INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING INDEXES);
-- LIKE copies no foreign keys; the guarded tables check theirs, so the copies do too.
ALTER TABLE bench.brain_eval_log
    ADD FOREIGN KEY (brain_under_test) REFERENCES evalledger.target (target_id),
    ADD FOREIGN KEY (reviewer_user_id) REFERENCES evalledger.reviewer (reviewer_user_id),
    ADD FOREIGN KEY (rubric_id) REFERENCES evalledger.rubric (rubric_id);
ALTER TABLE bench.brain_eval_question_score
    ADD FOREIGN KEY (eval_run_id) REFERENCES bench.brain_eval_log (eval_run_id),
    ADD FOREIGN KEY (brain_analysis_id) REFERENCES evalledger.brain_analysis_log (analysis_id);
GRANT USAGE ON SCHEMA bench TO evalledger_runner;
GRANT SELECT, INSERT, UPDATE ON bench.brain_eval_log, bench.brain_eval_question_score TO evalledger_runner;
"""


def question_rows(run_id: uuid.UUID, analyses: list[uuid.UUID]) -> list[dict]:
    """A clean run's question rows (the first five on stale fixtures, recognised)."""
    rows = []
    for number, analysis_id in enumerate(analyses, start=1):
        stale = number <= 5
        rows.append({
            "eval_run_id": run_id, "question_id": f"EVAL-Q{number:02d}", "brain_analysis_id": analysis_id,
            "question_type": "plan_diagnosis", "uses_stale_fixture": stale, "citation_rate": 1,
            "hallucinations_detected": 0, "total_claims": 10,
            "staleness_correctly_recognized": True if stale else None, "diagnosis_accuracy_score": 1.0,
            "lever_mapping_violations": None, "confidence_distribution": Jsonb(IN_BAND),
            "narrative_coherence_rating": 5, "reviewer_comments": None,
        })
    return rows


class WritePath:
    """One write path: its connection, statements and accumulated timings."""

    def __init__(self, name: str, dsn: str, statements: dict, rubric_id, reviewer_id, sync_commit: str):
        self.name = name
        self.statements = statements
        self.rubric_id = rubric_id
        self.reviewer_id = reviewer_id
        self.conn = psycopg.connect(dsn)
        self.conn.execute("SET ROLE evalledger_runner")
        self.conn.execute(f"SET synchronous_commit = {sync_commit}")
        self.conn.commit()
        self.write_s = 0.0
        self.complete_s = 0.0
        self.runs = 0
        self.questions = 0

    def one_run(self, analyses: list[uuid.UUID], count: bool) -> None:
        run_id = uuid.uuid4()
        run = {"eval_run_id": run_id, "run_trigger": "quarterly", "brain_under_test": "AGT-901",
               "model_id": "claude-sonnet-4-6", "system_prompt_hash": SHA_A, "brain_view_contracts_hash": SHA_B,
               "question_catalog_version": "v28-2026Q2", "question_count": len(analyses),
               "reviewer_user_id": self.reviewer_id, "rubric_id": self.rubric_id}
        questions = question_rows(run_id, analyses)
        completion = {"eval_run_id": run_id, "scores": Jsonb(SCORES), "rationale": RATIONALE,
                      "cost": round(0.0125 * len(analyses), 4)}

        t0 = time.perf_counter()
        with self.conn.cursor() as cur:
            cur.execute(self.statements["run"], run)
            cur.executemany(self.statements["question"], questions)
        self.conn.commit()
        t1 = time.perf_counter()
        with self.conn.cursor() as cur:
            cur.execute(self.statements["complete"], completion)
            if cur.rowcount != 1:
                raise SystemExit(f"{self.name}: completion updated {cur.rowcount} rows")
        self.conn.commit()
        t2 = time.perf_counter()
        if count:
            self.write_s += t1 - t0
            self.complete_s += t2 - t1
            self.runs += 1
            self.questions += len(questions)



def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200, help="runs written on each path")
    parser.add_argument("--questions", type=int, default=30, help="question rows per run")
    parser.add_argument("--synchronous-commit", choices=["on", "off"], default="on",
                        help="off takes the disk flush out of each commit, which shows the guards' CPU cost more sharply")
    args = parser.parse_args()

    t_start = time.perf_counter()
    paths: list[WritePath] = []
    with scratch.server() as server_url, scratch.migrated_database(server_url, "evalledger_bench") as dsn:
        try:
            total_runs = 2 * (args.runs + WARMUP_RUNS)
            with psycopg.connect(dsn, autocommit=True) as admin:
                admin.execute(COPIES)
                reviewer_id = admin.execute(
                    "INSERT INTO evalledger.reviewer (reviewer_user_id, role_name, display_name) "
                    "VALUES (gen_random_uuid(), 'evalledger_bench_reviewer', 'bench') RETURNING reviewer_user_id"
                ).fetchone()[0]
                rubric_id = admin.execute(
                    "SELECT rubric_id FROM evalledger.rubric WHERE suite = 'brain-eval' ORDER BY rubric_id DESC LIMIT 1"
                ).fetchone()[0]
                # The brain analyses the question rows point at: written before the clock starts.
                analyses = [r[0] for r in admin.execute(
                    "INSERT INTO evalledger.brain_analysis_log (brain, model_id, system_prompt_hash, question, output, "
                    "token_cost_usd) SELECT 'AGT-901', 'claude-sonnet-4-6', %s, 'q ' || n, 'a ' || n, 0.0125 "
                    "FROM generate_series(1, %s) n RETURNING analysis_id",
                    (SHA_A, total_runs * args.questions))]
                version = admin.execute("SHOW server_version").fetchone()[0]

            # The guarded path lets the admission trigger pick the rubric, as the runner does.
            guarded = WritePath("guarded", dsn, GUARDED, None, reviewer_id, args.synchronous_commit)
            baseline = WritePath("baseline", dsn, BASELINE, rubric_id, reviewer_id, args.synchronous_commit)
            paths = [guarded, baseline]
            chunks = iter(analyses[i:i + args.questions] for i in range(0, len(analyses), args.questions))
            for n in range(args.runs + WARMUP_RUNS):
                # Alternate which path goes first so neither always meets the other's dirty pages.
                for path in (paths if n % 2 == 0 else paths[::-1]):
                    path.one_run(next(chunks), count=n >= WARMUP_RUNS)

            with psycopg.connect(dsn, autocommit=True) as check:
                decided = check.execute("SELECT decision::text, count(*) FROM evalledger.brain_eval_log "
                                        "GROUP BY 1 ORDER BY 1").fetchall()

            def rate(count: int, seconds: float) -> float:
                return count / seconds if seconds else float("nan")

            print(f"ledger writes: PostgreSQL {version}; {args.runs} runs x {args.questions} question rows on each path "
                  f"(+{WARMUP_RUNS} warm-up runs each, not counted); synchronous_commit={args.synchronous_commit}")
            print("  guarded  = evalledger tables as evalledger_runner: RLS + every trigger")
            print("  baseline = bench.* LIKE-copies (defaults, CHECKs, indexes, same foreign keys), no triggers, no RLS")
            print(f"  guarded runs decided: {', '.join(f'{d}={c}' for d, c in decided)}")
            print(f"{'':34}{'guarded':>12}{'baseline':>12}{'ratio':>8}")
            figures = [
                ("question rows/s (score rows)", guarded.questions, baseline.questions, "write_s"),
                ("verdict rows/s (score + run rows)", guarded.questions + guarded.runs,
                 baseline.questions + baseline.runs, "write_s"),
                ("completions/s (decision trigger)", guarded.runs, baseline.runs, "complete_s"),
            ]
            for label, g_count, b_count, clock in figures:
                g, b = rate(g_count, getattr(guarded, clock)), rate(b_count, getattr(baseline, clock))
                print(f"{label:34}{g:>12.0f}{b:>12.0f}{g / b:>8.2f}")
            g_all = (guarded.questions + guarded.runs) / (guarded.write_s + guarded.complete_s)
            b_all = (baseline.questions + baseline.runs) / (baseline.write_s + baseline.complete_s)
            print(f"{'verdict rows/s incl. completion':34}{g_all:>12.0f}{b_all:>12.0f}{g_all / b_all:>8.2f}")
            print(f"  per run: write {guarded.write_s / guarded.runs * 1000:.2f} ms guarded vs "
                  f"{baseline.write_s / baseline.runs * 1000:.2f} ms baseline; completion "
                  f"{guarded.complete_s / guarded.runs * 1000:.2f} ms vs {baseline.complete_s / baseline.runs * 1000:.2f} ms")
            print(f"  wall time {time.perf_counter() - t_start:.1f} s (including server start and migration)")
        finally:
            for path in paths:
                path.conn.close()


if __name__ == "__main__":
    main()
