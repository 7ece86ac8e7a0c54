-- takes_quality_trend_v1: every completed takes-quality run newest first, with its rubric epoch,
-- verdict, overall score, dimension means, cost and judges.
CREATE VIEW evalledger.takes_quality_trend_v1 AS
    SELECT * FROM evalledger.takes_quality_trend_rows_v1(NULL, NULL, NULL, NULL);
COMMENT ON VIEW evalledger.takes_quality_trend_v1 IS
    'Every completed takes-quality run newest first (and every open one past its deadline, abandoned, verdict fail): its rubric epoch (rubric_version and rubric_sha8; chart epochs apart), verdict, overall score and dimension means on the rubric''s scale (1-10 for v1.0), cost in USD, and whether the judges were live or recorded.';
COMMENT ON COLUMN evalledger.takes_quality_trend_v1.run_id IS 'The run (eval_takes_quality_runs.id; the receipt''s run_id).';
COMMENT ON COLUMN evalledger.takes_quality_trend_v1.target_id IS 'What was evaluated (target_id), NULL when the run named none.';
COMMENT ON COLUMN evalledger.takes_quality_trend_v1.rubric_version IS 'The rubric''s version, e.g. v1.0: with rubric_sha8, the epoch.';
COMMENT ON COLUMN evalledger.takes_quality_trend_v1.rubric_sha8 IS 'The first 8 hex digits of the rubric''s fingerprint as the receipt gives it.';
COMMENT ON COLUMN evalledger.takes_quality_trend_v1.started_at IS 'When the run started (timestamptz; the receipt''s ts).';
COMMENT ON COLUMN evalledger.takes_quality_trend_v1.completed_at IS 'When the run was completed (timestamptz).';
COMMENT ON COLUMN evalledger.takes_quality_trend_v1.verdict IS 'pass, fail or inconclusive, as the database decided.';
COMMENT ON COLUMN evalledger.takes_quality_trend_v1.overall_score IS 'Score on the rubric''s scale (1-10 for v1.0): the mean of the dimension means; NULL when no model contributed.';
COMMENT ON COLUMN evalledger.takes_quality_trend_v1.dimension_means IS 'JSON object: dimension key to its mean score over the contributing judges (rubric''s scale, 1-10 for v1.0; null when none contributed).';
COMMENT ON COLUMN evalledger.takes_quality_trend_v1.cost_usd IS 'USD: what the judges'' calls cost, every cycle.';
COMMENT ON COLUMN evalledger.takes_quality_trend_v1.n_takes IS 'Count of takes in the sample.';
COMMENT ON COLUMN evalledger.takes_quality_trend_v1.models IS 'The panel, provider:model each.';
COMMENT ON COLUMN evalledger.takes_quality_trend_v1.judges IS 'live, recorded (the demo''s recordings) or mixed.';

-- The views: RevOps and auditors; a reviewer those of its own runs: the stale-fixture pass rate,
-- calibration and cost (not the most-failing questions and the agreement, which count other
-- reviewers' runs; not prompt drift, production traffic being none of a reviewer's; not the
-- takes-quality trend). A function a view calls runs with the reader's rights: EXECUTE follows.
REVOKE ALL ON takes_quality_trend_v1 FROM PUBLIC;
GRANT SELECT ON takes_quality_trend_v1 TO evalledger_revops, evalledger_auditor;

-- security_invoker where the server has it (15+), belt and braces: the rows function is
-- SECURITY INVOKER already, so each reader reads through its own row-level security.
DO $invoker$
BEGIN
    IF current_setting('server_version_num')::int >= 150000 THEN
        ALTER VIEW evalledger.takes_quality_trend_v1 SET (security_invoker = true);
    END IF;
END
$invoker$;
