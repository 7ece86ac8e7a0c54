-- judge_agreement_v1: per brain, judge model and quarter, how the judges' drafts agree with the
-- reviewer's final numbers, over drafts the reviewer saw only after scoring or never saw.
CREATE VIEW evalledger.judge_agreement_v1 AS
    SELECT * FROM evalledger.judge_agreement_rows_v1(NULL, NULL, NULL, NULL, true);
COMMENT ON VIEW evalledger.judge_agreement_v1 IS
    'Per brain, judge model and UTC quarter, how the judge''s drafts agree with the reviewer''s final numbers, counting only values the reviewer entered before seeing the drafts (or without seeing them): Cohen''s kappa for unsupported claims binned 0/1/2+, linearly weighted kappa for diagnosis accuracy, mean absolute difference for total claims. RevOps: whole months of the hot tier.';
COMMENT ON COLUMN evalledger.judge_agreement_v1.brain_under_test IS 'The brain (target_id) whose answers were judged.';
COMMENT ON COLUMN evalledger.judge_agreement_v1.judge_model IS 'The judge model, provider:model (e.g. openai:gpt-4o).';
COMMENT ON COLUMN evalledger.judge_agreement_v1.quarter IS 'Text YYYY-QN: the UTC quarter the runs started in.';
COMMENT ON COLUMN evalledger.judge_agreement_v1.unsupported_pairs IS 'Count of blind (draft, reviewer) pairs for unsupported claims: the draft''s quoted unsupported claims against hallucinations_detected.';
COMMENT ON COLUMN evalledger.judge_agreement_v1.unsupported_agreement IS 'Rate, 0-1, four decimals: share of those pairs in the same bin (0, 1, 2 or more unsupported claims).';
COMMENT ON COLUMN evalledger.judge_agreement_v1.unsupported_kappa IS 'Cohen''s kappa, -1 to 1 (1 = perfect, 0 = chance), four decimals, over the bins 0/1/2+; NULL when undefined (no pairs, or both sides used one same bin).';
COMMENT ON COLUMN evalledger.judge_agreement_v1.diagnosis_pairs IS 'Count of blind pairs for diagnosis accuracy (questions of a diagnosis type).';
COMMENT ON COLUMN evalledger.judge_agreement_v1.diagnosis_agreement IS 'Rate, 0-1, four decimals: share of those pairs with the same score (0, 0.5 or 1).';
COMMENT ON COLUMN evalledger.judge_agreement_v1.diagnosis_weighted_kappa IS 'Linearly weighted kappa, -1 to 1, four decimals (a 0.5 difference weighs half a 1.0 difference); NULL when undefined.';
COMMENT ON COLUMN evalledger.judge_agreement_v1.claims_pairs IS 'Count of blind pairs for total claims.';
COMMENT ON COLUMN evalledger.judge_agreement_v1.claims_mean_abs_difference IS 'Claims (a count), four decimals: mean of |judge total_claims - reviewer total_claims| over those pairs.';

-- The views: RevOps and auditors; a reviewer those of its own runs: the stale-fixture pass rate,
-- calibration and cost (not the most-failing questions and the agreement, which count other
-- reviewers' runs; not prompt drift, production traffic being none of a reviewer's; not the
-- takes-quality trend). A function a view calls runs with the reader's rights: EXECUTE follows.
REVOKE ALL ON judge_agreement_v1 FROM PUBLIC;
GRANT SELECT ON judge_agreement_v1 TO evalledger_revops, evalledger_auditor;

-- security_invoker where the server has it (15+), belt and braces: the rows function is
-- SECURITY INVOKER already, so each reader reads through its own row-level security.
DO $invoker$
BEGIN
    IF current_setting('server_version_num')::int >= 150000 THEN
        ALTER VIEW evalledger.judge_agreement_v1 SET (security_invoker = true);
    END IF;
END
$invoker$;
