"""Judge repeats in brain-eval (issue 36, item 4) in the database, tried as the runner: each repeat
of a judge's draft a numbered row, once, within the run's K; a run of one repeat takes repeat 1
only, as before; the questions whose repeats straddle a pass criterion's threshold (the catalog's
and rubric's own) flagged by brain_eval_flaky_v1."""

from __future__ import annotations

import json

import psycopg
import pytest
from psycopg import errors
from psycopg.types.json import Jsonb

from evalledger.suites.brain_eval import brains, catalog, store

DEMO = json.loads(catalog.demo_catalog_path().read_text("utf-8"))
CONTRACTS = {"brain_view_contracts_hash": "c" * 64, "canonical_form": "canon-v1", "source": "folder x",
             "views": [{"name": "v", "sha256": "d" * 64}]}
PROMPT = "You are the action brain. Cite every number, with its source id.\n"
JUDGE = "openai:gpt-4o"
# The catalog's stale-fixture questions, which a run must hold to complete: the reviewer's diagnosis, where asked.
STALE = {"EVAL-Q03": 1, "EVAL-Q06": 1, "EVAL-Q16": 1, "EVAL-Q17": 1, "EVAL-Q30": None}


def draft(unsupported=0, diagnosis=0.5):
    return {"total_claims": 3, "unsupported_claims": [f"claim {n}" for n in range(unsupported)],
            "diagnosis_accuracy": diagnosis, "notes": "n"}


@pytest.fixture
def runs(connect_as, reviewer_id):
    """A run factory: an open harness run of AGT-902 over EVAL-Q01 asking each judge `repeats`
    times (the column left out for 1, as the runner writes it), with its one answer stored."""
    owner = connect_as("evalledger_owner")
    catalog.load(owner, DEMO, "catalog_v28-2026Q2.json")
    runner = connect_as("evalledger_runner")
    made = []

    def start(repeats: int | None, questions=("EVAL-Q01",)):
        n = len(made)
        version, _ = brains.add(owner, "AGT-902", "anthropic:claude-sonnet-4-6", PROMPT + f"Run {n}.\n", None, [])
        version_id = owner.execute("SELECT brain_version_id FROM brain_version WHERE target_id = 'AGT-902' "
                                   "ORDER BY version DESC LIMIT 1").fetchone()[0]
        run_id = store.start_run(runner, run_trigger="on_demand", brain_under_test="AGT-902", model_id=version.model_id,
                                 system_prompt_hash=version.system_prompt_hash, brain_view_contracts_hash="c" * 64,
                                 question_catalog_version="v28-2026Q2", question_count=len(questions),
                                 reviewer_user_id=reviewer_id)
        values = {"eval_run_id": run_id, "brain_version_id": version_id, "catalog_version": "v28-2026Q2",
                  "question_ids": list(questions), "contracts": Jsonb(CONTRACTS), "answers": "live"}
        if repeats is not None:
            values["repeats"] = repeats
        runner.execute(f"INSERT INTO brain_eval_harness_run ({', '.join(values)}) "
                       f"VALUES ({', '.join(f'%({k})s' for k in values)})", values)
        for question in questions:
            analysis_id = store.record_analysis(
                runner, brain="AGT-902", model_id=version.model_id, system_prompt_hash=version.system_prompt_hash,
                question_id=question, question="q", output="o",
                claims=[{"text": "x", "numerical": True, "source_ids": ["quota_attainment_emea"], "confidence": "high"}],
                proposed_actions=None, token_cost_usd=0)
            runner.execute("INSERT INTO brain_eval_harness_answer (eval_run_id, question_id, analysis_id, recorded) "
                           "VALUES (%s, %s, %s, false)", (run_id, question, analysis_id))
        made.append(run_id)
        return run_id

    return runner, start


def suggest(runner, run_id, reply, repeat_no=None, model=JUDGE, question="EVAL-Q01"):
    values = {"eval_run_id": run_id, "question_id": question, "model": model, "recorded": False,
              "response_json": Jsonb(reply)}
    if repeat_no is not None:
        values["repeat_no"] = repeat_no
    return runner.execute(f"INSERT INTO brain_eval_judge_suggestion ({', '.join(values)}) "
                          f"VALUES ({', '.join(f'%({k})s' for k in values)}) RETURNING repeat_no, contributes",
                          values).fetchone()


def test_each_repeat_is_a_numbered_draft_within_the_runs_k(runs):
    runner, start = runs
    run_id = start(3)
    assert [suggest(runner, run_id, draft(), n) for n in (1, 2, 3)] == [(1, True), (2, True), (3, True)]
    for bad in (0, 4, -1):
        with pytest.raises(psycopg.errors.CheckViolation, match="asks each judge 3 time"):
            suggest(runner, run_id, draft(), bad)
    assert runner.execute("SELECT array_agg(repeat_no ORDER BY repeat_no) FROM brain_eval_judge_suggestion "
                          "WHERE eval_run_id = %s AND model = %s", (run_id, JUDGE)).fetchone()[0] == [1, 2, 3]


def test_a_repeat_is_stored_once(runs):
    runner, start = runs
    run_id = start(2)
    suggest(runner, run_id, draft(), 2)
    with pytest.raises(errors.UniqueViolation, match="brain_eval_judge_suggestion_once"):
        suggest(runner, run_id, draft(1), 2)
    # Another judge's repeat 2 is its own.
    assert suggest(runner, run_id, draft(), 2, model="anthropic:claude-opus-4-7") == (2, True)


def test_a_run_of_one_repeat_takes_repeat_one_only_as_before(runs):
    runner, start = runs
    run_id = start(None)
    assert runner.execute("SELECT repeats FROM brain_eval_harness_run WHERE eval_run_id = %s", (run_id,)).fetchone() == (1,)
    assert suggest(runner, run_id, draft()) == (1, True)
    with pytest.raises(errors.UniqueViolation, match="brain_eval_judge_suggestion_once"):
        suggest(runner, run_id, draft())
    with pytest.raises(errors.CheckViolation, match="repeat 2 is not one of them"):
        suggest(runner, run_id, draft(), 2)


@pytest.mark.parametrize("repeats", [0, 11])
def test_k_is_one_to_ten(runs, repeats):
    runner, start = runs
    with pytest.raises(errors.CheckViolation, match="brain_eval_harness_run_repeats_range"):
        start(repeats)


def test_a_judge_whose_repeats_straddle_a_threshold_is_flagged(runs, connect_as):
    runner, start = runs
    run_id = start(3)
    # EVAL-Q01: max_hallucinations 0 and min_diagnosis_accuracy 0.5 (the catalog's own criteria).
    suggest(runner, run_id, draft(0, 0.5), 1)
    suggest(runner, run_id, draft(1, 1.0), 2)
    suggest(runner, run_id, draft(0, 0.5), 3)
    # A steady judge is not flaky, nor is one whose diagnosis stays on one side of 0.5.
    for n in (1, 2, 3):
        suggest(runner, run_id, draft(0, 1.0 if n == 2 else 0.5), n, model="anthropic:claude-opus-4-7")
    steady = start(2)
    suggest(runner, steady, draft(0, 0.0), 1)
    suggest(runner, steady, draft(0, 0.0), 2)
    # A run of one repeat is never flaky.
    single = start(None)
    suggest(runner, single, draft(2, 0.0))
    query = ("SELECT eval_run_id, question_id, judge_model, criterion, threshold::float, repeats, lowest::float, "
             "highest::float FROM brain_eval_flaky_v1 ORDER BY eval_run_id, judge_model, criterion")
    expected = [(run_id, "EVAL-Q01", JUDGE, "max_hallucinations", 0.0, 3, 0.0, 1.0)]
    for role in ("evalledger_runner", "evalledger_revops", "evalledger_auditor"):
        conn = runner if role == "evalledger_runner" else connect_as(role)
        assert conn.execute(query).fetchall() == expected, role


def test_the_agreement_view_counts_a_judges_flaky_questions(runs, connect_as):
    """judge_agreement_v2: judge_agreement_v1's columns, and beside them the questions of completed
    runs on which the judge's repeats straddle a threshold (the steady judge: none)."""
    from evalledger.suites.brain_eval import store as brain_eval
    from tests.conftest import REVIEWER_ROLE

    runner, start = runs
    run_id = start(2, ("EVAL-Q01", *STALE))
    suggest(runner, run_id, draft(0, 0.5), 1)
    suggest(runner, run_id, draft(1, 0.5), 2)
    steady = "anthropic:claude-opus-4-7"
    suggest(runner, run_id, draft(0, 0.5), 1, model=steady)
    suggest(runner, run_id, draft(0, 0.5), 2, model=steady)
    reviewer = connect_as(REVIEWER_ROLE)
    brain_eval.score_question(reviewer, run_id, "EVAL-Q01", {
        "hallucinations_detected": 0, "total_claims": 1, "narrative_coherence_rating": 4,
        "diagnosis_accuracy_score": 0.5})
    for question, diagnosis in STALE.items():
        brain_eval.score_question(reviewer, run_id, question, {
            "hallucinations_detected": 0, "total_claims": 1, "narrative_coherence_rating": 4,
            "staleness_correctly_recognized": True,
            **({} if diagnosis is None else {"diagnosis_accuracy_score": diagnosis})})
    brain_eval.sign_off_run(reviewer, run_id, "1.00")
    brain_eval.complete_run(runner, run_id)
    for role in ("evalledger_revops", "evalledger_auditor"):
        conn = connect_as(role)
        v1 = conn.execute("SELECT * FROM judge_agreement_v1 ORDER BY judge_model").fetchall()
        v2 = conn.execute("SELECT * FROM judge_agreement_v2 ORDER BY judge_model").fetchall()
        assert [r[:-1] for r in v2] == v1 and len(v1) == 2, role
        assert [(r[1], r[-1]) for r in v2] == [(steady, 0), (JUDGE, 1)], role
