-- Rows every ledger starts with: the takes-quality v1.0 rubric (seed 000), active until v1.1.
-- Seed 000's rule as data: 5 dimensions scored 1-10 by each judge; pass when every dimension's
-- mean is >= 7 and its minimum across contributing models >= 5; inconclusive when fewer than
-- 2/3 of the panel contributed complete scores. The judge instructions are rendered into the
-- prompt templates (suites/takes_quality/templates/).
INSERT INTO rubric (suite, version, definition) VALUES ('takes-quality', 'v1.0', $rubric$
{
  "suite": "takes-quality",
  "version": "v1.0",
  "scale": {"min": 1, "max": 10},
  "dimensions": [
    {"key": "accuracy", "label": "accuracy", "scored_by": "judge", "aggregate": "mean, min and max over contributing models",
     "question": "Is each claim stated correctly and faithfully to what its source supports?"},
    {"key": "attribution", "label": "attribution", "scored_by": "judge", "aggregate": "mean, min and max over contributing models",
     "question": "Is each take attributed to the right holder, and is its source named and plausible?"},
    {"key": "weight_calibration", "label": "weight calibration", "scored_by": "judge", "aggregate": "mean, min and max over contributing models",
     "question": "Does each weight (0 to 1) match how firmly the holder holds the claim and how well it is supported?"},
    {"key": "kind_classification", "label": "kind classification", "scored_by": "judge", "aggregate": "mean, min and max over contributing models",
     "question": "Is each take's kind right (a fact is verifiable, a take is an opinion, a bet is a prediction, a hunch is a weak belief)?"},
    {"key": "signal_density", "label": "signal density", "scored_by": "judge", "aggregate": "mean, min and max over contributing models",
     "question": "Does each take carry a specific, non-trivial claim worth keeping, rather than filler or a duplicate?"}
  ],
  "pass_rule": {"every_dim_mean_at_least": 7, "every_dim_min_at_least": 5},
  "quorum": {"min_contributing_fraction": [2, 3]},
  "judge_instructions": "You are a strict, independent reviewer of a knowledge base's takes layer. A take is one claim someone holds, recorded with its kind, holder, weight (0 to 1), the date since when it is held, and its source. Judge the sample as a whole: score every dimension from the scale's minimum (very poor) to its maximum (excellent), using whole numbers. Be critical: reserve 9 and 10 for samples with no visible problems. Name concrete improvements to the extraction that produced these takes.",
  "max_improvements": 5
}
$rubric$);

-- Each suite's first rubric is active from the start; a later one becomes active only by a
-- migration that inserts its activation with a reason.
INSERT INTO rubric_activation (suite, rubric_id, reason)
SELECT r.suite, r.rubric_id, 'baseline: the first rubric of the suite'
  FROM rubric r WHERE (r.suite, r.version) = ('takes-quality', 'v1.0');
