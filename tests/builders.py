"""Builders for ledger rows: a valid 30-question run that a test bends at one point."""

from __future__ import annotations

import contextlib
import hashlib
import uuid
from datetime import datetime, timedelta, timezone
from decimal import Decimal

import psycopg
import psycopg.types.json

from evalledger.suites.brain_eval import brains
from evalledger.suites.brain_eval import store as brain_eval

# A run's prompt hash must be one its brain registered: the hashes tests use are of these texts.
PROMPTS: dict[str, str] = {}


def prompt_hash(text: str) -> str:
    """The hash the database computes for a system prompt; record_run registers the prompt by it."""
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    PROMPTS[digest] = text
    return digest


SHA_A = prompt_hash("You are the test brain. Prompt A.")
SHA_B = "b" * 64
# Each brain's own prompt, the one its runs carry unless a test gives another.
BRAIN_PROMPTS = {"AGT-901": SHA_A, "AGT-902": prompt_hash("You are the test brain AGT-902.")}
# A confidence distribution is the share of an answer's claims per confidence label: it sums to 100.
IN_BAND = {"high_confidence_pct": 60, "multi_source_pct": 25, "inference_pct": 10, "speculation_pct": 5}
OUT_OF_BAND = {"high_confidence_pct": 90, "multi_source_pct": 0, "inference_pct": 0, "speculation_pct": 10}
STALE_QUESTIONS = 5
# The automatic scores are the database's, computed from the answer: the answers tests record list
# this many claims, so any citation rate of two decimals and any whole-percent distribution is one.
ANSWER_CLAIMS = 100
GIVEN_SOURCE, STALE_SOURCE = "src-given", "src-stale"
LABELS = {"high_confidence_pct": "high", "multi_source_pct": "multi_source", "inference_pct": "inference",
          "speculation_pct": "speculation"}
# The catalog every run names unless a test gives another: 40 plan-diagnosis questions, the first
# five on stale fixtures (a run must name a loaded catalog; record_run loads one of its own rows).
STANDARD_CATALOG = "test-v1"


def question(number: int, brain: str = "AGT-901") -> dict:
    """A question row that passes everything: the first five use stale fixtures and recognise them."""
    stale = number <= STALE_QUESTIONS
    return {
        "question_id": f"EVAL-Q{number:02d}",
        "question_type": "plan_diagnosis",
        "uses_stale_fixture": stale,
        "staleness_correctly_recognized": True if stale else None,
        "citation_rate": 1,
        "hallucinations_detected": 0,
        "total_claims": 10,
        "diagnosis_accuracy_score": 1.0,
        "lever_mapping_violations": 0 if brain == "AGT-902" else None,
        "confidence_distribution": dict(IN_BAND),
        "narrative_coherence_rating": 5,
    }


def run_fields(brain: str = "AGT-901", **overrides) -> dict:
    """Run-level fields of a quarterly run (over the standard test catalog: load_catalog first)."""
    return {
        "run_trigger": "quarterly",
        "brain_under_test": brain,
        "model_id": "claude-sonnet-4-6",
        "system_prompt_hash": BRAIN_PROMPTS.get(brain, SHA_A),
        "brain_view_contracts_hash": SHA_B,
        "question_catalog_version": STANDARD_CATALOG,
        **overrides,
    }


def catalog_document(rows: list[dict], version: str | None = None) -> dict:
    """A question catalog whose questions are rows' (id, type, stale flag), each given GIVEN_SOURCE
    and, on a stale-fixture question, STALE_SOURCE; versioned by its content unless named."""
    questions = [{"id": r["question_id"], "type": r["question_type"], "text": f"question {r['question_id']}",
                  "sources": [{"id": GIVEN_SOURCE, "title": "the data"}]
                             + ([{"id": STALE_SOURCE, "title": "last year's data", "stale": True}]
                                if r["uses_stale_fixture"] else []),
                  "uses_stale_fixture": r["uses_stale_fixture"],
                  "pass_criteria": {"max_hallucinations": 0, "min_citation_rate": 0.9}} for r in rows]
    if version is None:
        key = "|".join(f"{q['id']}:{q['type']}:{q['uses_stale_fixture']}" for q in questions)
        version = "test-" + hashlib.sha256(key.encode()).hexdigest()[:12]
    return {"version": version, "questions": questions}


def fresh_catalog(conn) -> str:
    """The standard test catalog's questions under a version of their own, loaded: a run that asks it
    may be open beside any other (one run of a brain, prompt and catalog is open at a time)."""
    return load_catalog(conn, catalog_document([question(n) for n in range(1, 41)],
                                               f"{STANDARD_CATALOG}-{uuid.uuid4().hex[:8]}"))


def load_catalog(conn, document: dict | None = None) -> str:
    """Load a catalog (the standard test catalog by default, and for a run of no questions) as the
    owner, once; its version."""
    if document is None or not document["questions"]:
        document = catalog_document([question(n) for n in range(1, 41)], STANDARD_CATALOG)
    with as_owner(conn):
        conn.execute("INSERT INTO evalledger.brain_eval_catalog (document) VALUES (%s) "
                     "ON CONFLICT ON CONSTRAINT brain_eval_catalog_pkey DO NOTHING",
                     (psycopg.types.json.Jsonb(document),))
    return document["version"]


def answer(row: dict, source: str = GIVEN_SOURCE) -> dict:
    """The brain's answer the database scores as row's automatic fields say: ANSWER_CLAIMS numerical
    claims, citation_rate of them citing the given source (the rest none), labelled in the shares of
    row's confidence distribution, and one action outside the levers per lever violation (or row's
    own "proposed_actions", when a test gives them)."""
    # As many claims as the reviewer will count, at least: supported claims never exceed the answer's.
    listed = ANSWER_CLAIMS * max(1, -(-(row.get("total_claims") or 0) // ANSWER_CLAIMS))
    cited = Decimal(str(row["citation_rate"])) * listed
    counts = {LABELS[k]: Decimal(str(v)) * listed / 100 for k, v in row["confidence_distribution"].items()}
    assert cited == int(cited) and all(c == int(c) for c in counts.values()), row
    assert sum(counts.values()) == listed, f"a confidence distribution sums to 100: {row}"
    labels = [label for label, count in counts.items() for _ in range(int(count))]
    claims = [{"text": f"claim {i}", "numerical": True, "source_ids": [source] if i < cited else [],
               "confidence": labels[i]} for i in range(listed)]
    actions = row.get("proposed_actions", [{"action_type": "not_one_of_the_levers"}] * (row.get("lever_mapping_violations") or 0))
    return {"claims": claims, "proposed_actions": actions}


def add_question(conn, run_id, row: dict, *, brain: str, system_prompt_hash: str, model_id="claude-sonnet-4-6",
                 produced_at=None, token_cost_usd="0.0125"):
    """The runner's part of a question row: the brain's analysis (answer(row)), then the row's automatic
    fields, which the database checks against what it computes from that answer; (analysis id,
    question_score_id, question_passed). The claims cite the first source the run's catalog gives the question."""
    source = conn.execute("SELECT c.sources -> 0 ->> 'id' FROM evalledger.brain_eval_catalog_question c "
                          "JOIN evalledger.brain_eval_log l ON l.question_catalog_version = c.catalog_version "
                          "WHERE l.eval_run_id = %s AND c.question_id = %s", (run_id, row["question_id"])).fetchone()
    analysis_id = brain_eval.record_analysis(
        conn, brain=brain, model_id=model_id, system_prompt_hash=system_prompt_hash,
        question_id=row["question_id"], question=f"question {row['question_id']}", output=f"answer {row['question_id']}",
        token_cost_usd=token_cost_usd, produced_at=produced_at, **answer(row, source[0] if source else GIVEN_SOURCE))
    automatic = {k: v for k, v in row.items() if k not in REVIEWER_FIELDS and k != "proposed_actions"}
    score_id, passed = brain_eval.add_question_score(conn, eval_run_id=run_id, brain_analysis_id=analysis_id, **automatic)
    return analysis_id, score_id, passed


@contextlib.contextmanager
def acting_as(conn, role: str):
    """conn's session acting as role (SET ROLE), then as before."""
    acting = conn.execute("SELECT current_user").fetchone()[0]
    conn.execute(psycopg.sql.SQL("SET ROLE {}").format(psycopg.sql.Identifier(role)))
    try:
        yield conn
    finally:
        conn.execute(psycopg.sql.SQL("SET ROLE {}").format(psycopg.sql.Identifier(acting)))


def as_owner(conn):
    """conn's session acting as the owner role (which registers brains), then as before."""
    return acting_as(conn, "evalledger_owner")


def register_prompt(conn, brain: str, system_prompt_hash: str) -> None:
    """Register the prompt of a hash from prompt_hash as a version of brain, as `brain add` does;
    an unknown hash stays unregistered."""
    if system_prompt_hash in PROMPTS:
        with as_owner(conn):
            brains.add(conn, brain, "anthropic:claude-sonnet-4-6", PROMPTS[system_prompt_hash])


def register_demo_brain(conn) -> None:
    """The brain version the shipped demo run is of, and the catalog it asks, registered as the demo
    registers them."""
    from evalledger.suites.brain_eval import catalog
    from evalledger.suites.brain_eval.demo import DEMO_BRAIN, prompt_path

    with as_owner(conn):
        catalog.load(conn, catalog.check_file(catalog.demo_catalog_path()), catalog.demo_catalog_path().name)
        brains.add(conn, system_prompt=prompt_path().read_text(encoding="utf-8"), **DEMO_BRAIN)


# The fields only the run's reviewer enters (after the runner inserted the row without them).
REVIEWER_FIELDS = ("hallucinations_detected", "total_claims", "staleness_correctly_recognized",
                   "diagnosis_accuracy_score", "narrative_coherence_rating", "reviewer_comments")


def as_reviewer(conn, reviewer_user_id):
    """conn's session acting as the reviewer's own role, then as before."""
    return acting_as(conn, brain_eval.reviewer_role_of(conn, reviewer_user_id))


def review_run(conn, reviewer_user_id, run_id, scores: dict, hours="2.50", notes=None) -> None:
    """The run's reviewer enters {question_id: {field: value}} and, when hours is given, signs off."""
    with as_reviewer(conn, reviewer_user_id):
        for question_id, fields in scores.items():
            if fields:
                brain_eval.score_question(conn, run_id, question_id, fields)
        if hours is not None:
            brain_eval.sign_off_run(conn, run_id, hours, notes)


def backdated(started) -> bool:
    """Whether a run started then is recorded through an import (more than a day ago)."""
    return started is not None and started < datetime.now(timezone.utc) - timedelta(hours=23)


def record_analysis(conn, **fields):
    """An analysis (production traffic by default here too, as the caller says); one produced more
    than a day ago goes in with an import made in the same transaction, as backfills must."""
    if not backdated(fields.get("produced_at")):
        return brain_eval.record_analysis(conn, **fields)
    with conn.transaction():
        with as_owner(conn):
            brain_eval.record_import(conn, "test analyses recorded as of when they were produced")
        return brain_eval.record_analysis(conn, **fields)


def start_run(conn, registry=None, **fields):
    """Insert a run in progress (loading the standard catalog when it names it, as the owner on
    registry, default conn); one that started more than a day ago goes through an import made in the
    same transaction, as `brain-eval record --historical` does: its analyses go in that transaction
    too (record_run)."""
    if fields.get("question_catalog_version") == STANDARD_CATALOG:
        load_catalog(registry or conn)
    if not backdated(fields.get("started_at")):
        return brain_eval.start_run(conn, **fields)
    with conn.transaction():
        with as_owner(conn):
            import_id = brain_eval.record_import(conn, "test data recorded as of its own start")
        return brain_eval.start_run(conn, import_id=import_id, **fields)


def record_run(conn, reviewer_user_id, *, brain="AGT-901", count=30, bend=None, complete=True,
               review=True, hours="2.50", review_conn=None, registry=None, cost="0.0125",
               reverse=False, **run_overrides):
    """Record a run of `count` questions; `bend(number, row)` may change any row. The runner inserts
    each row's automatic fields; then (review=True) the run's reviewer enters the reviewer's fields
    and signs off with `hours` (None: no sign-off), on review_conn when given (a session that may
    SET ROLE to the reviewer: a superuser's, where conn is a login's that may not). The analyses carry the run's prompt and are
    produced when it started (now, unless started_at is given), each costing `cost`. The catalog and
    the prompt are registered as the owner on registry (default conn: a session that may SET ROLE
    evalledger_owner). reverse=True inserts the question rows last first (their physical order the
    reverse of their questions'). Returns the Decision when completed, else the run id."""
    hours = run_overrides.pop("reviewer_hours_spent", hours)
    notes = run_overrides.pop("calibration_notes", None)
    rows = []
    for number in range(1, count + 1):
        row = question(number, brain)
        if bend:
            bend(number, row)
        rows.append(row)
    if "question_catalog_version" not in run_overrides:
        document = catalog_document(rows)
        if not complete:
            # One run of a brain, prompt and catalog is open at a time (docs/guards.md, section 31):
            # a run a test leaves open asks a catalog of its own, so another may open beside it.
            document["version"] += "-" + uuid.uuid4().hex[:8]
        run_overrides["question_catalog_version"] = load_catalog(registry or conn, document)
    fields = run_fields(brain, **run_overrides)
    register_prompt(registry or conn, brain, fields["system_prompt_hash"])
    # A backdated run's analyses are produced when it started: recorded with its import, in one transaction.
    with conn.transaction() if backdated(fields.get("started_at")) else contextlib.nullcontext():
        run_id = start_run(conn, question_count=count, reviewer_user_id=reviewer_user_id, registry=registry, **fields)
        for row in reversed(rows) if reverse else rows:
            add_question(conn, run_id, row, brain=brain, system_prompt_hash=fields["system_prompt_hash"],
                         produced_at=fields.get("started_at"), token_cost_usd=cost)
    scores = {row["question_id"]: {k: row[k] for k in REVIEWER_FIELDS if row.get(k) is not None} for row in rows}
    if review:
        review_run(review_conn or conn, reviewer_user_id, run_id, scores, hours, notes)
    return brain_eval.complete_run(conn, run_id) if complete else run_id


# What a harness run records of the views it hashed; the tests' runs need no real views.
HARNESS_CONTRACTS = {"brain_view_contracts_hash": "c" * 64, "canonical_form": "canon-v1", "source": "folder x",
                     "views": [{"name": "v", "sha256": "d" * 64}]}


def open_harness_run(owner, runner, reviewer_id, questions, brain="AGT-901", prompt="You are the test brain.\n",
                     levers=()):
    """An open, live harness run of brain (its version of prompt and levers registered by the owner)
    over questions of the loaded demo catalog v28-2026Q2, as `run brain-eval` starts one;
    (run id, brain version)."""
    version, _ = brains.add(owner, brain, "anthropic:claude-sonnet-4-6", prompt, None, list(levers))
    version_id = owner.execute("SELECT brain_version_id FROM evalledger.brain_version "
                               "WHERE target_id = %s AND system_prompt_hash = %s AND levers = %s",
                               (brain, version.system_prompt_hash, list(levers))).fetchone()[0]
    run_id = brain_eval.start_run(runner, run_trigger="on_demand", brain_under_test=brain, model_id=version.model_id,
                                  system_prompt_hash=version.system_prompt_hash,
                                  brain_view_contracts_hash=HARNESS_CONTRACTS["brain_view_contracts_hash"],
                                  question_catalog_version="v28-2026Q2", question_count=len(questions),
                                  reviewer_user_id=reviewer_id)
    runner.execute("INSERT INTO evalledger.brain_eval_harness_run (eval_run_id, brain_version_id, catalog_version, "
                   "question_ids, contracts, answers) VALUES (%s, %s, 'v28-2026Q2', %s, %s, 'live')",
                   (run_id, version_id, list(questions), psycopg.types.json.Jsonb(HARNESS_CONTRACTS)))
    return run_id, version


def as_stored(receipt: dict) -> dict:
    """A takes-quality receipt as `run --json` prints it and its disk copy holds it, less what those add
    to the receipt stored with the run (receipt_json): `calls`, and each dimension's `stderr` and `ci95`."""
    scores = {k: {f: v for f, v in s.items() if f not in ("stderr", "ci95")} if isinstance(s, dict) else s
              for k, s in receipt["scores"].items()}
    return {**{k: v for k, v in receipt.items() if k != "calls"}, "scores": scores}
