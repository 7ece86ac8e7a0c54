"""Every score the database can compute from stored rows is computed by it. The
automatic scores of a recorded run's question rows (citation rate, confidence distribution, lever
violations) are computed at INSERT from the analysis, as for a harness run, and a supplied value
that disagrees is refused; a reviewer's claim count is bounded by the answer the database holds,
and diagnosis accuracy is refused where it does not apply. Tried as the runner's and the
reviewer's own logins (docs/guards.md, section 19)."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest
from psycopg import errors

from evalledger.core.errors import EvalledgerError
from evalledger.suites.brain_eval import recording, store
from evalledger.suites.brain_eval.demo import fixture_path
from tests.builders import (BRAIN_PROMPTS, IN_BAND, add_question, answer, catalog_document, load_catalog, question,
                            register_demo_brain, register_prompt, run_fields)
from tests.conftest import REVIEWER_ROLE
from tests.db.insider_logins import logins, refused  # noqa: F401 (fixture)


@pytest.fixture(autouse=True)
def registered_prompts(admin):
    for brain, prompt in BRAIN_PROMPTS.items():
        register_prompt(admin, brain, prompt)


def open_run(admin, runner, reviewer_id, rows):
    version = load_catalog(admin, catalog_document(rows))
    return store.start_run(runner, question_count=len(rows), reviewer_user_id=reviewer_id,
                           **run_fields(question_catalog_version=version))


@pytest.mark.parametrize("claimed, says", [
    ({"citation_rate": 1}, r"citation_rate 1\.0000 \(the answer gives 0\.9000\)"),
    ({"confidence_distribution": dict(IN_BAND)},
     r"confidence_distribution \{.*\} \(the answer gives \{.*\"high_confidence_pct\": 90\.00.*\}\)"),
])
def test_a_supplied_automatic_score_that_the_answer_does_not_give_is_refused(admin, logins, reviewer_id, claimed, says):
    runner = logins("runner")
    row = question(6)
    row.update(citation_rate=0.9, confidence_distribution={"high_confidence_pct": 90, "multi_source_pct": 0,
                                                          "inference_pct": 0, "speculation_pct": 10})
    run_id = open_run(admin, runner, reviewer_id, [row])
    analysis = store.record_analysis(runner, brain="AGT-901", model_id="claude-sonnet-4-6",
                                     system_prompt_hash=BRAIN_PROMPTS["AGT-901"], question_id="EVAL-Q06",
                                     question="q", output="o", token_cost_usd="0.01", **answer(row))
    automatic = {k: v for k, v in row.items() if k in ("question_id", "question_type", "uses_stale_fixture")}
    with refused(admin, errors.CheckViolation, rf"evalledger: brain_eval_question_score\.{says}: computed by the "
                 r"database from the answer", "brain_eval_question_score_automatic_scores_computed"):
        store.add_question_score(runner, eval_run_id=run_id, brain_analysis_id=analysis, **automatic, **claimed)
    # Left out, the database writes what the answer gives.
    store.add_question_score(runner, eval_run_id=run_id, brain_analysis_id=analysis, **automatic)
    assert admin.execute("SELECT citation_rate, confidence_distribution ->> 'high_confidence_pct' "
                         "FROM evalledger.brain_eval_question_score WHERE eval_run_id = %s", (run_id,)).fetchone() \
        == (Decimal("0.9000"), "90.00")


def test_an_answer_whose_claims_cannot_be_scored_is_not_taken(admin, logins, reviewer_id):
    """The claims of main's demo file ({"text", "cited"}: no numerical flag, no sources, no label)."""
    runner = logins("runner")
    run_id = open_run(admin, runner, reviewer_id, [question(6)])
    analysis = store.record_analysis(runner, brain="AGT-901", model_id="claude-sonnet-4-6",
                                     system_prompt_hash=BRAIN_PROMPTS["AGT-901"], question_id="EVAL-Q06",
                                     question="q", output="o", token_cost_usd="0.01",
                                     claims=[{"text": "claim 1", "cited": True}])
    with refused(admin, errors.CheckViolation, rf"evalledger: analysis {analysis} cannot be scored: claims\[0\]"
                 r"\.numerical is missing, not true or false", "brain_eval_question_score_answer_scorable"):
        store.add_question_score(runner, eval_run_id=run_id, brain_analysis_id=analysis, question_id="EVAL-Q06",
                                 question_type="plan_diagnosis", uses_stale_fixture=False, citation_rate=1,
                                 confidence_distribution=dict(IN_BAND))


@pytest.fixture
def three_claims(admin, logins, reviewer_id):
    """An open run of one question whose stored answer lists 3 claims, every one cited."""
    runner = logins("runner")
    row = question(6)
    row.update(confidence_distribution={"high_confidence_pct": 66.67, "multi_source_pct": 33.33, "inference_pct": 0,
                                        "speculation_pct": 0})
    run_id = open_run(admin, runner, reviewer_id, [row])
    claims = [{"text": f"c{i}", "numerical": True, "source_ids": ["src-given"], "confidence": c}
              for i, c in enumerate(("high", "high", "multi_source"))]
    analysis = store.record_analysis(runner, brain="AGT-901", model_id="claude-sonnet-4-6",
                                     system_prompt_hash=BRAIN_PROMPTS["AGT-901"], question_id="EVAL-Q06",
                                     question="q", output="o", token_cost_usd="0.01", claims=claims)
    store.add_question_score(runner, eval_run_id=run_id, brain_analysis_id=analysis, question_id="EVAL-Q06",
                             question_type="plan_diagnosis", uses_stale_fixture=False)
    return run_id


def test_a_reviewer_counts_no_more_supported_claims_than_the_answer_holds(admin, logins, three_claims):
    """60 claims on an answer of 3, one unsupported: a 1.7% hallucination rate instead of 33%."""
    reviewer = logins("reviewer")
    with refused(admin, errors.CheckViolation, r"evalledger: 59 supported claims \(60 total, 1 unsupported\) on "
                 r"EVAL-Q06, whose answer holds 3 claims", "brain_eval_question_score_claims_within_answer"):
        store.score_question(reviewer, three_claims, "EVAL-Q06", {"total_claims": 60, "hallucinations_detected": 1})
    # A claim the answer does not list may be counted: as unsupported.
    store.score_question(reviewer, three_claims, "EVAL-Q06", {"total_claims": 4, "hallucinations_detected": 1})
    with refused(admin, errors.CheckViolation, r"evalledger: 4 supported claims .*", "brain_eval_question_score_claims_within_answer"):
        store.score_question(reviewer, three_claims, "EVAL-Q06", {"hallucinations_detected": 0})
    assert admin.execute("SELECT total_claims, hallucinations_detected FROM evalledger.brain_eval_question_score "
                         "WHERE eval_run_id = %s", (three_claims,)).fetchone() == (4, 1)


def test_diagnosis_accuracy_is_refused_where_it_does_not_apply(admin, logins, reviewer_id):
    """Four such entries once lifted a run's diagnosis mean from pass_with_notes to pass."""
    runner, reviewer = logins("runner"), logins("reviewer")
    row = question(6)
    row["question_type"] = "expansion_qualification"
    run_id = open_run(admin, runner, reviewer_id, [row])
    add_question(runner, run_id, row, brain="AGT-901", system_prompt_hash=BRAIN_PROMPTS["AGT-901"])
    with refused(admin, errors.CheckViolation, r"evalledger: diagnosis accuracy does not apply to a "
                 r"expansion_qualification question \(EVAL-Q06\): leave it out",
                 "brain_eval_question_score_diagnosis_only_where_it_applies"):
        store.score_question(reviewer, run_id, "EVAL-Q06", {"diagnosis_accuracy_score": 1.0})
    store.score_question(reviewer, run_id, "EVAL-Q06", {"total_claims": 10, "hallucinations_detected": 0})


def demo_recording(tmp_path, bend=None):
    document = json.loads(fixture_path().read_text())
    if bend:
        bend(document)
    path = tmp_path / "run.json"
    path.write_text(json.dumps(document, indent=1))
    return recording.check(path)


def test_the_demo_recording_decides_what_its_answers_give(admin, logins, reviewers, tmp_path):
    """The README's recorded run: the database computes its scores from its answers and decides
    pass_with_notes (8 of its 30 answers run hot on confidence); the same file claiming 0 lever violations for actions outside AGT-902's levers (as the
    file once did) is refused, and so is one whose claims the database cannot score."""
    register_demo_brain(admin)
    runner = logins("runner", autocommit=False)
    reviewer_id = reviewers[REVIEWER_ROLE]

    def off_levers(document):
        for item in document["questions"]:
            item["analysis"]["proposed_actions"] = [{"action_type": "reassign_owner"}, {"action_type": "add_coverage"}]
    with pytest.raises(EvalledgerError, match=r"\$\.questions\[0\] \(EVAL-Q01\): evalledger: brain_eval_question_score\."
                       r"lever_mapping_violations 0 \(the answer gives 2\): computed by the database from the answer"):
        recording.record(runner, demo_recording(tmp_path, off_levers), reviewer_id)
    runner.rollback()

    def old_claims(document):
        for item in document["questions"]:
            item["analysis"]["claims"] = [{"text": "claim 1", "cited": True}]
    with pytest.raises(EvalledgerError, match=r"\$\.questions\[0\]\.analysis\.claims\[0\]\.numerical \(EVAL-Q01\): the "
                       r"answer cannot be scored: claims\[0\]\.numerical is missing, not true or false$"):
        recording.record(runner, demo_recording(tmp_path, old_claims), reviewer_id)
    runner.rollback()
    assert admin.execute("SELECT count(*) FROM evalledger.brain_eval_log").fetchone()[0] == 0

    decided, new = recording.record(runner, demo_recording(tmp_path), reviewer_id)
    runner.commit()
    assert new
    from evalledger.suites.brain_eval import reviewing
    review = fixture_path().with_name("brain_eval_demo_review.jsonl")
    reviewer = logins("reviewer", autocommit=False)
    reviewing.apply_scores(reviewer, decided.eval_run_id, review, reviewing.read_scores(review))
    store.sign_off_run(reviewer, decided.eval_run_id, "3.50")
    reviewer.commit()
    done = store.complete_run(runner, decided.eval_run_id)
    runner.commit()
    assert (done.decision, done.decision_rationale) == (
        "pass_with_notes", "Pass with notes: confidence calibration 6.7pp below band; all hard criteria passed.")
    scores = done.aggregated_scores
    assert scores["lever_mapping_correctness"] == 1  # every action is one of AGT-902's five levers
    assert round(scores["confidence_calibration_in_band"], 4) == 0.7333  # 8 answers run hot
