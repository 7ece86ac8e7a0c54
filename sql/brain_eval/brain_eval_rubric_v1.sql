-- Rows every ledger starts with: the brain-eval v1 rubric (seed 002's criteria as data), active.
-- Soft thresholds are not in seed 002; these defaults are documented in docs/rubrics.md.
INSERT INTO rubric (suite, version, definition) VALUES ('brain-eval', 'v1', $rubric$
{
  "suite": "brain-eval",
  "version": "v1",
  "dimensions": [
    {"key": "citation_rate", "label": "citation rate", "scored_by": "automatic", "aggregate": "mean of question citation_rate", "unit": "rate"},
    {"key": "hallucination_rate", "label": "hallucination rate", "scored_by": "reviewer", "aggregate": "sum(hallucinations_detected) / sum(total_claims)", "unit": "rate"},
    {"key": "staleness_recognition_rate", "label": "staleness recognition", "scored_by": "reviewer", "aggregate": "recognised / stale-fixture questions", "unit": "rate"},
    {"key": "diagnosis_accuracy_mean", "label": "diagnosis accuracy", "scored_by": "reviewer", "aggregate": "mean of scored questions", "unit": "score"},
    {"key": "lever_mapping_correctness", "label": "lever mapping", "scored_by": "automatic", "aggregate": "questions with 0 violations / questions scored", "unit": "rate"},
    {"key": "confidence_calibration_in_band", "label": "confidence calibration", "scored_by": "automatic", "aggregate": "questions whose confidence distribution is in band", "unit": "rate"},
    {"key": "narrative_coherence_mean", "label": "narrative coherence", "scored_by": "reviewer", "aggregate": "mean rating 1-5", "unit": "score"}
  ],
  "hard_criteria": [
    {"key": "hallucination_rate", "label": "hallucination rate", "op": "<=", "threshold": 0.02, "unit": "rate"},
    {"key": "staleness_recognition_rate", "label": "staleness recognition", "op": ">=", "threshold": 1.0, "unit": "rate"},
    {"key": "lever_mapping_correctness", "label": "lever mapping", "op": ">=", "threshold": 1.0, "unit": "rate", "applies_to": ["AGT-902"]}
  ],
  "soft_criteria": [
    {"key": "citation_rate", "label": "citation rate", "op": ">=", "threshold": 0.95, "unit": "rate"},
    {"key": "diagnosis_accuracy_mean", "label": "diagnosis accuracy", "op": ">=", "threshold": 0.75, "unit": "score"},
    {"key": "confidence_calibration_in_band", "label": "confidence calibration", "op": ">=", "threshold": 0.80, "unit": "rate", "target_label": "band"},
    {"key": "narrative_coherence_mean", "label": "narrative coherence", "op": ">=", "threshold": 4.0, "unit": "score"}
  ],
  "confidence_band": {"high_confidence_pct": [40, 75], "speculation_pct_max": 10},
  "diagnosis_question_types": ["plan_diagnosis", "coverage_gap", "play_retrospective", "forecast_bias", "churn_diagnosis"],
  "question_pass": {
    "max_hallucinations": 0,
    "min_citation_rate": 0.90,
    "min_diagnosis_accuracy": 0.5,
    "min_narrative_coherence": 3,
    "max_lever_violations": 0,
    "lever_mapping_applies_to": ["AGT-902"]
  },
  "decision_ladder": [
    {"min_soft_passed": 4, "decision": "pass"},
    {"min_soft_passed": 3, "decision": "pass_with_notes"},
    {"min_soft_passed": 2, "decision": "conditional"},
    {"min_soft_passed": 0, "decision": "fail"}
  ],
  "hard_failure_decision": "fail"
}
$rubric$);

-- Each suite's first rubric is active from the start; a later one becomes active only by a
-- migration that inserts its activation with a reason.
INSERT INTO rubric_activation (suite, rubric_id, reason)
SELECT r.suite, r.rubric_id, 'baseline: the first rubric of the suite'
  FROM rubric r WHERE (r.suite, r.version) = ('brain-eval', 'v1');
