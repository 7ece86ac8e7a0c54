-- judge_agreement_v2: judge_agreement_v1 (per brain, judge model and quarter, how the judges' drafts
-- agree with the reviewer's final numbers, over blind pairs) and, beside it, how many questions of
-- the quarter's completed runs the judge was flaky on: its repeated drafts (--repeats K) straddle a
-- threshold of the question's pass criteria (brain_eval_flaky_v1, docs/statistics.md "Judge
-- repeats"). A judge with no row in v1 (no draft on a completed run) has none here either.
CREATE VIEW evalledger.judge_agreement_v2 AS
    SELECT a.*, coalesce(f.flaky_questions, 0) AS flaky_questions
      FROM evalledger.judge_agreement_v1 a
      LEFT JOIN (SELECT f.brain_under_test, f.judge_model,
                        to_char(f.started_at AT TIME ZONE 'UTC', 'YYYY-"Q"Q') AS quarter,
                        count(DISTINCT (f.eval_run_id, f.question_id)) AS flaky_questions
                   FROM evalledger.brain_eval_flaky_v1 f
                   JOIN evalledger.brain_eval_log l ON l.eval_run_id = f.eval_run_id
                  WHERE l.completed_at IS NOT NULL
                  GROUP BY 1, 2, 3) f
        ON f.brain_under_test = a.brain_under_test AND f.judge_model = a.judge_model AND f.quarter = a.quarter;
COMMENT ON VIEW evalledger.judge_agreement_v2 IS
    'judge_agreement_v1 (per brain, judge model and UTC quarter, how the judge''s drafts agree with the reviewer''s final numbers, over blind entries) with flaky_questions: the questions of completed runs on which the judge''s repeated drafts (--repeats K) straddle a pass criterion''s threshold (brain_eval_flaky_v1). RevOps: whole months of the hot tier.';
COMMENT ON COLUMN evalledger.judge_agreement_v2.brain_under_test IS 'The brain (target_id) whose answers were judged.';
COMMENT ON COLUMN evalledger.judge_agreement_v2.judge_model IS 'The judge model, provider:model (e.g. openai:gpt-4o).';
COMMENT ON COLUMN evalledger.judge_agreement_v2.quarter IS 'Text YYYY-QN: the UTC quarter the runs started in.';
COMMENT ON COLUMN evalledger.judge_agreement_v2.unsupported_pairs IS 'Count of blind (draft, reviewer) pairs for unsupported claims: the draft''s quoted unsupported claims against hallucinations_detected (a judge once per question: with --repeats K its mean over its repeats).';
COMMENT ON COLUMN evalledger.judge_agreement_v2.unsupported_agreement IS 'Rate, 0-1, four decimals: share of those pairs in the same bin (0, 1, 2 or more unsupported claims).';
COMMENT ON COLUMN evalledger.judge_agreement_v2.unsupported_kappa IS 'Cohen''s kappa, -1 to 1 (1 = perfect, 0 = chance), four decimals, over the bins 0/1/2+; NULL when undefined (no pairs, or both sides used one same bin).';
COMMENT ON COLUMN evalledger.judge_agreement_v2.diagnosis_pairs IS 'Count of blind pairs for diagnosis accuracy (questions of a diagnosis type).';
COMMENT ON COLUMN evalledger.judge_agreement_v2.diagnosis_agreement IS 'Rate, 0-1, four decimals: share of those pairs with the same score (0, 0.5 or 1).';
COMMENT ON COLUMN evalledger.judge_agreement_v2.diagnosis_weighted_kappa IS 'Linearly weighted kappa, -1 to 1, four decimals (a 0.5 difference weighs half a 1.0 difference); NULL when undefined.';
COMMENT ON COLUMN evalledger.judge_agreement_v2.claims_pairs IS 'Count of blind pairs for total claims.';
COMMENT ON COLUMN evalledger.judge_agreement_v2.claims_mean_abs_difference IS 'Claims (a count), four decimals: mean of |judge total_claims - reviewer total_claims| over those pairs.';
COMMENT ON COLUMN evalledger.judge_agreement_v2.flaky_questions IS 'Count: the questions of the quarter''s completed runs whose repeated drafts by this judge straddle a pass criterion''s threshold (brain_eval_flaky_v1); 0 without repeats.';

REVOKE ALL ON judge_agreement_v2 FROM PUBLIC;
GRANT SELECT ON judge_agreement_v2 TO evalledger_revops, evalledger_auditor;

DO $invoker$
BEGIN
    IF current_setting('server_version_num')::int >= 150000 THEN
        ALTER VIEW evalledger.judge_agreement_v2 SET (security_invoker = true);
    END IF;
END
$invoker$;
