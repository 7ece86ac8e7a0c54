"""The verdict policy without loopholes (issue 10): every way a run could pass with something
missing or unmeasurable, with reviewer numbers the reviewer did not enter, with analyses that are
not its own or with a backdated clock, tried as an insider would, and refused (SQLSTATE, message,
constraint, rows unchanged as the superuser sees them) or decided as a non-pass that says why."""

from __future__ import annotations

import contextlib
import json
import re
from datetime import datetime, timedelta, timezone
from decimal import Decimal

import psycopg
import pytest
from psycopg import errors
from psycopg.conninfo import make_conninfo
from psycopg.types.json import Jsonb

from evalledger.suites.brain_eval import brains, catalog
from evalledger.suites.brain_eval import store
from tests.builders import (REVIEWER_FIELDS, SHA_B, add_question, as_owner, catalog_document, load_catalog,
                            open_harness_run, question, register_prompt, review_run, run_fields, start_run)
from tests import conftest
from tests.conftest import OTHER_REVIEWER_ROLE, REVIEWER_ROLE

# The password the test fixtures give login roles, where the server asks non-installers for one.
LOGIN_PASSWORD = getattr(conftest, "TEST_PASSWORD", None)

RUN_COLUMNS = ("eval_run_id", "question_count", "completed_at", "aggregated_scores", "hard_criteria_passed",
               "soft_criteria_passed_count", "decision", "decision_rationale", "token_cost_usd",
               "reviewer_hours_spent", "calibration_notes", "created_at", "started_at", "import_id")
CLEAN_RATIONALE = "Pass: all hard criteria passed; all 4 soft criteria within threshold."


# -- helpers ------------------------------------------------------------------------------------------

@pytest.fixture
def runner(connect_as):
    return connect_as("evalledger_runner")


@pytest.fixture(autouse=True)
def standard_catalog(admin):
    """The catalog run_fields() names: a run names a loaded catalog."""
    load_catalog(admin)


@pytest.fixture
def owner(connect_as):
    return connect_as("evalledger_owner")


@contextlib.contextmanager
def refusal(error, message, constraint=None):
    """The statement in the block is refused with error (a SQLSTATE class of psycopg.errors), a
    primary message matching the regex `message` whole, and diag.constraint_name `constraint`."""
    with pytest.raises(error) as caught:
        yield caught
    assert re.fullmatch(message, caught.value.diag.message_primary), caught.value.diag.message_primary
    assert caught.value.diag.constraint_name == constraint


def state(admin, run_id) -> dict:
    """Everything the ledger holds about a run, read as the superuser (past every policy)."""
    run = admin.execute(f"SELECT {', '.join(RUN_COLUMNS)} FROM evalledger.brain_eval_log WHERE eval_run_id = %s",
                        (run_id,)).fetchone()
    questions = admin.execute("SELECT to_jsonb(q) FROM evalledger.brain_eval_question_score q "
                              "WHERE eval_run_id = %s ORDER BY question_id", (run_id,)).fetchall()
    trail = admin.execute("SELECT to_jsonb(e) FROM evalledger.brain_eval_review_entry e "
                          "WHERE eval_run_id = %s ORDER BY entry_id", (run_id,)).fetchall()
    reviews = admin.execute("SELECT to_jsonb(v) FROM evalledger.brain_eval_run_review v "
                            "WHERE eval_run_id = %s ORDER BY review_id", (run_id,)).fetchall()
    return {"run": run, "questions": questions, "trail": trail, "reviews": reviews}


def open_run(runner, reviewer_id, count=30, *, brain="AGT-901", bend=None, question_count=None, cost=None,
             catalog_version=None):
    """A legacy (non-harness) run in progress: the runner inserts each question row's automatic
    fields (question(n), bent by bend(n, row)); returns the run id and the reviewer's scores for it
    ({question_id: {field: value}}), not yet entered."""
    rows = []
    for number in range(1, count + 1):
        row = question(number, brain)
        if bend:
            bend(number, row)
        rows.append(row)
    fields = run_fields(brain, question_catalog_version=catalog_version or load_catalog(runner, catalog_document(rows)))
    register_prompt(runner, brain, fields["system_prompt_hash"])
    run_id = start_run(runner, question_count=count if question_count is None else question_count,
                       reviewer_user_id=reviewer_id, **fields)
    scores = {}
    for number, row in enumerate(rows, start=1):
        analysis_id, _, passed = add_question(runner, run_id, row, brain=brain,
                                              system_prompt_hash=fields["system_prompt_hash"],
                                              token_cost_usd=cost(number) if cost else "0.0125")
        assert passed is None  # nothing the reviewer enters is there yet
        scores[row["question_id"]] = {k: row[k] for k in REVIEWER_FIELDS if row.get(k) is not None}
    return run_id, scores


def passed_of(admin, run_id) -> dict:
    return dict(admin.execute("SELECT question_id, question_passed FROM evalledger.brain_eval_question_score "
                              "WHERE eval_run_id = %s", (run_id,)).fetchall())


def not_complete(run_id, *missing) -> str:
    """The completion refusal's message (as a regex) for the missing items, in the order it lists them."""
    return re.escape(f"evalledger: run {run_id} is not complete: {'; '.join(missing)}")


SIGN_OFF_MISSING = "the reviewer's sign-off (hours spent: evalledger review finish)"


# -- harness helpers ---------------------------------------------------------------------------------

DEMO = json.loads(catalog.demo_catalog_path().read_text("utf-8"))
CATALOG = {q["id"]: q for q in DEMO["questions"]}
STALE = [q["id"] for q in DEMO["questions"] if q["uses_stale_fixture"]]
DIAGNOSIS_TYPES = {"plan_diagnosis", "coverage_gap", "play_retrospective", "forecast_bias", "churn_diagnosis"}
PROMPT = "You are the verdict-policy test brain. Cite every number with its source id.\n"


def harness_run(owner, runner, reviewer_id, questions, brain="AGT-901"):
    """An open, live harness run of brain over the demo catalog's questions; (run id, version)."""
    catalog.load(owner, DEMO, "catalog_v28-2026Q2.json")
    return open_harness_run(owner, runner, reviewer_id, questions, brain, PROMPT,
                            ["rep_coaching"] if brain == "AGT-902" else [])


def claims_for(question_id, cited, uncited=0):
    """`cited` numerical claims citing the question's first source and `uncited` citing none;
    confidence alternates high / multi_source (50% high: inside the rubric's band)."""
    source = CATALOG[question_id]["sources"][0]["id"]
    made = [{"text": "x", "numerical": True, "source_ids": [source] if n < cited else [],
             "confidence": "high" if n % 2 == 0 else "multi_source"} for n in range(cited + uncited)]
    return made


def give_answer(runner, run_id, version, question_id, claims, cost="0.0100"):
    """The brain's answer to question_id (its analysis, then the harness answer); the analysis id."""
    analysis_id = store.record_analysis(
        runner, brain=version.target_id, model_id=version.model_id, system_prompt_hash=version.system_prompt_hash,
        question_id=question_id, question=CATALOG[question_id]["text"], output="o", claims=claims,
        token_cost_usd=cost)
    runner.execute("INSERT INTO evalledger.brain_eval_harness_answer (eval_run_id, question_id, analysis_id, recorded) "
                   "VALUES (%s, %s, %s, false)", (run_id, question_id, analysis_id))
    return analysis_id


def clean_review(question_ids, claims=2):
    """A clean review of catalog questions: no hallucination, staleness recognised where stale,
    diagnosis scored where the type has one, coherence 4."""
    return {q: {"hallucinations_detected": 0, "total_claims": claims, "narrative_coherence_rating": 4,
                **({"staleness_correctly_recognized": True} if CATALOG[q]["uses_stale_fixture"] else {}),
                **({"diagnosis_accuracy_score": 1} if CATALOG[q]["type"] in DIAGNOSIS_TYPES else {})}
            for q in question_ids}


# -- reviewer fields left NULL -----------------------------------------------------------------------

@pytest.mark.parametrize("field, number", [
    ("hallucinations_detected", 7),
    ("total_claims", 7),
    ("staleness_correctly_recognized", 3),   # EVAL-Q03 uses a stale fixture
    ("diagnosis_accuracy_score", 7),         # plan_diagnosis has a diagnosis to score
    ("narrative_coherence_rating", 7),
])
def test_a_reviewer_field_left_null_refuses_completion(admin, runner, reviewer_id, field, number):
    run_id, scores = open_run(runner, reviewer_id)
    qid = f"EVAL-Q{number:02d}"
    del scores[qid][field]
    # Not signed off: a sign-off is refused while a field is missing (tests/db/test_sign_off_once.py).
    review_run(runner, reviewer_id, run_id, scores, hours=None)
    assert passed_of(admin, run_id) == {q: (None if q == qid else True) for q in scores}
    before = state(admin, run_id)
    with refusal(errors.CheckViolation, not_complete(run_id, f"{qid}: {field}", SIGN_OFF_MISSING),
                 "brain_eval_log_complete_run_is_whole"):
        store.complete_run(runner, run_id)
    assert state(admin, run_id) == before
    assert before["run"][2] is None and before["run"][6] is None  # not completed, not decided


def test_one_refusal_lists_everything_missing_by_question(admin, runner, reviewer_id):
    run_id, scores = open_run(runner, reviewer_id, question_count=31)
    del scores["EVAL-Q02"]["total_claims"], scores["EVAL-Q02"]["narrative_coherence_rating"]
    del scores["EVAL-Q04"]["diagnosis_accuracy_score"]
    scores["EVAL-Q05"] = {}
    review_run(runner, reviewer_id, run_id, scores, hours=None)
    before = state(admin, run_id)
    with refusal(errors.CheckViolation, not_complete(
            run_id, "question_count is 31 but 30 questions are recorded",
            "EVAL-Q02: total_claims, narrative_coherence_rating", "EVAL-Q04: diagnosis_accuracy_score",
            "EVAL-Q05: hallucinations_detected, total_claims, staleness_correctly_recognized, "
            "diagnosis_accuracy_score, narrative_coherence_rating", SIGN_OFF_MISSING),
            "brain_eval_log_complete_run_is_whole"):
        store.complete_run(runner, run_id)
    assert state(admin, run_id) == before


def test_what_the_rubric_does_not_need_is_not_asked(runner, reviewer_id):
    """No diagnosis on a type without one, no staleness off a stale fixture, no lever count for
    AGT-901, no comments: the run completes and passes without them."""
    def bend(number, row):
        if number == 7:
            row.update(question_type="qbr_narrative", diagnosis_accuracy_score=None)
    run_id, scores = open_run(runner, reviewer_id, bend=bend)
    assert "diagnosis_accuracy_score" not in scores["EVAL-Q07"]
    review_run(runner, reviewer_id, run_id, scores)
    decided = store.complete_run(runner, run_id)
    assert (decided.decision, decided.decision_rationale) == ("pass", CLEAN_RATIONALE)


# -- evidence that cannot be measured ------------------------------------------------------------------

def test_no_claims_at_all_is_unmeasurable_and_fails(admin, runner, reviewer_id):
    def bend(number, row):
        row.update(total_claims=0, hallucinations_detected=0)
    run_id, scores = open_run(runner, reviewer_id, bend=bend)
    review_run(runner, reviewer_id, run_id, scores)
    assert set(passed_of(admin, run_id).values()) == {False}  # no claims to check: no question passes
    decided = store.complete_run(runner, run_id)
    assert decided.decision == "fail" and decided.hard_criteria_passed is False
    assert decided.aggregated_scores["hallucination_rate"] is None
    assert decided.decision_rationale == (
        "Fail: hard criteria missed: hallucination rate unmeasurable (no claims in the run).")


def test_a_legacy_run_without_stale_fixture_questions_fails(runner, reviewer_id):
    def bend(number, row):
        row.update(uses_stale_fixture=False, staleness_correctly_recognized=None)
    run_id, scores = open_run(runner, reviewer_id, bend=bend)
    review_run(runner, reviewer_id, run_id, scores)
    decided = store.complete_run(runner, run_id)
    assert decided.decision == "fail" and decided.hard_criteria_passed is False
    assert decided.aggregated_scores["staleness_recognition_rate"] is None
    assert decided.decision_rationale == (
        "Fail: hard criteria missed: staleness recognition unmeasurable (no stale-fixture question in the run).")


def test_a_harness_run_missing_its_catalogs_stale_questions_cannot_complete(admin, owner, runner, reviewer_id):
    asked = ("EVAL-Q01", "EVAL-Q03")
    run_id, version = harness_run(owner, runner, reviewer_id, asked)
    for qid in asked:
        give_answer(runner, run_id, version, qid, claims_for(qid, 2))
    review_run(runner, reviewer_id, run_id, clean_review(asked))
    before = state(admin, run_id)
    assert [q[0]["question_passed"] for q in before["questions"]] == [True, True]
    with refusal(errors.CheckViolation, not_complete(
            run_id, "stale-fixture questions of the catalog not in the run: EVAL-Q06, EVAL-Q16, EVAL-Q17, EVAL-Q30"),
            "brain_eval_log_complete_run_is_whole"):
        store.complete_run(runner, run_id)
    assert state(admin, run_id) == before


def test_a_run_recorded_outside_the_harness_still_holds_its_catalogs_stale_questions(admin, owner, runner,
                                                                                     reviewer_id):
    """The same run as above, its rows inserted by the runner instead of made from answers: it
    names the loaded catalog v28-2026Q2, so it must hold that catalog's stale-fixture questions."""
    catalog.load(owner, DEMO, "catalog_v28-2026Q2.json")

    def as_catalogued(number, row):
        entry = CATALOG[row["question_id"]]
        row.update(question_type=entry["type"], uses_stale_fixture=entry["uses_stale_fixture"],
                   staleness_correctly_recognized=True if entry["uses_stale_fixture"] else None,
                   diagnosis_accuracy_score=1.0 if entry["type"] in DIAGNOSIS_TYPES else None)
    run_id, scores = open_run(runner, reviewer_id, count=5, bend=as_catalogued, catalog_version="v28-2026Q2")
    review_run(runner, reviewer_id, run_id, scores)
    assert set(passed_of(admin, run_id).values()) == {True}
    before = state(admin, run_id)
    with refusal(errors.CheckViolation, not_complete(
            run_id, "stale-fixture questions of the catalog not in the run: EVAL-Q06, EVAL-Q16, EVAL-Q17, EVAL-Q30"),
            "brain_eval_log_complete_run_is_whole"):
        store.complete_run(runner, run_id)
    assert state(admin, run_id) == before


def test_agt_902s_lever_violations_are_the_databases_even_left_out(admin, connect_as, runner, reviewer_id):
    """Left out by the runner, an AGT-902 question's lever violations are still counted, from the
    answer's proposed actions: a NULL that would leave the criterion unmeasured is not the runner's
    to leave; and nobody changes the count afterwards."""
    def bend(number, row):
        if number == 7:
            row["lever_mapping_violations"] = None
            row["proposed_actions"] = [{"action_type": "discount_50_percent"}]
    run_id, scores = open_run(runner, reviewer_id, brain="AGT-902", bend=bend)
    review_run(runner, reviewer_id, run_id, scores)
    assert admin.execute("SELECT lever_mapping_violations, question_passed FROM evalledger.brain_eval_question_score "
                         "WHERE eval_run_id = %s AND question_id = 'EVAL-Q07'", (run_id,)).fetchone() == (1, False)
    before = state(admin, run_id)
    reviewer = connect_as(REVIEWER_ROLE)
    with refusal(errors.InsufficientPrivilege, "permission denied for table brain_eval_question_score"):
        reviewer.execute("UPDATE evalledger.brain_eval_question_score SET lever_mapping_violations = 0 "
                         "WHERE eval_run_id = %s AND question_id = 'EVAL-Q07'", (run_id,))
    with refusal(errors.InsufficientPrivilege, "permission denied for table brain_eval_question_score"):
        connect_as("evalledger_owner").execute(
            "UPDATE evalledger.brain_eval_question_score SET lever_mapping_violations = 0 "
            "WHERE eval_run_id = %s AND question_id = 'EVAL-Q07'", (run_id,))
    assert state(admin, run_id) == before
    decided = store.complete_run(runner, run_id)
    assert (decided.decision, decided.decision_rationale) == (
        "fail", "Fail: hard criteria missed: lever mapping 3.3pp below 100%.")


# -- the reviewer's numbers come from the reviewer ------------------------------------------------------

@pytest.mark.parametrize("field, value", [
    ("hallucinations_detected", 0), ("total_claims", 10), ("staleness_correctly_recognized", True),
    ("diagnosis_accuracy_score", 1.0), ("narrative_coherence_rating", 5), ("reviewer_comments", "fine"),
])
def test_the_runner_cannot_insert_a_reviewer_number(admin, runner, reviewer_id, field, value):
    run_id, _ = open_run(runner, reviewer_id, count=2)
    before = state(admin, run_id)
    row = {k: v for k, v in question(3).items() if k not in REVIEWER_FIELDS}  # EVAL-Q03: a stale fixture
    analysis_id = store.record_analysis(runner, brain="AGT-901", model_id="claude-sonnet-4-6",
                                        system_prompt_hash=run_fields()["system_prompt_hash"],
                                        question_id="EVAL-Q03", question="q", output="o", token_cost_usd=0)
    with refusal(errors.InsufficientPrivilege, re.escape(
            f"evalledger: brain_eval_question_score.{field} is the reviewer's to enter, not the runner's")):
        store.add_question_score(runner, eval_run_id=run_id, brain_analysis_id=analysis_id, **row, **{field: value})
    assert state(admin, run_id) == before


def test_the_runner_cannot_insert_all_reviewer_numbers_at_once(admin, runner, reviewer_id):
    run_id, _ = open_run(runner, reviewer_id, count=0, question_count=1)
    row = question(3)
    analysis_id = store.record_analysis(runner, brain="AGT-901", model_id="claude-sonnet-4-6",
                                        system_prompt_hash=run_fields()["system_prompt_hash"],
                                        question_id="EVAL-Q03", question="q", output="o", token_cost_usd=0)
    with refusal(errors.InsufficientPrivilege, re.escape(
            "evalledger: brain_eval_question_score.hallucinations_detected, total_claims, "
            "staleness_correctly_recognized, diagnosis_accuracy_score, narrative_coherence_rating "
            "is the reviewer's to enter, not the runner's")):
        store.add_question_score(runner, eval_run_id=run_id, brain_analysis_id=analysis_id, **row)
    assert state(admin, run_id)["questions"] == []


@pytest.mark.parametrize("supplied", [{"reviewer_hours_spent": "2.00"},
                                      {"calibration_notes": {"citation_rate": "typed by the runner"}}])
def test_the_runner_cannot_insert_the_reviewers_hours_or_notes(admin, runner, reviewer_id, supplied):
    runs = admin.execute("SELECT count(*) FROM evalledger.brain_eval_log").fetchone()[0]
    register_prompt(runner, "AGT-901", run_fields()["system_prompt_hash"])
    with refusal(errors.InsufficientPrivilege, re.escape(
            "evalledger: brain_eval_log.reviewer_hours_spent and calibration_notes are the reviewer's to enter, "
            "not the runner's")):
        store.start_run(runner, question_count=30, reviewer_user_id=reviewer_id, **run_fields(), **supplied)
    assert admin.execute("SELECT count(*) FROM evalledger.brain_eval_log").fetchone()[0] == runs


@pytest.mark.parametrize("who", ["runner", "owner", "other reviewer", "superuser"])
def test_only_the_runs_reviewer_enters_reviewer_numbers(admin, connect_as, runner, reviewer_id, reviewers, who):
    run_id, _ = open_run(runner, reviewer_id, count=3)
    before = state(admin, run_id)
    update = ("UPDATE evalledger.brain_eval_question_score SET hallucinations_detected = 0, total_claims = 10 "
              "WHERE eval_run_id = %s AND question_id = 'EVAL-Q01'")
    if who == "runner":
        with refusal(errors.InsufficientPrivilege, "permission denied for table brain_eval_question_score"):
            runner.execute(update, (run_id,))
    elif who == "owner":  # it holds SELECT and the registries' INSERT only (issue 17)
        with refusal(errors.InsufficientPrivilege, "permission denied for table brain_eval_question_score"):
            connect_as("evalledger_owner").execute(update, (run_id,))
    elif who == "superuser":
        with refusal(errors.InsufficientPrivilege, "evalledger: only the run's reviewer scores its questions"):
            admin.execute(update, (run_id,))
    else:
        assert connect_as(OTHER_REVIEWER_ROLE).execute(update, (run_id,)).rowcount == 0
    assert state(admin, run_id) == before
    assert before["trail"] == []


@pytest.mark.parametrize("role", ["evalledger_owner", "evalledger_runner", REVIEWER_ROLE, None])
def test_nobody_writes_the_trail_directly(admin, connect_as, runner, reviewer_id, role):
    run_id, _ = open_run(runner, reviewer_id, count=1)
    conn = connect_as(role) if role else admin
    insert = ("INSERT INTO evalledger.brain_eval_review_entry (eval_run_id, question_id, field, value, "
              "reviewer_user_id, acting_role, entered_by, run_created_at) "
              "VALUES (%s, 'EVAL-Q01', 'total_claims', '10', %s, %s, %s, now())")
    if role is None:  # the superuser has the privilege; the trail's trigger refuses it
        with refusal(errors.InsufficientPrivilege,
                     "evalledger: brain_eval_review_entry is written by the ledger as a reviewer scores, not directly"):
            conn.execute(insert, (run_id, reviewer_id, REVIEWER_ROLE, REVIEWER_ROLE))
    else:
        with refusal(errors.InsufficientPrivilege, "permission denied for table brain_eval_review_entry"):
            conn.execute(insert, (run_id, reviewer_id, REVIEWER_ROLE, REVIEWER_ROLE))
    assert admin.execute("SELECT count(*) FROM evalledger.brain_eval_review_entry").fetchone()[0] == 0


def test_the_trail_shows_who_entered_each_value(admin, dsn, connect_as, runner, reviewer_id):
    run_id, _ = open_run(runner, reviewer_id, count=2)
    login = admin.execute("SELECT session_user").fetchone()[0]
    with psycopg.connect(make_conninfo(dsn, user=REVIEWER_ROLE, password=LOGIN_PASSWORD), autocommit=True) as own_login:
        assert store.score_question(own_login, run_id, "EVAL-Q01",
                                    {"hallucinations_detected": 0, "total_claims": 10}) == [
            "staleness_correctly_recognized", "diagnosis_accuracy_score", "narrative_coherence_rating"]
        store.score_question(own_login, run_id, "EVAL-Q01", {"hallucinations_detected": 0, "total_claims": 12})
    # The same reviewer acting through another login (SET ROLE): the trail names both.
    store.score_question(connect_as(REVIEWER_ROLE), run_id, "EVAL-Q01", {"narrative_coherence_rating": 4})
    trail = admin.execute(
        "SELECT question_id, field, value, reviewer_user_id, acting_role, entered_by, entered_at <= now() "
        "FROM evalledger.brain_eval_review_entry WHERE eval_run_id = %s ORDER BY entry_id", (run_id,)).fetchall()
    assert trail == [
        ("EVAL-Q01", "hallucinations_detected", 0, reviewer_id, REVIEWER_ROLE, REVIEWER_ROLE, True),
        ("EVAL-Q01", "total_claims", 10, reviewer_id, REVIEWER_ROLE, REVIEWER_ROLE, True),
        ("EVAL-Q01", "total_claims", 12, reviewer_id, REVIEWER_ROLE, REVIEWER_ROLE, True),  # only what changed
        ("EVAL-Q01", "narrative_coherence_rating", 4, reviewer_id, REVIEWER_ROLE, login, True),
    ]
    # Auditors read it; it is never edited, not even by the superuser.
    assert connect_as("evalledger_auditor").execute(
        "SELECT count(*) FROM evalledger.brain_eval_review_entry WHERE eval_run_id = %s", (run_id,)).fetchone()[0] == 4
    for statement in ("UPDATE evalledger.brain_eval_review_entry SET entered_by = 'someone'",
                      "DELETE FROM evalledger.brain_eval_review_entry"):
        with pytest.raises(errors.InsufficientPrivilege, match="append-only"):
            admin.execute(statement)
    assert len(state(admin, run_id)["trail"]) == 4


# -- analyses belong to their run -----------------------------------------------------------------------

@pytest.mark.parametrize("other", [
    {"brain": "AGT-902"}, {"model_id": "claude-opus-4-7"}, {"system_prompt_hash": SHA_B},
    {"question_id": "EVAL-Q02"}, {"question_id": None}, {"origin": "production"},
])
def test_a_question_row_takes_only_its_runs_own_analysis(admin, runner, reviewer_id, other):
    run_id, _ = open_run(runner, reviewer_id, count=0, question_count=1)
    analysis = {"brain": "AGT-901", "model_id": "claude-sonnet-4-6",
                "system_prompt_hash": run_fields()["system_prompt_hash"], "question_id": "EVAL-Q01",
                "question": "q", "output": "o", "token_cost_usd": "0.01", **other}
    if other.get("brain") == "AGT-902":
        # Another brain carrying the open run's prompt would make it that brain's too: refused first.
        with refusal(errors.CheckViolation, re.escape(
                f"evalledger: AGT-902 cannot take on system prompt {analysis['system_prompt_hash']} while a run of it "
                "under another brain is open"), "brain_prompt_no_open_run_of_another_brain"):
            store.record_analysis(runner, **analysis)
        assert admin.execute("SELECT count(*) FROM evalledger.brain_analysis_log").fetchone()[0] == 0
        return
    analysis_id = store.record_analysis(runner, **analysis)
    row = {k: v for k, v in question(1).items() if k not in REVIEWER_FIELDS}
    with refusal(errors.CheckViolation, re.escape(
            f"evalledger: analysis {analysis_id} is not an eval answer of run {run_id}'s brain, model and prompt "
            f"to EVAL-Q01"), "brain_eval_question_score_analysis_of_the_run"):
        store.add_question_score(runner, eval_run_id=run_id, brain_analysis_id=analysis_id, **row)
    assert state(admin, run_id)["questions"] == []


def test_an_analysis_answers_one_question_row_and_its_cost_counts_once(admin, runner, reviewer_id):
    # The other run starts first: its analyses must be produced since it started.
    other_run, _ = open_run(runner, reviewer_id, count=0, question_count=1)
    run_id, scores = open_run(runner, reviewer_id, cost=lambda n: f"0.{n:04d}")
    shared = admin.execute("SELECT brain_analysis_id FROM evalledger.brain_eval_question_score "
                           "WHERE eval_run_id = %s AND question_id = 'EVAL-Q01'", (run_id,)).fetchone()[0]
    row = {k: v for k, v in question(1).items() if k not in REVIEWER_FIELDS}
    with refusal(errors.UniqueViolation, r"duplicate key value violates unique constraint "
                                         r"\"brain_eval_question_score_analysis_once\"",
                 "brain_eval_question_score_analysis_once"):
        store.add_question_score(runner, eval_run_id=other_run, brain_analysis_id=shared, **row)
    assert state(admin, other_run)["questions"] == []
    # A retried answer the run does not use costs the run nothing.
    store.record_analysis(runner, brain="AGT-901", model_id="claude-sonnet-4-6",
                          system_prompt_hash=run_fields()["system_prompt_hash"], question_id="EVAL-Q01",
                          question="q", output="retry", token_cost_usd="5.0000")
    review_run(runner, reviewer_id, run_id, scores)
    decided = store.complete_run(runner, run_id)
    assert decided.token_cost_usd == sum(Decimal(f"0.{n:04d}") for n in range(1, 31)) == Decimal("0.0465")


# -- the clock is the database's ------------------------------------------------------------------------

def now():
    return datetime.now(timezone.utc)


def test_a_run_cannot_start_in_the_future(admin, runner, reviewer_id):
    register_prompt(runner, "AGT-901", run_fields()["system_prompt_hash"])
    with refusal(errors.CheckViolation, r"evalledger: started_at .* is in the future",
                 "brain_eval_log_started_not_in_future"):
        store.start_run(runner, question_count=30, reviewer_user_id=reviewer_id,
                        **run_fields(started_at=now() + timedelta(minutes=5)))
    assert admin.execute("SELECT count(*) FROM evalledger.brain_eval_log").fetchone()[0] == 0


def test_a_backdated_run_is_refused_without_an_import(admin, runner, reviewer_id):
    register_prompt(runner, "AGT-901", run_fields()["system_prompt_hash"])
    with refusal(errors.CheckViolation, r"evalledger: started_at .* is more than a day before the run is recorded",
                 "brain_eval_log_started_recently") as caught:
        store.start_run(runner, question_count=30, reviewer_user_id=reviewer_id,
                        **run_fields(started_at=now() - timedelta(days=1, minutes=5)))
    assert caught.value.diag.column_name == "started_at"
    assert admin.execute("SELECT count(*) FROM evalledger.brain_eval_log").fetchone()[0] == 0
    # Just inside the day is a run recorded late, not a backdated one.
    run_id = store.start_run(runner, question_count=30, reviewer_user_id=reviewer_id,
                             **run_fields(started_at=now() - timedelta(hours=23, minutes=55)))
    assert admin.execute("SELECT import_id FROM evalledger.brain_eval_log WHERE eval_run_id = %s",
                         (run_id,)).fetchone() == (None,)


def test_an_import_of_another_transaction_does_not_admit_a_backdated_run(admin, owner, runner, reviewer_id):
    register_prompt(runner, "AGT-901", run_fields()["system_prompt_hash"])
    import_id = store.record_import(owner, "last year's runs from the old tracker")
    with refusal(errors.CheckViolation, r"evalledger: started_at .* is more than a day before the run is recorded",
                 "brain_eval_log_started_recently"):
        store.start_run(runner, question_count=30, reviewer_user_id=reviewer_id, import_id=import_id,
                        **run_fields(started_at=now() - timedelta(days=400)))
    # Nor does it mark a recent run as imported.
    with refusal(errors.CheckViolation, re.escape(f"evalledger: import {import_id} was not made in this transaction"),
                 "brain_eval_log_import_in_transaction"):
        store.start_run(runner, question_count=30, reviewer_user_id=reviewer_id, import_id=import_id, **run_fields())
    assert admin.execute("SELECT count(*) FROM evalledger.brain_eval_log").fetchone()[0] == 0


def test_an_import_in_the_same_transaction_admits_a_historical_run(admin, runner, reviewer_id):
    started = now() - timedelta(days=400)
    register_prompt(runner, "AGT-901", run_fields()["system_prompt_hash"])
    with runner.transaction():
        with as_owner(runner):
            import_id = store.record_import(runner, "last year's runs from the old tracker", "runs-2025.json")
            txid = runner.execute("SELECT txid_current()").fetchone()[0]
        run_id = store.start_run(runner, question_count=30, reviewer_user_id=reviewer_id, import_id=import_id,
                                 **run_fields(started_at=started))
    login = admin.execute("SELECT session_user").fetchone()[0]
    assert admin.execute("SELECT reason, source_file, imported_by, txid FROM evalledger.brain_eval_import "
                         "WHERE import_id = %s", (import_id,)).fetchone() == (
        "last year's runs from the old tracker", "runs-2025.json", login, txid)
    started_at, created_at, recorded_import = admin.execute(
        "SELECT started_at, created_at, import_id FROM evalledger.brain_eval_log WHERE eval_run_id = %s",
        (run_id,)).fetchone()
    assert started_at == started and recorded_import == import_id
    assert created_at > now() - timedelta(minutes=5)  # the tier clock is the recording time, not started_at


def test_a_supplied_recording_time_is_replaced_by_the_databases(admin, owner, runner, reviewer_id):
    long_ago = datetime(2001, 1, 1, tzinfo=timezone.utc)
    fields = run_fields()
    register_prompt(runner, "AGT-901", fields["system_prompt_hash"])
    run_id = runner.execute(
        "INSERT INTO evalledger.brain_eval_log (run_trigger, brain_under_test, model_id, system_prompt_hash, "
        "brain_view_contracts_hash, question_catalog_version, question_count, started_at, reviewer_user_id, "
        "created_at) VALUES (%(run_trigger)s, %(brain_under_test)s, %(model_id)s, %(system_prompt_hash)s, "
        "%(brain_view_contracts_hash)s, %(question_catalog_version)s, 1, now(), %(reviewer)s, %(long_ago)s) "
        "RETURNING eval_run_id", {**fields, "reviewer": reviewer_id, "long_ago": long_ago}).fetchone()[0]
    analysis_id = store.record_analysis(runner, brain="AGT-901", model_id=fields["model_id"],
                                        system_prompt_hash=fields["system_prompt_hash"], question_id="EVAL-Q06",
                                        question="q", output="o", token_cost_usd=0)
    runner.execute(
        "INSERT INTO evalledger.brain_eval_question_score (eval_run_id, question_id, brain_analysis_id, question_type, "
        "uses_stale_fixture, created_at, run_created_at) "
        "VALUES (%s, 'EVAL-Q06', %s, 'plan_diagnosis', false, %s, %s)",
        (run_id, analysis_id, long_ago, long_ago))
    import_id = owner.execute("INSERT INTO evalledger.brain_eval_import (reason, imported_by, txid, created_at) "
                              "VALUES ('r', 'someone_else', 1, %s) RETURNING import_id", (long_ago,)).fetchone()[0]
    recent = now() - timedelta(minutes=5)
    assert admin.execute("SELECT created_at FROM evalledger.brain_eval_log WHERE eval_run_id = %s",
                         (run_id,)).fetchone()[0] > recent
    run_created, q_created, q_run_created = admin.execute(
        "SELECT l.created_at, q.created_at, q.run_created_at FROM evalledger.brain_eval_question_score q "
        "JOIN evalledger.brain_eval_log l USING (eval_run_id) WHERE q.eval_run_id = %s", (run_id,)).fetchone()
    assert q_created > recent and q_run_created == run_created
    login = admin.execute("SELECT session_user").fetchone()[0]
    imported_by, txid, created_at = admin.execute(
        "SELECT imported_by, txid, created_at FROM evalledger.brain_eval_import WHERE import_id = %s",
        (import_id,)).fetchone()
    assert imported_by == login and txid != 1 and created_at > recent


# -- thresholds on exact values -------------------------------------------------------------------------

def spread(hallucinations, claims, count=30):
    """A bend spreading `hallucinations` over `claims` claims across `count` questions."""
    def bend(number, row):
        last = number == count
        per_claims, per_hallucinations = claims // count + 1, hallucinations // count + 1
        row["total_claims"] = claims - per_claims * (count - 1) if last else per_claims
        row["hallucinations_detected"] = (hallucinations - per_hallucinations * (count - 1) if last
                                          else per_hallucinations)
    return bend


def stored_rate(admin, run_id) -> Decimal:
    """The run's hallucination_rate exactly as aggregated_scores holds it."""
    return admin.execute("SELECT (aggregated_scores ->> 'hallucination_rate')::numeric FROM evalledger.brain_eval_log "
                         "WHERE eval_run_id = %s", (run_id,)).fetchone()[0]


def test_a_hallucination_rate_that_rounds_to_two_percent_still_fails(admin, runner, reviewer_id):
    run_id, scores = open_run(runner, reviewer_id, bend=spread(1000, 49999))
    assert sum(s["total_claims"] for s in scores.values()) == 49999
    assert sum(s["hallucinations_detected"] for s in scores.values()) == 1000
    review_run(runner, reviewer_id, run_id, scores)
    decided = store.complete_run(runner, run_id)
    stored = stored_rate(admin, run_id)
    assert round(stored, 6) == Decimal("0.020000") and stored > Decimal("0.02")  # stored unrounded
    assert decided.hard_criteria_passed is False and decided.decision == "fail"
    assert decided.decision_rationale == "Fail: hard criteria missed: hallucination rate 2.00004% above the 2% limit."


def test_a_hallucination_rate_of_exactly_two_percent_passes(admin, runner, reviewer_id):
    run_id, scores = open_run(runner, reviewer_id, bend=spread(1000, 50000))
    review_run(runner, reviewer_id, run_id, scores)
    decided = store.complete_run(runner, run_id)
    stored = stored_rate(admin, run_id)
    assert stored == Decimal("0.02")
    assert decided.hard_criteria_passed is True
    assert (decided.decision, decided.decision_rationale) == ("pass", CLEAN_RATIONALE)


# -- question_passed ----------------------------------------------------------------------------------------

def test_question_passed_waits_for_the_reviewer_then_uses_the_catalogs_own_criteria(admin, owner, runner,
                                                                                      reviewer_id):
    """18 of 19 numerical claims cited (0.9474): enough for a plan_diagnosis question (0.90), not
    for a forecast_bias one (the catalog says 0.95); an expansion question needs no diagnosis."""
    asked = ("EVAL-Q01", "EVAL-Q13", "EVAL-Q21")
    run_id, version = harness_run(owner, runner, reviewer_id, asked)
    for qid in asked:
        give_answer(runner, run_id, version, qid, claims_for(qid, 18, uncited=1))
    rows = admin.execute("SELECT question_id, question_type, citation_rate, question_passed, hallucinations_detected, "
                         "total_claims, narrative_coherence_rating FROM evalledger.brain_eval_question_score "
                         "WHERE eval_run_id = %s ORDER BY question_id", (run_id,)).fetchall()
    assert rows == [("EVAL-Q01", "plan_diagnosis", Decimal("0.9474"), None, None, None, None),
                    ("EVAL-Q13", "forecast_bias", Decimal("0.9474"), None, None, None, None),
                    ("EVAL-Q21", "expansion_qualification", Decimal("0.9474"), None, None, None, None)]
    review = clean_review(asked, claims=19)
    partial = {q: {k: v for k, v in fields.items() if k != "narrative_coherence_rating"}
               for q, fields in review.items()}
    review_run(runner, reviewer_id, run_id, partial, hours=None)
    assert passed_of(admin, run_id) == dict.fromkeys(asked)  # still missing coherence: not decided
    review_run(runner, reviewer_id, run_id, {q: {"narrative_coherence_rating": 4} for q in asked}, hours=None)
    assert "diagnosis_accuracy_score" not in review["EVAL-Q21"]
    assert passed_of(admin, run_id) == {"EVAL-Q01": True, "EVAL-Q13": False, "EVAL-Q21": True}


# -- the reviewer's sign-off ------------------------------------------------------------------------------

def test_only_the_runs_reviewer_signs_off(admin, connect_as, runner, reviewer_id):
    run_id, _ = open_run(runner, reviewer_id, count=1)
    only = re.escape(f"evalledger: only the run's reviewer signs off run {run_id}")
    with refusal(errors.InsufficientPrivilege, only):
        store.sign_off_run(connect_as(OTHER_REVIEWER_ROLE), run_id, "1.00")
    for role in ("evalledger_owner", "evalledger_runner"):  # neither holds INSERT on it (issue 17: the owner's)
        with refusal(errors.InsufficientPrivilege, "permission denied for table brain_eval_run_review"):
            store.sign_off_run(connect_as(role), run_id, "1.00")
    assert state(admin, run_id)["reviews"] == []


def test_the_sign_off_is_before_completion(admin, connect_as, runner, reviewer_id):
    run_id, scores = open_run(runner, reviewer_id)
    review_run(runner, reviewer_id, run_id, scores)
    store.complete_run(runner, run_id)
    before = state(admin, run_id)
    with refusal(errors.InsufficientPrivilege, re.escape(f"evalledger: run {run_id} is complete: its review is final")):
        store.sign_off_run(connect_as(REVIEWER_ROLE), run_id, "9.00")
    assert state(admin, run_id) == before


@pytest.mark.parametrize("notes, error, message, constraint", [
    ({"accuracy": "x", "hallucination_rate": "checked every claim"}, errors.CheckViolation,
     "evalledger: calibration notes name no dimension of the run's rubric: accuracy", None),
    ({"citation_rate": "   "}, errors.CheckViolation,
     'new row for relation "brain_eval_run_review" violates check constraint "brain_eval_run_review_notes_shape"',
     "brain_eval_run_review_notes_shape"),
    ({"citation_rate": 3}, errors.CheckViolation,
     'new row for relation "brain_eval_run_review" violates check constraint "brain_eval_run_review_notes_shape"',
     "brain_eval_run_review_notes_shape"),
])
def test_calibration_notes_are_keyed_by_the_rubrics_dimensions(admin, connect_as, runner, reviewer_id,
                                                              notes, error, message, constraint):
    run_id, scores = open_run(runner, reviewer_id, count=1)
    review_run(runner, reviewer_id, run_id, scores, hours=None)  # scored: a sign-off may follow
    with refusal(error, re.escape(message), constraint) as caught:
        store.sign_off_run(connect_as(REVIEWER_ROLE), run_id, "1.00", notes)
    if constraint is None:
        assert caught.value.diag.column_name == "calibration_notes"
    assert state(admin, run_id)["reviews"] == []


def test_completion_copies_the_latest_sign_off_onto_the_run(admin, connect_as, runner, reviewer_id):
    run_id, scores = open_run(runner, reviewer_id)
    review_run(runner, reviewer_id, run_id, scores, hours="1.00", notes={"citation_rate": "first pass"})
    reviewer = connect_as(REVIEWER_ROLE)
    # What the database stamps is not the caller's to supply.
    reviewer.execute("INSERT INTO evalledger.brain_eval_run_review (eval_run_id, reviewer_hours_spent, "
                     "calibration_notes, reviewer_user_id, entered_by, created_at) VALUES (%s, 3.25, %s, %s, "
                     "'someone_else', '2001-01-01')",
                     (run_id, Jsonb({"hallucination_rate": "every claim traced", "citation_rate": "ok"}),
                      connect_as("evalledger_runner").execute("SELECT gen_random_uuid()").fetchone()[0]))
    login = admin.execute("SELECT session_user").fetchone()[0]
    latest = admin.execute("SELECT reviewer_user_id, entered_by, created_at > now() - interval '5 minutes' "
                           "FROM evalledger.brain_eval_run_review WHERE eval_run_id = %s "
                           "ORDER BY review_id DESC LIMIT 1", (run_id,)).fetchone()
    assert latest == (reviewer_id, login, True)
    store.complete_run(runner, run_id)
    assert admin.execute("SELECT reviewer_hours_spent, calibration_notes FROM evalledger.brain_eval_log "
                         "WHERE eval_run_id = %s", (run_id,)).fetchone() == (
        Decimal("3.25"), {"hallucination_rate": "every claim traced", "citation_rate": "ok"})


def test_completion_needs_the_sign_off(admin, runner, reviewer_id):
    run_id, scores = open_run(runner, reviewer_id)
    review_run(runner, reviewer_id, run_id, scores, hours=None)
    before = state(admin, run_id)
    with refusal(errors.CheckViolation, not_complete(run_id, SIGN_OFF_MISSING), "brain_eval_log_complete_run_is_whole"):
        store.complete_run(runner, run_id)
    assert state(admin, run_id) == before


# -- a harness run end to end ----------------------------------------------------------------------------

def test_a_harness_run_from_answers_to_decision(admin, owner, connect_as, runner, reviewer_id):
    asked = ("EVAL-Q01", *STALE)
    run_id, version = harness_run(owner, runner, reviewer_id, asked)
    row = {k: v for k, v in question(1).items() if k not in REVIEWER_FIELDS}
    analyses = [give_answer(runner, run_id, version, qid, claims_for(qid, 2)) for qid in asked]

    # The runner inserts no question row of a harness run: the database made one per answer.
    spare = store.record_analysis(runner, brain="AGT-901", model_id=version.model_id,
                                  system_prompt_hash=version.system_prompt_hash, question_id="EVAL-Q01",
                                  question="q", output="o", token_cost_usd=0)
    with refusal(errors.InsufficientPrivilege, re.escape(
            f"evalledger: run {run_id} is a harness run: its question rows come from the brain's answers")):
        store.add_question_score(runner, eval_run_id=run_id, brain_analysis_id=spare, **row)
    rows = admin.execute("SELECT question_id, brain_analysis_id, question_type, uses_stale_fixture, citation_rate, "
                         "hallucinations_detected, total_claims, staleness_correctly_recognized, "
                         "diagnosis_accuracy_score, narrative_coherence_rating, question_passed "
                         "FROM evalledger.brain_eval_question_score WHERE eval_run_id = %s ORDER BY question_id",
                         (run_id,)).fetchall()
    assert rows == [(qid, analysis, CATALOG[qid]["type"], CATALOG[qid]["uses_stale_fixture"], Decimal("1.0000"),
                     None, None, None, None, None, None) for qid, analysis in sorted(zip(asked, analyses))]

    # Nothing reviewed yet: one refusal names every question's missing fields and the sign-off.
    review = clean_review(asked)
    with refusal(errors.CheckViolation, not_complete(run_id, *[
            f"{qid}: " + ", ".join(f for f in ("hallucinations_detected", "total_claims",
                                                "staleness_correctly_recognized", "diagnosis_accuracy_score",
                                                "narrative_coherence_rating") if f in review[qid])
            for qid in sorted(asked)], SIGN_OFF_MISSING), "brain_eval_log_complete_run_is_whole"):
        store.complete_run(runner, run_id)

    notes = {"staleness_recognition_rate": "all five stale sources flagged"}
    review_run(runner, reviewer_id, run_id, review, hours="1.50", notes=notes)
    assert set(passed_of(admin, run_id).values()) == {True}
    decided = store.complete_run(runner, run_id)
    assert (decided.decision, decided.hard_criteria_passed, decided.soft_criteria_passed_count) == ("pass", True, 4)
    assert decided.decision_rationale == CLEAN_RATIONALE
    assert decided.token_cost_usd == Decimal("0.0600")
    assert decided.aggregated_scores["hallucination_rate"] == 0
    assert decided.aggregated_scores["staleness_recognition_rate"] == 1
    assert decided.aggregated_scores["lever_mapping_correctness"] is None  # AGT-901: not a criterion
    assert admin.execute("SELECT reviewer_hours_spent, calibration_notes FROM evalledger.brain_eval_log "
                         "WHERE eval_run_id = %s", (run_id,)).fetchone() == (Decimal("1.50"), notes)
    entered = admin.execute("SELECT count(*), count(DISTINCT acting_role), min(acting_role) "
                            "FROM evalledger.brain_eval_review_entry WHERE eval_run_id = %s", (run_id,)).fetchone()
    assert entered == (sum(len(fields) for fields in review.values()), 1, REVIEWER_ROLE)

