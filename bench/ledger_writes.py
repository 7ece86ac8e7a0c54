"""Bench: a brain-eval run's whole write lifecycle through every guard and trigger, against guard-free copies.

Two paths write the same rows in the same run, on the same server, with the same statements and
the same client calls, each on two sessions: the runner's (SET ROLE evalledger_runner) and the
run's reviewer's (SET ROLE to a login role in evalledger_reviewer, registered in
evalledger.reviewer). One run's lifecycle, as the ledger's write model has it:

  write     runner:   executemany the run's analyses (one eval answer per question), INSERT the
                      run, executemany its question rows without the reviewer's fields, COMMIT
  review    reviewer: executemany one UPDATE per question row entering the reviewer's fields,
                      INSERT the sign-off (brain_eval_run_review: hours, notes), COMMIT
  complete  runner:   brain_eval_complete_v1 (the baseline: UPDATE completed_at), COMMIT

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
            (rubric_id, reviewer_independence_verified, run_created_at, run_reviewer_user_id, question_passed, the
            sign-off's reviewer and entered_by, and on completion the aggregates, criteria,
            decision, rationale, cost, hours and notes). The reviewer trail has no baseline
            counterpart: it is part of what the guards cost.

History: each size (--history, default 0, 1,000 and 10,000 completed runs) is a database of its
own, a copy (CREATE DATABASE ... TEMPLATE) of one where both paths wrote five warm-up runs, grown by
History: clones of those runs, made by the real triggers, with new ids and earlier clocks (see
History for why that is faithful). The sizes are then measured in turn, run by run, so a shared
machine's load falls on every size alike; "speed vs 0" is a step's ms on the empty ledger over its
ms at that size (aim: at least 0.8 at 10,000). Building 10,000 runs (300,000 analyses and question
rows, 1.15M trail rows) takes minutes; its progress goes to stderr.

The run's catalog (the demo catalog, v28-2026Q2) is loaded, so the catalog checks at insert and
completion (every stale-fixture question present) run too. Runs alternate which path goes first so
both see the same table sizes, caches and checkpoints. Figures (no assertions), per history size
and lifecycle step (record, review, sign-off with the reviewer's COMMIT, completion), in ms per run:
  guarded, baseline   each path's ms per run
  g/b cost            guarded / baseline (1.0 = the guards cost nothing; its inverse is the speed
                      ratio the aims name, e.g. the reviewer step at least 0.6 of guard-free)
  speed vs 0          the guarded step's ms on the empty ledger / its ms at this size
With --functions, the guarded trigger functions' own time per run (track_functions = all).

It starts its own database: DATABASE_URL's server when set, else a throwaway embedded server
under a temporary EVALLEDGER_HOME (stopped and removed at the end).

    .venv/bin/python bench/ledger_writes.py [--runs 30] [--history 0,1000,10000] [--synchronous-commit on|off]
                                            [--functions]
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
from psycopg.conninfo import conninfo_to_dict, make_conninfo
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
# What the database computes from CLAIMS (ten numerical claims citing the question's first source,
# half high and half multi_source: inside the rubric's band); the baseline supplies it as literals.
CLAIMS = 10
IN_BAND = {"high_confidence_pct": 50, "multi_source_pct": 50, "inference_pct": 0, "speculation_pct": 0}
WARMUP_RUNS = 5

ANALYSIS_COLUMNS = ("analysis_id, brain, origin, model_id, system_prompt_hash, question_id, question, output, claims, "
                    "token_cost_usd")
ANALYSIS_VALUES = ("%(analysis_id)s, %(brain)s, 'eval', %(model_id)s, %(system_prompt_hash)s, %(question_id)s, "
                   "%(question)s, %(output)s, %(claims)s, %(token_cost_usd)s")
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
    # The decision trigger computes everything else; the runner completes through the function.
    "complete": "SELECT evalledger.brain_eval_complete_v1(%(eval_run_id)s, NULL)",
}
BASELINE = {
    "analysis": f"INSERT INTO bench.brain_analysis_log ({ANALYSIS_COLUMNS}) VALUES ({ANALYSIS_VALUES})",
    "run": f"INSERT INTO bench.brain_eval_log ({RUN_COLUMNS}, rubric_id, reviewer_independence_verified) "
           f"VALUES ({RUN_VALUES}, %(rubric_id)s, true)",
    # The run was inserted in the same transaction: its created_at is this now().
    "question": f"INSERT INTO bench.brain_eval_question_score ({QUESTION_COLUMNS}, run_created_at, "
                f"run_reviewer_user_id) VALUES ({QUESTION_VALUES}, now(), %(run_reviewer_user_id)s)",
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
        self.run_ids: list[uuid.UUID] = []

    def reset(self) -> None:
        self.seconds = dict.fromkeys(self.STEPS, 0.0)
        self.runs = self.questions = 0

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
        self.run_ids.append(run_id)
        run = {"eval_run_id": run_id, "run_trigger": "quarterly", "brain_under_test": BRAIN, "model_id": MODEL,
               "system_prompt_hash": PROMPT_HASH, "brain_view_contracts_hash": SHA_B,
               "question_catalog_version": catalog.DEMO_VERSION, "question_count": len(questions_of_catalog),
               "reviewer_user_id": setup["reviewer_id"], "rubric_id": setup["rubric_id"]}
        analyses, questions, reviews = [], [], []
        computed = self.statements is BASELINE  # the guarded path leaves the automatic scores to the database
        for number, (question_id, question_type, stale, source) in enumerate(questions_of_catalog, start=1):
            analysis_id = uuid.uuid4()
            claims = [{"text": f"claim {n}", "numerical": True, "source_ids": [source],
                       "confidence": "high" if n % 2 == 0 else "multi_source"} for n in range(CLAIMS)]
            analyses.append({"analysis_id": analysis_id, "brain": BRAIN, "model_id": MODEL,
                             "system_prompt_hash": PROMPT_HASH, "question_id": question_id,
                             "question": f"question {number}", "output": f"answer {number}",
                             "claims": Jsonb(claims), "token_cost_usd": "0.0125"})
            questions.append({"eval_run_id": run_id, "question_id": question_id, "brain_analysis_id": analysis_id,
                              "question_type": question_type, "uses_stale_fixture": stale,
                              "citation_rate": 1 if computed else None, "lever_mapping_violations": None,
                              "confidence_distribution": Jsonb(IN_BAND) if computed else None,
                              "run_reviewer_user_id": setup["reviewer_id"]})
            reviews.append({"eval_run_id": run_id, "question_id": question_id, "hallucinations_detected": 0,
                            "total_claims": CLAIMS, "staleness_correctly_recognized": True if stale else None,
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


# The lifecycle's four steps, as the aims name them.
LIFECYCLE = {
    "record (runner)": ("analyses", "run", "questions", "write_commit"),
    "review (reviewer's UPDATEs)": ("review",),
    "sign-off (+ reviewer's COMMIT)": ("sign_off", "review_commit"),
    "completion (runner)": ("complete",),
}


def report(args, setup: dict, results: dict, decided: list) -> None:
    """Per history size: each step's ms per run on both paths, guarded / baseline, and against size 0."""
    print(f"ledger writes: PostgreSQL {setup['version']}; {args.runs} runs x {len(setup['questions'])} questions "
          f"of catalog {catalog.DEMO_VERSION} on each path at each history size; "
          f"synchronous_commit={args.synchronous_commit}; load average "
          f"{' '.join(Path('/proc/loadavg').read_text().split()[:3])}")
    print("  guarded  = evalledger tables, runner and reviewer roles: RLS + every trigger")
    print("  baseline = bench.* LIKE-copies (defaults, CHECKs, indexes, same foreign keys), no triggers, no RLS")
    print("  history  = completed runs already in the ledger (cloned from the runs each path wrote; see History)")
    print(f"  guarded runs decided: {', '.join(f'{d}={c}' for d, c in decided)}")
    first = min(results)

    def ms(size: int, path: str, steps: tuple) -> float:
        seconds, runs, _ = results[size][0][path]
        return sum(seconds[s] for s in steps) / runs * 1000

    print(f"  {'ms per run':34}{'history':>8}{'guarded':>10}{'baseline':>10}{'g/b cost':>10}"
          f"{'speed vs ' + str(first):>14}")
    for label, steps in [*LIFECYCLE.items(), ("lifecycle", sum(LIFECYCLE.values(), ()))]:
        for size in sorted(results):
            g, b = ms(size, "guarded", steps), ms(size, "baseline", steps)
            print(f"  {label:34}{size:>8}{g:>10.2f}{b:>10.2f}{g / b:>10.2f}{ms(first, 'guarded', steps) / g:>14.2f}")
    print("  g/b cost: guarded ms / baseline ms (1.0 = the guards cost nothing; its inverse is the speed ratio)")
    for size in sorted(results):
        functions = results[size][1]
        print(f"  history {size}: built in {results[size][2]:.1f} s")
        if functions:
            print(f"    guarded trigger functions per run, ms (self / total; {args.runs} runs):")
            for name, calls, self_ms, total_ms in functions:
                if total_ms / args.runs >= 0.05:
                    print(f"      {name:44}{calls / args.runs:>7.0f} calls{self_ms / args.runs:>9.2f}"
                          f"{total_ms / args.runs:>9.2f}")


# The tables one lifecycle writes, in foreign-key order, and how a cloned row finds its template run.
HISTORY_TABLES = (
    ("brain_analysis_log", "JOIN {schema}.brain_eval_question_score q ON q.brain_analysis_id = x.analysis_id "
                           "JOIN bench.history_map m ON m.old = q.eval_run_id"),
    ("brain_eval_log", "JOIN bench.history_map m ON m.old = x.eval_run_id"),
    ("brain_eval_question_score", "JOIN bench.history_map m ON m.old = x.eval_run_id"),
    ("brain_eval_run_review", "JOIN bench.history_map m ON m.old = x.eval_run_id"),
    ("brain_eval_review_entry", "JOIN bench.history_map m ON m.old = x.eval_run_id"),
)
# Every uuid but these (registry keys the copies share) is the run's own: new in each copy.
SHARED_UUIDS = {"reviewer_user_id", "run_reviewer_user_id"}


class History:
    """Grows both paths' history to a number of completed runs by cloning the runs each path wrote.

    A cloned row is a copy of a row the real path wrote (on the guarded side, by every trigger: the
    decision, the aggregates, question_passed, the reviewer trail, the sign-off), with new ids (md5
    of the template's id and the copy's number, so every reference stays consistent) and every
    timestamp moved back by one minute per copy: one run a minute, all within the hot tier, under
    the same reviewer and prompt, which is what the guards' lookups meet at that size. The installer
    inserts them with the guarded tables' user triggers off (the DDL guard's event trigger too, then
    every trigger ENABLE ALWAYS again, in one transaction): running 300,000 rows through the
    triggers one run at a time would take hours, and would compute the same rows.
    """

    def __init__(self, dsn: str, templates: dict[str, list[uuid.UUID]]):
        self.dsn = dsn
        self.templates = templates
        self.copies = 0

    def grow(self, runs: int) -> None:
        with psycopg.connect(self.dsn) as admin:
            current = admin.execute("SELECT count(*) FROM evalledger.brain_eval_log").fetchone()[0]
            needed = runs - current
            if needed <= 0:
                return
            per = len(self.templates["guarded"])
            first, last = self.copies + 1, self.copies + -(-needed // per)
            self.copies = last
            admin.execute("ALTER EVENT TRIGGER evalledger_ddl_guard_v1 DISABLE")
            always = admin.execute(
                "SELECT c.relname, t.tgname FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid "
                "WHERE c.relnamespace = 'evalledger'::regnamespace AND NOT t.tgisinternal AND t.tgenabled = 'A' "
                "AND c.relname = ANY(%s)", ([t for t, _ in HISTORY_TABLES],)).fetchall()
            for table, _ in HISTORY_TABLES:
                admin.execute(sql.SQL("ALTER TABLE evalledger.{} DISABLE TRIGGER USER").format(sql.Identifier(table)))
            for schema, path in (("evalledger", "guarded"), ("bench", "baseline")):
                admin.execute("DROP TABLE IF EXISTS bench.history_map")
                admin.execute(
                    "CREATE TABLE bench.history_map AS SELECT old, md5(old::text || ':' || k)::uuid AS new, k "
                    "FROM unnest(%s::uuid[]) old CROSS JOIN generate_series(%s::int, %s::int) k ORDER BY k, old LIMIT %s::int",
                    (self.templates[path], first, last, needed))
                admin.execute("CREATE INDEX ON bench.history_map (old)")
                for table, join in HISTORY_TABLES:
                    if schema == "bench" and table == "brain_eval_review_entry":
                        continue  # the trail has no baseline counterpart
                    columns = [c for c, in admin.execute(
                        "SELECT attname FROM pg_attribute WHERE attrelid = %s::regclass AND attnum > 0 "
                        "AND NOT attisdropped AND attidentity = '' ORDER BY attnum", (f"{schema}.{table}",))]
                    types = dict(admin.execute(
                        "SELECT attname, atttypid::regtype::text FROM pg_attribute WHERE attrelid = %s::regclass "
                        "AND attnum > 0", (f"{schema}.{table}",)).fetchall())
                    exprs = []
                    for c in columns:
                        col = sql.SQL("x.{}").format(sql.Identifier(c))
                        if c == "eval_run_id":
                            exprs.append(sql.SQL("m.new"))
                        elif types[c] == "uuid" and c not in SHARED_UUIDS:
                            exprs.append(sql.SQL("md5({}::text || ':' || m.k)::uuid").format(col))
                        elif types[c] == "timestamp with time zone":
                            exprs.append(sql.SQL("{} - m.k * interval '1 minute'").format(col))
                        else:
                            exprs.append(col)
                    t0 = time.perf_counter()
                    admin.execute(sql.SQL("INSERT INTO {schema}.{table} ({columns}) SELECT {exprs} FROM "
                                          "{schema}.{table} x " + join).format(
                        schema=sql.Identifier(schema), table=sql.Identifier(table),
                        columns=sql.SQL(", ").join(map(sql.Identifier, columns)), exprs=sql.SQL(", ").join(exprs)))
                    print(f"  history {runs}: {schema}.{table} in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
            for table, trigger in always:
                admin.execute(sql.SQL("ALTER TABLE evalledger.{} ENABLE ALWAYS TRIGGER {}").format(
                    sql.Identifier(table), sql.Identifier(trigger)))
            admin.execute("ALTER EVENT TRIGGER evalledger_ddl_guard_v1 ENABLE ALWAYS")
            admin.execute("DROP TABLE bench.history_map")
            admin.commit()
        with psycopg.connect(self.dsn, autocommit=True) as admin:
            # What autovacuum does after a bulk load, done now so each size is measured settled.
            admin.execute("VACUUM ANALYZE")


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
            "questions": [(q["id"], q["type"], q["uses_stale_fixture"], q["sources"][0]["id"])
                          for q in document["questions"]]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30, help="runs written on each path at each history size")
    parser.add_argument("--history", type=lambda v: sorted(int(x) for x in v.split(",")), default=[0, 1000, 10000],
                        help="completed runs of history to measure at, comma-separated (default 0,1000,10000)")
    parser.add_argument("--synchronous-commit", choices=["on", "off"], default="on",
                        help="off takes the disk flush out of each commit, which shows the guards' CPU cost more sharply")
    parser.add_argument("--functions", action="store_true",
                        help="also print the guarded path's trigger functions' time per run (track_functions = all)")
    args = parser.parse_args()

    t_start = time.perf_counter()
    paths: list[WritePath] = []
    clones: list[str] = []
    with scratch.server() as server_url, scratch.migrated_database(server_url, "evalledger_bench") as dsn:
        base_name = conninfo_to_dict(dsn)["dbname"]
        server_admin = make_conninfo(dsn, dbname="postgres")
        try:
            setup = prepare(dsn)
            if args.functions:
                with psycopg.connect(dsn, autocommit=True) as admin:
                    admin.execute(sql.SQL("ALTER DATABASE {} SET track_functions = 'all'").format(
                        sql.Identifier(psycopg.conninfo.conninfo_to_dict(dsn)["dbname"])))
            warm = [WritePath("guarded", dsn, GUARDED, setup, args.synchronous_commit),
                    WritePath("baseline", dsn, BASELINE, setup, args.synchronous_commit)]
            for n in range(WARMUP_RUNS):
                for path in (warm if n % 2 == 0 else warm[::-1]):
                    path.one_run(count=False)
            templates = {path.name: list(path.run_ids) for path in warm}
            for path in warm:
                path.close()
            # One database per history size, each a copy of this one: the sizes are measured run
            # by run in turn, so a shared machine's load falls on all of them alike.
            grown = {}
            for size in args.history:
                name = f"{base_name}_h{size}"
                with psycopg.connect(server_admin, autocommit=True) as admin:
                    admin.execute(sql.SQL("CREATE DATABASE {} TEMPLATE {}").format(
                        sql.Identifier(name), sql.Identifier(base_name)))
                clones.append(name)
                size_dsn = make_conninfo(dsn, dbname=name)
                t_grow = time.perf_counter()
                History(size_dsn, templates).grow(size)
                grown[size] = (size_dsn, time.perf_counter() - t_grow)
                if args.functions:
                    with psycopg.connect(size_dsn, autocommit=True) as admin:
                        admin.execute(sql.SQL("ALTER DATABASE {} SET track_functions = 'all'").format(
                            sql.Identifier(name)))
                        admin.execute("SELECT pg_stat_reset()")
            by_size = {size: [WritePath("guarded", d, GUARDED, setup, args.synchronous_commit),
                              WritePath("baseline", d, BASELINE, setup, args.synchronous_commit)]
                       for size, (d, _) in grown.items()}
            paths = [p for pair in by_size.values() for p in pair]
            for n in range(WARMUP_RUNS + args.runs):
                for pair in by_size.values():
                    # Alternate which path goes first so neither always meets the other's dirty pages.
                    for path in (pair if n % 2 == 0 else pair[::-1]):
                        path.one_run(count=n >= WARMUP_RUNS)
            for path in paths:
                path.close()  # a closing session flushes its function statistics
            results = {}
            for size, pair in by_size.items():
                functions = []
                if args.functions:
                    time.sleep(1)
                    with psycopg.connect(grown[size][0], autocommit=True) as check:
                        functions = check.execute(FUNCTIONS).fetchall()
                results[size] = ({p.name: (dict(p.seconds), p.runs, p.questions) for p in pair}, functions,
                                 grown[size][1])
            dsn = grown[max(grown)][0]

            with psycopg.connect(dsn, autocommit=True) as check:
                decided = check.execute("SELECT decision::text, count(*) FROM evalledger.brain_eval_log "
                                        "GROUP BY 1 ORDER BY 1").fetchall()
            report(args, setup, results, decided)
            print(f"  wall time {time.perf_counter() - t_start:.1f} s (including server start, migration and history)")
        finally:
            for path in paths:
                path.close()
            with psycopg.connect(server_admin, autocommit=True) as admin:
                for name in clones:
                    admin.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))


if __name__ == "__main__":
    main()
