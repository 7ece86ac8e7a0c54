"""Bench: a brain-eval run's whole write lifecycle through every guard and trigger, against guard-free copies.

Two paths write the same rows in the same run, on the same server, with the same statements and
the same client calls, each on two sessions: the runner's (SET ROLE evalledger_runner) and the
run's reviewer's (SET ROLE to a login role in evalledger_reviewer, registered in
evalledger.reviewer). One run's lifecycle, as the ledger's write model has it:

  write     runner:   executemany the run's analyses (one eval answer per question), INSERT the
                      run, executemany its question rows without the reviewer's fields, COMMIT
  review    reviewer: executemany one UPDATE per question row entering the reviewer's fields,
                      INSERT the sign-off (brain_eval_run_review: hours, notes), COMMIT
  complete  runner:   UPDATE completed_at, COMMIT

- guarded:  the evalledger tables, with row-level security and every trigger: the analysis tier
            clock, the run's admission (rubric, registered prompt, reviewer independence), the
            question-write trigger (refuses supplied reviewer fields; the analysis must be this
            run's brain/model/prompt answering this question; the catalog's type and stale flag;
            question_passed), the reviewer trail (AFTER UPDATE: one trail row per changed field),
            the sign-off admission, and the completion guard and decision trigger (whole-run
            checks, aggregates, criteria, decision, rationale, cost, hours and notes);
- baseline: bench.* copies made with CREATE TABLE ... (LIKE evalledger.x INCLUDING DEFAULTS
            INCLUDING CONSTRAINTS INCLUDING INDEXES) plus the same foreign keys, no triggers and no
            row-level security. What the triggers compute, the baseline supplies as literals
            (rubric_id, reviewer_independence_verified, run_created_at, question_passed, the
            sign-off's reviewer and entered_by, and on completion the aggregates, criteria,
            decision, rationale, cost, hours and notes). The reviewer trail has no baseline
            counterpart: it is part of what the guards cost.

The run's catalog (the demo catalog, v28-2026Q2) is loaded, so the catalog checks at insert and
completion (every stale-fixture question present) run too. Runs alternate which path goes first so
both see the same table sizes, caches and checkpoints. Figures (no assertions):
  question rows/s     question rows / seconds in the write step (analyses + run + rows + COMMIT)
  reviewed rows/s     question rows / seconds in the review step (UPDATEs + sign-off + COMMIT)
  completions/s       runs / seconds completing (UPDATE + COMMIT)
  lifecycle runs/s    runs / seconds in all three steps
  ratio               guarded / baseline (1.0 = the guards cost nothing)
With --functions, the guarded trigger functions' own time per run (track_functions = all).

It starts its own database: DATABASE_URL's server when set, else a throwaway embedded server
under a temporary EVALLEDGER_HOME (stopped and removed at the end).

    .venv/bin/python bench/ledger_writes.py [--runs 200] [--synchronous-commit on|off] [--functions]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
import uuid
from pathlib import Path

import psycopg
from psycopg import sql
from psycopg.types.json import Jsonb

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "runner"))

from evalledger.core import scratch  # noqa: E402
from evalledger.suites.brain_eval import brains, catalog  # noqa: E402

BRAIN = "AGT-901"
MODEL = "claude-sonnet-4-6"
PROMPT = "You are the bench brain. Cite the source id of every number you state.\n"
PROMPT_HASH = hashlib.sha256(PROMPT.encode("utf-8")).hexdigest()
SHA_B = "b" * 64
REVIEWER_ROLE = "evalledger_bench_reviewer"
IN_BAND = {"high_confidence_pct": 60, "multi_source_pct": 50, "inference_pct": 30, "speculation_pct": 5}
WARMUP_RUNS = 5

ANALYSIS_COLUMNS = "analysis_id, brain, origin, model_id, system_prompt_hash, question_id, question, output, token_cost_usd"
ANALYSIS_VALUES = ("%(analysis_id)s, %(brain)s, 'eval', %(model_id)s, %(system_prompt_hash)s, %(question_id)s, "
                   "%(question)s, %(output)s, %(token_cost_usd)s")
RUN_COLUMNS = ("eval_run_id, run_trigger, brain_under_test, model_id, system_prompt_hash, "
               "brain_view_contracts_hash, question_catalog_version, question_count, started_at, reviewer_user_id")
RUN_VALUES = ("%(eval_run_id)s, %(run_trigger)s, %(brain_under_test)s, %(model_id)s, %(system_prompt_hash)s, "
              "%(brain_view_contracts_hash)s, %(question_catalog_version)s, %(question_count)s, now(), "
              "%(reviewer_user_id)s")
QUESTION_COLUMNS = ("eval_run_id, question_id, brain_analysis_id, question_type, uses_stale_fixture, "
                    "citation_rate, lever_mapping_violations, confidence_distribution")
QUESTION_VALUES = ("%(eval_run_id)s, %(question_id)s, %(brain_analysis_id)s, %(question_type)s, "
                   "%(uses_stale_fixture)s, %(citation_rate)s, %(lever_mapping_violations)s, %(confidence_distribution)s")
# The reviewer's fields, as `review score` sets them (one UPDATE per question row).
REVIEW_SET = ("hallucinations_detected = %(hallucinations_detected)s, total_claims = %(total_claims)s, "
              "staleness_correctly_recognized = %(staleness_correctly_recognized)s, "
              "diagnosis_accuracy_score = %(diagnosis_accuracy_score)s, "
              "narrative_coherence_rating = %(narrative_coherence_rating)s, reviewer_comments = %(reviewer_comments)s")
REVIEW_WHERE = "WHERE eval_run_id = %(eval_run_id)s AND question_id = %(question_id)s"

GUARDED = {
    "analysis": f"INSERT INTO evalledger.brain_analysis_log ({ANALYSIS_COLUMNS}) VALUES ({ANALYSIS_VALUES})",
    # The admission trigger picks the rubric, verifies the prompt and the reviewer's independence.
    "run": f"INSERT INTO evalledger.brain_eval_log ({RUN_COLUMNS}) VALUES ({RUN_VALUES})",
    "question": f"INSERT INTO evalledger.brain_eval_question_score ({QUESTION_COLUMNS}) VALUES ({QUESTION_VALUES})",
    "review": f"UPDATE evalledger.brain_eval_question_score SET {REVIEW_SET} {REVIEW_WHERE}",
    "sign_off": "INSERT INTO evalledger.brain_eval_run_review (eval_run_id, reviewer_hours_spent, calibration_notes) "
                "VALUES (%(eval_run_id)s, %(hours)s, %(notes)s)",
    # The decision trigger computes everything else.
    "complete": "UPDATE evalledger.brain_eval_log SET completed_at = now() "
                "WHERE eval_run_id = %(eval_run_id)s AND completed_at IS NULL",
}
BASELINE = {
    "analysis": f"INSERT INTO bench.brain_analysis_log ({ANALYSIS_COLUMNS}) VALUES ({ANALYSIS_VALUES})",
    "run": f"INSERT INTO bench.brain_eval_log ({RUN_COLUMNS}, rubric_id, reviewer_independence_verified) "
           f"VALUES ({RUN_VALUES}, %(rubric_id)s, true)",
    # The run was inserted in the same transaction: its created_at is this now().
    "question": f"INSERT INTO bench.brain_eval_question_score ({QUESTION_COLUMNS}, run_created_at) "
                f"VALUES ({QUESTION_VALUES}, now())",
    "review": f"UPDATE bench.brain_eval_question_score SET {REVIEW_SET}, question_passed = true {REVIEW_WHERE}",
    "sign_off": "INSERT INTO bench.brain_eval_run_review (eval_run_id, reviewer_hours_spent, calibration_notes, "
                "reviewer_user_id, entered_by, run_created_at) "
                "VALUES (%(eval_run_id)s, %(hours)s, %(notes)s, %(reviewer_user_id)s, session_user, now())",
    # The same columns the decision trigger sets, supplied as the values a clean run gets.
    "complete": "UPDATE bench.brain_eval_log SET completed_at = now(), aggregated_scores = %(scores)s, "
                "hard_criteria_passed = true, soft_criteria_passed_count = 4, decision = 'pass', "
                "decision_rationale = %(rationale)s, token_cost_usd = %(cost)s, reviewer_hours_spent = %(hours)s, "
                "calibration_notes = %(notes)s "
                "WHERE eval_run_id = %(eval_run_id)s AND completed_at IS NULL",
}
SCORES = {"citation_rate": 1, "hallucination_rate": 0, "staleness_recognition_rate": 1,
          "diagnosis_accuracy_mean": 1, "lever_mapping_correctness": None,
          "confidence_calibration_in_band": 1, "narrative_coherence_mean": 5}
RATIONALE = "Pass: all hard criteria passed; all 4 soft criteria within threshold."
HOURS = "2.50"
NOTES = {"citation_rate": "every number cited"}

COPIES = """
CREATE SCHEMA bench;
CREATE TABLE bench.brain_analysis_log
    (LIKE evalledger.brain_analysis_log INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING INDEXES);
CREATE TABLE bench.brain_eval_log
    (LIKE evalledger.brain_eval_log INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING INDEXES);
CREATE TABLE bench.brain_eval_question_score
    (LIKE evalledger.brain_eval_question_score INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING INDEXES);
CREATE TABLE bench.brain_eval_run_review
    (LIKE evalledger.brain_eval_run_review INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING INDEXES
     INCLUDING IDENTITY);
-- LIKE copies no foreign keys; the guarded tables check theirs, so the copies do too.
ALTER TABLE bench.brain_analysis_log
    ADD FOREIGN KEY (brain) REFERENCES evalledger.target (target_id);
ALTER TABLE bench.brain_eval_log
    ADD FOREIGN KEY (brain_under_test) REFERENCES evalledger.target (target_id),
    ADD FOREIGN KEY (reviewer_user_id) REFERENCES evalledger.reviewer (reviewer_user_id),
    ADD FOREIGN KEY (rubric_id) REFERENCES evalledger.rubric (rubric_id),
    ADD FOREIGN KEY (import_id) REFERENCES evalledger.brain_eval_import (import_id);
ALTER TABLE bench.brain_eval_question_score
    ADD FOREIGN KEY (eval_run_id) REFERENCES bench.brain_eval_log (eval_run_id),
    ADD FOREIGN KEY (brain_analysis_id) REFERENCES bench.brain_analysis_log (analysis_id);
ALTER TABLE bench.brain_eval_run_review
    ADD FOREIGN KEY (eval_run_id) REFERENCES bench.brain_eval_log (eval_run_id),
    ADD FOREIGN KEY (reviewer_user_id) REFERENCES evalledger.reviewer (reviewer_user_id);
GRANT USAGE ON SCHEMA bench TO evalledger_runner, evalledger_reviewer;
GRANT SELECT, INSERT ON bench.brain_analysis_log, bench.brain_eval_log, bench.brain_eval_question_score
    TO evalledger_runner;
GRANT UPDATE ON bench.brain_eval_log TO evalledger_runner;
GRANT SELECT, UPDATE ON bench.brain_eval_question_score TO evalledger_reviewer;
GRANT SELECT, INSERT ON bench.brain_eval_run_review TO evalledger_reviewer;
"""
# The guarded path's trigger functions, for --functions.
FUNCTIONS = """
SELECT funcname, calls, self_time, total_time FROM pg_stat_user_functions
 WHERE schemaname = 'evalledger' ORDER BY self_time DESC
"""


class WritePath:
    """One write path: its runner and reviewer sessions, statements and accumulated timings."""

    STEPS = ("analyses", "run", "questions", "write_commit", "review", "sign_off", "review_commit", "complete")

    def __init__(self, name: str, dsn: str, statements: dict, setup: dict, sync_commit: str):
        self.name = name
        self.statements = statements
        self.setup = setup
        self.runner = self._session(dsn, "evalledger_runner", sync_commit)
        self.reviewer = self._session(dsn, REVIEWER_ROLE, sync_commit)
        self.seconds = dict.fromkeys(self.STEPS, 0.0)
        self.runs = 0
        self.questions = 0

    @staticmethod
    def _session(dsn: str, role: str, sync_commit: str) -> psycopg.Connection:
        conn = psycopg.connect(dsn)
        conn.execute(sql.SQL("SET ROLE {}").format(sql.Identifier(role)))
        conn.execute(sql.SQL("SET synchronous_commit = {}").format(sql.SQL(sync_commit)))
        conn.commit()
        return conn

    def close(self) -> None:
        self.runner.close()
        self.reviewer.close()

    def one_run(self, count: bool) -> None:
        setup, questions_of_catalog = self.setup, self.setup["questions"]
        run_id = uuid.uuid4()
        run = {"eval_run_id": run_id, "run_trigger": "quarterly", "brain_under_test": BRAIN, "model_id": MODEL,
               "system_prompt_hash": PROMPT_HASH, "brain_view_contracts_hash": SHA_B,
               "question_catalog_version": catalog.DEMO_VERSION, "question_count": len(questions_of_catalog),
               "reviewer_user_id": setup["reviewer_id"], "rubric_id": setup["rubric_id"]}
        analyses, questions, reviews = [], [], []
        for number, (question_id, question_type, stale) in enumerate(questions_of_catalog, start=1):
            analysis_id = uuid.uuid4()
            analyses.append({"analysis_id": analysis_id, "brain": BRAIN, "model_id": MODEL,
                             "system_prompt_hash": PROMPT_HASH, "question_id": question_id,
                             "question": f"question {number}", "output": f"answer {number}",
                             "token_cost_usd": "0.0125"})
            questions.append({"eval_run_id": run_id, "question_id": question_id, "brain_analysis_id": analysis_id,
                              "question_type": question_type, "uses_stale_fixture": stale, "citation_rate": 1,
                              "lever_mapping_violations": None, "confidence_distribution": Jsonb(IN_BAND)})
            reviews.append({"eval_run_id": run_id, "question_id": question_id, "hallucinations_detected": 0,
                            "total_claims": 10, "staleness_correctly_recognized": True if stale else None,
                            "diagnosis_accuracy_score": 1.0 if question_type in setup["diagnosis_types"] else None,
                            "narrative_coherence_rating": 5, "reviewer_comments": None})
        sign_off = {"eval_run_id": run_id, "hours": HOURS, "notes": Jsonb(NOTES),
                    "reviewer_user_id": setup["reviewer_id"]}
        completion = {"eval_run_id": run_id, "scores": Jsonb(SCORES), "rationale": RATIONALE,
                      "cost": round(0.0125 * len(questions), 4), "hours": HOURS, "notes": Jsonb(NOTES)}

        marks = [time.perf_counter()]
        with self.runner.cursor() as cur:
            cur.executemany(self.statements["analysis"], analyses)
            marks.append(time.perf_counter())
            cur.execute(self.statements["run"], run)
            marks.append(time.perf_counter())
            cur.executemany(self.statements["question"], questions)
            marks.append(time.perf_counter())
        self.runner.commit()
        marks.append(time.perf_counter())
        with self.reviewer.cursor() as cur:
            cur.executemany(self.statements["review"], reviews)
            marks.append(time.perf_counter())
            cur.execute(self.statements["sign_off"], sign_off)
            marks.append(time.perf_counter())
        self.reviewer.commit()
        marks.append(time.perf_counter())
        with self.runner.cursor() as cur:
            cur.execute(self.statements["complete"], completion)
            if cur.rowcount != 1:
                raise SystemExit(f"{self.name}: completion updated {cur.rowcount} rows")
        self.runner.commit()
        marks.append(time.perf_counter())
        if count:
            for step, start, end in zip(self.STEPS, marks, marks[1:]):
                self.seconds[step] += end - start
            self.runs += 1
            self.questions += len(questions)

    def step_s(self, *steps: str) -> float:
        return sum(self.seconds[s] for s in steps)


WRITE = ("analyses", "run", "questions", "write_commit")
REVIEW = ("review", "sign_off", "review_commit")
COMPLETE = ("complete",)


def prepare(dsn: str) -> dict:
    """The reviewer's login role and registration, the brain version, the demo catalog and the copies."""
    with psycopg.connect(dsn, autocommit=True) as admin:
        admin.execute(sql.SQL(
            "DO $$ BEGIN IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = {name}) THEN "
            "CREATE ROLE {ident} LOGIN; END IF; END $$").format(
                name=sql.Literal(REVIEWER_ROLE), ident=sql.Identifier(REVIEWER_ROLE)))
        admin.execute(sql.SQL("GRANT evalledger_reviewer TO {}").format(sql.Identifier(REVIEWER_ROLE)))
        admin.execute(COPIES)
        reviewer_id = admin.execute(
            "INSERT INTO evalledger.reviewer (reviewer_user_id, role_name, display_name) "
            "VALUES (gen_random_uuid(), %s, 'bench') RETURNING reviewer_user_id", (REVIEWER_ROLE,)).fetchone()[0]
        rubric_id, definition = admin.execute(
            "SELECT rubric_id, definition FROM evalledger.rubric WHERE suite = 'brain-eval' "
            "ORDER BY rubric_id DESC LIMIT 1").fetchone()
        version = admin.execute("SHOW server_version").fetchone()[0]
    with psycopg.connect(dsn) as owner:
        owner.execute("SET ROLE evalledger_owner")
        document = json.loads(catalog.demo_catalog_path().read_text("utf-8"))
        catalog.load(owner, document, None)
        brains.add(owner, BRAIN, f"anthropic:{MODEL}", PROMPT)
        owner.commit()
    return {"reviewer_id": reviewer_id, "rubric_id": rubric_id, "version": version,
            "diagnosis_types": set(definition.get("diagnosis_question_types", [])),
            "questions": [(q["id"], q["type"], q["uses_stale_fixture"]) for q in document["questions"]]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200, help="runs written on each path")
    parser.add_argument("--synchronous-commit", choices=["on", "off"], default="on",
                        help="off takes the disk flush out of each commit, which shows the guards' CPU cost more sharply")
    parser.add_argument("--functions", action="store_true",
                        help="also print the guarded path's trigger functions' time per run (track_functions = all)")
    args = parser.parse_args()

    t_start = time.perf_counter()
    paths: list[WritePath] = []
    with scratch.server() as server_url, scratch.migrated_database(server_url, "evalledger_bench") as dsn:
        try:
            setup = prepare(dsn)
            if args.functions:
                with psycopg.connect(dsn, autocommit=True) as admin:
                    admin.execute(sql.SQL("ALTER DATABASE {} SET track_functions = 'all'").format(
                        sql.Identifier(psycopg.conninfo.conninfo_to_dict(dsn)["dbname"])))
            guarded = WritePath("guarded", dsn, GUARDED, setup, args.synchronous_commit)
            baseline = WritePath("baseline", dsn, BASELINE, setup, args.synchronous_commit)
            paths = [guarded, baseline]
            for n in range(args.runs + WARMUP_RUNS):
                if args.functions and n == WARMUP_RUNS:
                    with psycopg.connect(dsn, autocommit=True) as admin:
                        admin.execute("SELECT pg_stat_reset()")
                # Alternate which path goes first so neither always meets the other's dirty pages.
                for path in (paths if n % 2 == 0 else paths[::-1]):
                    path.one_run(count=n >= WARMUP_RUNS)
            for path in paths:
                path.close()  # a closing session flushes its function statistics

            with psycopg.connect(dsn, autocommit=True) as check:
                decided = check.execute("SELECT decision::text, count(*) FROM evalledger.brain_eval_log "
                                        "GROUP BY 1 ORDER BY 1").fetchall()
                trail = check.execute("SELECT count(*) FROM evalledger.brain_eval_review_entry").fetchone()[0]
                functions = []
                if args.functions:
                    time.sleep(1)
                    functions = check.execute(FUNCTIONS).fetchall()

            def rate(count: int, seconds: float) -> float:
                return count / seconds if seconds else float("nan")

            questions = len(setup["questions"])
            runs_total = args.runs + WARMUP_RUNS
            print(f"ledger writes: PostgreSQL {setup['version']}; {args.runs} runs x {questions} questions of catalog "
                  f"{catalog.DEMO_VERSION} on each path (+{WARMUP_RUNS} warm-up runs each, not counted); "
                  f"synchronous_commit={args.synchronous_commit}; load average {Path('/proc/loadavg').read_text().split()[:3]}")
            print("  guarded  = evalledger tables, runner and reviewer roles: RLS + every trigger")
            print("  baseline = bench.* LIKE-copies (defaults, CHECKs, indexes, same foreign keys), no triggers, no RLS")
            print(f"  guarded runs decided: {', '.join(f'{d}={c}' for d, c in decided)}; "
                  f"trail rows: {trail} ({trail / runs_total:.0f} per run)")
            print(f"{'':40}{'guarded':>12}{'baseline':>12}{'ratio':>8}")
            figures = [
                ("question rows/s (write step)", guarded.questions, baseline.questions, WRITE),
                ("rows/s written (analyses+run+rows)", 2 * guarded.questions + guarded.runs,
                 2 * baseline.questions + baseline.runs, WRITE),
                ("reviewed rows/s (review step)", guarded.questions, baseline.questions, REVIEW),
                ("completions/s", guarded.runs, baseline.runs, COMPLETE),
                ("lifecycle runs/s (all three steps)", guarded.runs, baseline.runs, WRITE + REVIEW + COMPLETE),
            ]
            for label, g_count, b_count, steps in figures:
                g, b = rate(g_count, guarded.step_s(*steps)), rate(b_count, baseline.step_s(*steps))
                print(f"{label:40}{g:>12.1f}{b:>12.1f}{g / b:>8.2f}")
            print("  per run, ms:" + "".join(f"{s:>14}" for s in WritePath.STEPS))
            for path in paths:
                print(f"  {path.name:11}" + "".join(f"{path.seconds[s] / path.runs * 1000:>14.2f}"
                                                     for s in WritePath.STEPS))
            if functions:
                print(f"  guarded trigger functions per run, ms (self / total; {args.runs} runs):")
                for name, calls, self_ms, total_ms in functions:
                    if total_ms / args.runs >= 0.01:
                        print(f"    {name:44}{calls / args.runs:>7.0f} calls{self_ms / args.runs:>9.2f}"
                              f"{total_ms / args.runs:>9.2f}")
            print(f"  wall time {time.perf_counter() - t_start:.1f} s (including server start and migration)")
        finally:
            for path in paths:
                path.close()


if __name__ == "__main__":
    main()
