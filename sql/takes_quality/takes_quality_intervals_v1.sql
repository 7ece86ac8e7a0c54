-- takes_quality_intervals_v1: per completed takes-quality run, one row per rubric dimension and
-- the overall with its uncertainty over the deciding cycle's judges (docs/statistics.md,
-- "takes-quality"), beside the verdict, which uses the means only. Read from what the run's completion
-- stored (eval_takes_quality_run_uncertainty: takes_quality_uncertainty_v1 of its verdict rows, since
-- migration 0153), not computed at each read. Read by RevOps and auditors under their own row-level
-- security.
CREATE VIEW evalledger.takes_quality_intervals_v1 AS
    SELECT r.id AS run_id, b.version AS rubric_version, r.started_at, r.completed_at, r.verdict, u.key AS dimension,
           (u.value ->> 'estimate')::float8 AS estimate, (u.value ->> 'stderr')::float8 AS stderr,
           (u.value -> 'ci95' ->> 0)::float8 AS ci95_lo, (u.value -> 'ci95' ->> 1)::float8 AS ci95_hi,
           (u.value ->> 'n')::bigint AS judges, (u.value ->> 'between_call_variance')::float8 AS between_call_variance,
           (u.value ->> 'calls')::bigint AS calls
      FROM evalledger.eval_takes_quality_runs r
      JOIN evalledger.rubric b ON b.rubric_id = r.rubric_id
      JOIN evalledger.eval_takes_quality_run_uncertainty x ON x.run_id = r.id
     CROSS JOIN LATERAL jsonb_each(x.uncertainty) u
     WHERE r.completed_at IS NOT NULL AND jsonb_typeof(u.value) = 'object';
COMMENT ON VIEW evalledger.takes_quality_intervals_v1 IS
    'Per completed takes-quality run, each rubric dimension and the overall with its standard error and 95% interval over the deciding cycle''s judges, and the variance of a judge''s score between calls; covers the judges'' disagreement on this sample, not the sampling of takes (docs/statistics.md); stored when the run completed (eval_takes_quality_run_uncertainty).';
COMMENT ON COLUMN evalledger.takes_quality_intervals_v1.run_id IS 'The run (eval_takes_quality_runs.id).';
COMMENT ON COLUMN evalledger.takes_quality_intervals_v1.rubric_version IS 'The rubric epoch the run was judged by, e.g. v1.1.';
COMMENT ON COLUMN evalledger.takes_quality_intervals_v1.started_at IS 'When the run started (timestamptz; the receipt''s ts).';
COMMENT ON COLUMN evalledger.takes_quality_intervals_v1.completed_at IS 'When the run was completed (timestamptz).';
COMMENT ON COLUMN evalledger.takes_quality_intervals_v1.verdict IS 'The verdict the database computed: pass, fail or inconclusive (unchanged by the interval).';
COMMENT ON COLUMN evalledger.takes_quality_intervals_v1.dimension IS 'A rubric dimension (accuracy, attribution, ...) or overall (the mean of the dimension means).';
COMMENT ON COLUMN evalledger.takes_quality_intervals_v1.estimate IS 'The mean of the contributing judges'' scores, on the rubric''s scale (1-10), exact.';
COMMENT ON COLUMN evalledger.takes_quality_intervals_v1.stderr IS 'Its standard error over the judges, on the rubric''s scale (1-10); NULL with one judge.';
COMMENT ON COLUMN evalledger.takes_quality_intervals_v1.ci95_lo IS 'The 95% interval''s lower bound, on the rubric''s scale (1-10).';
COMMENT ON COLUMN evalledger.takes_quality_intervals_v1.ci95_hi IS 'The 95% interval''s upper bound, on the rubric''s scale (1-10).';
COMMENT ON COLUMN evalledger.takes_quality_intervals_v1.judges IS 'Count: the judges that contributed in the deciding cycle.';
COMMENT ON COLUMN evalledger.takes_quality_intervals_v1.between_call_variance IS 'The variance of one judge''s score between calls, over the cycles (the rubric''s scale squared); NULL for the overall and when no judge contributed twice.';
COMMENT ON COLUMN evalledger.takes_quality_intervals_v1.calls IS 'Count: the contributing calls across cycles that the between-call variance saw (NULL for the overall).';

REVOKE ALL ON takes_quality_intervals_v1 FROM PUBLIC;
GRANT SELECT ON takes_quality_intervals_v1 TO evalledger_revops, evalledger_auditor;

DO $invoker$
BEGIN
    IF current_setting('server_version_num')::int >= 150000 THEN
        ALTER VIEW evalledger.takes_quality_intervals_v1 SET (security_invoker = true);
    END IF;
END
$invoker$;
