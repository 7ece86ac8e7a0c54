"""The decision trigger at its boundaries: the database's decision and rationale, exactly."""

import pytest

from tests.builders import OUT_OF_BAND, record_run


def test_clean_run_passes(connect_as, reviewer_id):
    decided = record_run(connect_as("evalledger_runner"), reviewer_id)
    assert decided.decision == "pass"
    assert decided.hard_criteria_passed is True
    assert decided.soft_criteria_passed_count == 4
    assert decided.decision_rationale == "Pass: all hard criteria passed; all 4 soft criteria within threshold."
    assert set(decided.aggregated_scores) == {
        "citation_rate", "hallucination_rate", "staleness_recognition_rate", "diagnosis_accuracy_mean",
        "lever_mapping_correctness", "confidence_calibration_in_band", "narrative_coherence_mean"}
    assert str(decided.token_cost_usd) == "0.3750"
    assert decided.reviewer_independence_verified is True


def hallucinations(total):
    """Spread `total` hallucinations over the 300 claims of a run."""
    def bend(number, row):
        if number <= total:
            row["hallucinations_detected"] = 1
    return bend


def test_hallucination_rate_exactly_two_percent_passes(connect_as, reviewer_id):
    decided = record_run(connect_as("evalledger_runner"), reviewer_id, bend=hallucinations(6))
    assert float(decided.aggregated_scores["hallucination_rate"]) == 0.02
    assert decided.hard_criteria_passed is True


def test_hallucination_rate_just_above_two_percent_fails(connect_as, reviewer_id):
    decided = record_run(connect_as("evalledger_runner"), reviewer_id, bend=hallucinations(7))
    assert decided.hard_criteria_passed is False
    assert decided.decision == "fail"
    assert decided.decision_rationale == (
        "Fail: hard criteria missed: hallucination rate 2.33% above the 2% limit.")


def test_twenty_nine_of_thirty_stale_recognised_fails(connect_as, reviewer_id):
    def bend(number, row):
        row["uses_stale_fixture"] = True
        row["staleness_correctly_recognized"] = number != 30
    decided = record_run(connect_as("evalledger_runner"), reviewer_id, bend=bend)
    assert decided.decision == "fail"
    assert decided.decision_rationale == "Fail: hard criteria missed: staleness recognition 3.3pp below 100%."


def lever_violation(number, row):
    if number == 3:
        row["lever_mapping_violations"] = 1


def test_lever_violation_fails_agt_902(connect_as, reviewer_id):
    decided = record_run(connect_as("evalledger_runner"), reviewer_id, brain="AGT-902", bend=lever_violation)
    assert decided.decision == "fail"
    assert decided.decision_rationale == "Fail: hard criteria missed: lever mapping 3.3pp below 100%."


def test_lever_violation_does_not_count_for_agt_901(admin, connect_as, reviewer_id):
    def outside_the_levers(number, row):
        if number == 3:
            row["proposed_actions"] = [{"action_type": "discount_50_percent"}]
    decided = record_run(connect_as("evalledger_runner"), reviewer_id, brain="AGT-901", bend=outside_the_levers)
    assert decided.hard_criteria_passed is True
    assert decided.decision == "pass"
    # The rubric maps levers for AGT-902 only, and no brain of this prompt is AGT-902: not counted.
    assert admin.execute("SELECT count(lever_mapping_violations) FROM evalledger.brain_eval_question_score "
                         "WHERE eval_run_id = %s", (decided.eval_run_id,)).fetchone()[0] == 0


def miss_calibration(number, row):
    if number <= 10:  # 20 of 30 in band: 0.6667, 13.3pp below the 0.80 band
        row["confidence_distribution"] = dict(OUT_OF_BAND)


def miss_citation(number, row):
    row["citation_rate"] = 0.92


def miss_diagnosis(number, row):
    row["diagnosis_accuracy_score"] = 0.5


def miss_coherence(number, row):
    row["narrative_coherence_rating"] = 3


SOFT_MISSES = [miss_calibration, miss_citation, miss_diagnosis, miss_coherence]


@pytest.mark.parametrize("missed, decision, rationale", [
    (1, "pass_with_notes",
     "Pass with notes: confidence calibration 13.3pp below band; all hard criteria passed."),
    (2, "conditional",
     "Conditional: citation rate 3pp below 95%; confidence calibration 13.3pp below band; "
     "all hard criteria passed."),
    (3, "fail",
     "Fail: citation rate 3pp below 95%; diagnosis accuracy 0.25 below 0.75; confidence calibration "
     "13.3pp below band; all hard criteria passed, but only 1 of 4 soft criteria within threshold."),
    (4, "fail",
     "Fail: citation rate 3pp below 95%; diagnosis accuracy 0.25 below 0.75; confidence calibration "
     "13.3pp below band; narrative coherence 1 below 4; all hard criteria passed, but only 0 of 4 soft "
     "criteria within threshold."),
])
def test_each_soft_criterion_count(connect_as, reviewer_id, missed, decision, rationale):
    def bend(number, row):
        for miss in SOFT_MISSES[:missed]:
            miss(number, row)
    decided = record_run(connect_as("evalledger_runner"), reviewer_id, bend=bend)
    assert decided.hard_criteria_passed is True
    assert decided.soft_criteria_passed_count == 4 - missed
    assert decided.decision == decision
    assert decided.decision_rationale == rationale


def test_the_cost_of_each_analysis_is_exact_and_only_the_runs_total_is_rounded(connect_as, admin, reviewer_id):
    """Seed 002's token_cost_usd is NUMERIC(10,4) for the run; the analyses it sums are exact, so
    30 calls of $0.00027 cost $0.0081, not 30 x $0.0003 = $0.0090."""
    from decimal import Decimal

    decided = record_run(connect_as("evalledger_runner"), reviewer_id, cost="0.00027")
    parts = admin.execute("SELECT DISTINCT token_cost_usd FROM brain_analysis_log").fetchall()
    assert parts == [(Decimal("0.00027"),)]
    assert decided.token_cost_usd == Decimal("0.0081")
