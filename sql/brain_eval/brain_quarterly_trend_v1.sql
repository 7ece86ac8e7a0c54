-- brain_quarterly_trend_v1: per brain, the last 8 completed quarterly runs (recency_rank 1 = latest), one numeric column per dimension.
CREATE VIEW evalledger.brain_quarterly_trend_v1 AS
    SELECT * FROM evalledger.brain_quarterly_trend_rows_v1();
COMMENT ON VIEW evalledger.brain_quarterly_trend_v1 IS
    'Per brain, the last 8 completed quarterly runs (recency_rank 1 = latest), one numeric column per dimension.';

-- Readers. RevOps (hot tier) and auditors (everything) read the dashboards; each sees what its
-- own policies let it see. Reviewers and the runner already read the tables they need, and a
-- dashboard adds nothing for them but a cross-run aggregate of their own rows, so they get no
-- grant; brain agents and production users get nothing.
REVOKE ALL ON brain_quarterly_trend_v1 FROM PUBLIC;
GRANT SELECT ON brain_quarterly_trend_v1 TO evalledger_revops, evalledger_auditor;

-- The _v1 views' and the panel tables' columns get comments here (the _v2 views' come with their
-- files). Names carry units: *_rate 0-1, *_pct 0-100, *_usd US dollars, *_hours hours.
COMMENT ON COLUMN brain_quarterly_trend_v1.brain_under_test IS 'The brain (target_id), e.g. AGT-902.';
COMMENT ON COLUMN brain_quarterly_trend_v1.recency_rank IS
    'Rank, 1 = the brain''s latest completed quarterly run, 2 the one before it, and so on up to 8.';
COMMENT ON COLUMN brain_quarterly_trend_v1.eval_run_id IS 'The run (brain_eval_log.eval_run_id).';
COMMENT ON COLUMN brain_quarterly_trend_v1.quarter IS 'Text YYYY-QN: the UTC quarter the run started in.';
COMMENT ON COLUMN brain_quarterly_trend_v1.started_at IS 'When the run started (timestamptz).';
COMMENT ON COLUMN brain_quarterly_trend_v1.completed_at IS 'When the run was completed (timestamptz).';
COMMENT ON COLUMN brain_quarterly_trend_v1.model_id IS 'The model the brain ran on, e.g. claude-sonnet-4-6.';
COMMENT ON COLUMN brain_quarterly_trend_v1.system_prompt_hash IS 'SHA-256 hex of the brain''s system prompt.';
COMMENT ON COLUMN brain_quarterly_trend_v1.question_catalog_version IS 'The question catalog version the run used.';
COMMENT ON COLUMN brain_quarterly_trend_v1.decision IS 'pass, pass_with_notes, conditional or fail, as the database decided.';
COMMENT ON COLUMN brain_quarterly_trend_v1.citation_rate IS 'Rate, 0-1: the mean of the questions'' citation_rate (share of numerical claims citing a source given). Exact; round for display.';
COMMENT ON COLUMN brain_quarterly_trend_v1.hallucination_rate IS 'Rate, 0-1: hallucinations_detected / total_claims over the run (NULL with no claims).';
COMMENT ON COLUMN brain_quarterly_trend_v1.staleness_recognition_rate IS 'Rate, 0-1: stale-fixture questions recognised / stale-fixture questions (NULL with none).';
COMMENT ON COLUMN brain_quarterly_trend_v1.diagnosis_accuracy_mean IS 'Score, 0-1 (each question 0, 0.5 or 1): the mean over questions of a diagnosis type (NULL with none).';
COMMENT ON COLUMN brain_quarterly_trend_v1.lever_mapping_correctness IS 'Rate, 0-1: questions with 0 lever violations / questions scored for it (AGT-902 only; NULL elsewhere).';
COMMENT ON COLUMN brain_quarterly_trend_v1.confidence_calibration_in_band IS 'Rate, 0-1: share of questions whose confidence distribution is in the rubric''s band.';
COMMENT ON COLUMN brain_quarterly_trend_v1.narrative_coherence_mean IS 'Score, 1-5: the mean reviewer narrative-coherence rating.';

-- security_invoker where the server has it (15+), belt and braces: the rows function is
-- SECURITY INVOKER already, so each reader reads through its own row-level security.
DO $invoker$
BEGIN
    IF current_setting('server_version_num')::int >= 150000 THEN
        ALTER VIEW evalledger.brain_quarterly_trend_v1 SET (security_invoker = true);
    END IF;
END
$invoker$;
