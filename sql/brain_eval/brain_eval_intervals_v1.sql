-- brain_eval_intervals_v1: per completed run, one row per aggregate of seed 002 with its
-- uncertainty beside the decision (docs/statistics.md, "brain-eval"): the estimate, its standard
-- error, the 95% interval, what n and the clusters count, the method, and for an aggregate under a
-- hard criterion the bound that matters. Read from what the run's completion stored
-- (brain_eval_run_uncertainty: brain_eval_uncertainty_v1 of its question rows, since migration
-- 0148), not computed at each read. An aggregate with nothing to measure has no row. Read under
-- each reader's own row-level security (a reviewer: its own runs).
CREATE VIEW evalledger.brain_eval_intervals_v1 AS
    SELECT l.eval_run_id, l.brain_under_test, l.run_trigger::text AS run_trigger, l.question_catalog_version,
           l.started_at, l.completed_at, l.decision::text AS decision, u.key AS aggregate,
           (u.value ->> 'estimate')::float8 AS estimate, (u.value ->> 'stderr')::float8 AS stderr,
           (u.value -> 'ci95' ->> 0)::float8 AS ci95_lo, (u.value -> 'ci95' ->> 1)::float8 AS ci95_hi,
           (u.value ->> 'n')::bigint AS n, (u.value ->> 'clusters')::bigint AS clusters, u.value ->> 'method' AS method,
           u.value -> 'criterion' ->> 'op' AS criterion_op,
           (u.value -> 'criterion' ->> 'threshold')::float8 AS criterion_threshold,
           (u.value -> 'criterion' ->> 'bound')::float8 AS criterion_bound
      FROM evalledger.brain_eval_log l
      JOIN evalledger.brain_eval_run_uncertainty r ON r.eval_run_id = l.eval_run_id
     CROSS JOIN LATERAL jsonb_each(r.uncertainty) u
     WHERE l.completed_at IS NOT NULL AND jsonb_typeof(u.value) = 'object';
COMMENT ON VIEW evalledger.brain_eval_intervals_v1 IS
    'Per completed brain-eval run and aggregate, the estimate with its standard error and 95% interval (the question clustered by question_type; hallucinations the claims clustered by question), beside the decision, which uses the estimates only (docs/statistics.md); stored when the run completed (brain_eval_run_uncertainty).';
COMMENT ON COLUMN evalledger.brain_eval_intervals_v1.eval_run_id IS 'The run (brain_eval_log.eval_run_id).';
COMMENT ON COLUMN evalledger.brain_eval_intervals_v1.brain_under_test IS 'The brain (target_id), e.g. AGT-902.';
COMMENT ON COLUMN evalledger.brain_eval_intervals_v1.run_trigger IS 'Why the run happened: pre_launch, quarterly, prompt_change, model_promotion or on_demand.';
COMMENT ON COLUMN evalledger.brain_eval_intervals_v1.question_catalog_version IS 'The question catalog version the run used.';
COMMENT ON COLUMN evalledger.brain_eval_intervals_v1.started_at IS 'When the run started (timestamptz; UTC in the ledger).';
COMMENT ON COLUMN evalledger.brain_eval_intervals_v1.completed_at IS 'When the run was completed (timestamptz).';
COMMENT ON COLUMN evalledger.brain_eval_intervals_v1.decision IS 'The decision the database computed: pass, pass_with_notes, conditional or fail (unchanged by the interval).';
COMMENT ON COLUMN evalledger.brain_eval_intervals_v1.aggregate IS 'The aggregate, a key of aggregated_scores: citation_rate, hallucination_rate, staleness_recognition_rate, diagnosis_accuracy_mean, lever_mapping_correctness, confidence_calibration_in_band or narrative_coherence_mean.';
COMMENT ON COLUMN evalledger.brain_eval_intervals_v1.estimate IS 'The aggregate as aggregated_scores has it, in its own scale: 0-1 for the rates and diagnosis accuracy, 1-5 for narrative coherence.';
COMMENT ON COLUMN evalledger.brain_eval_intervals_v1.stderr IS 'Its standard error, in the estimate''s scale (0-1 or 1-5); NULL when it cannot be estimated.';
COMMENT ON COLUMN evalledger.brain_eval_intervals_v1.ci95_lo IS 'The 95% interval''s lower bound, in the estimate''s scale (0-1 or 1-5), cut to the scale.';
COMMENT ON COLUMN evalledger.brain_eval_intervals_v1.ci95_hi IS 'The 95% interval''s upper bound, in the estimate''s scale (0-1 or 1-5), cut to the scale.';
COMMENT ON COLUMN evalledger.brain_eval_intervals_v1.n IS 'Count: the questions measured (the claims, for hallucination_rate).';
COMMENT ON COLUMN evalledger.brain_eval_intervals_v1.clusters IS 'Count: the question types among them (the questions with claims, for hallucination_rate).';
COMMENT ON COLUMN evalledger.brain_eval_intervals_v1.method IS 'How the interval was computed: clustered, mean, ratio, wilson or exact (docs/statistics.md).';
COMMENT ON COLUMN evalledger.brain_eval_intervals_v1.criterion_op IS 'For an aggregate under a hard criterion of the run''s rubric: <= or >= (NULL otherwise).';
COMMENT ON COLUMN evalledger.brain_eval_intervals_v1.criterion_threshold IS 'The hard criterion''s threshold, 0-1 (NULL when none).';
COMMENT ON COLUMN evalledger.brain_eval_intervals_v1.criterion_bound IS 'The interval''s side that matters for the hard criterion, 0-1: the upper bound for <=, the lower for >= (NULL when none).';

REVOKE ALL ON brain_eval_intervals_v1 FROM PUBLIC;
GRANT SELECT ON brain_eval_intervals_v1 TO evalledger_reviewer, evalledger_revops, evalledger_auditor;

DO $invoker$
BEGIN
    IF current_setting('server_version_num')::int >= 150000 THEN
        ALTER VIEW evalledger.brain_eval_intervals_v1 SET (security_invoker = true);
    END IF;
END
$invoker$;
