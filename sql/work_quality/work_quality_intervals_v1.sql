-- work_quality_intervals_v1: per completed work-quality snapshot, one row per dimension with its
-- uncertainty over the judges (docs/statistics.md, "work-quality"), beside the comparison, which uses
-- the means only. Read from what the snapshot's completion stored (eval_work_quality_snapshot_uncertainty:
-- work_quality_uncertainty_v1 of the stored Snapshot document, since migration 0153), not computed at
-- each read. Read by RevOps and auditors under their own row-level security.
CREATE VIEW evalledger.work_quality_intervals_v1 AS
    SELECT s.snapshot_id, s.name, s.run_id, s.at, s.completed_at, u.key AS dimension,
           (u.value ->> 'estimate')::float8 AS estimate, (u.value ->> 'stderr')::float8 AS stderr,
           (u.value -> 'ci95' ->> 0)::float8 AS ci95_lo, (u.value -> 'ci95' ->> 1)::float8 AS ci95_hi,
           (u.value ->> 'n')::bigint AS judges
      FROM evalledger.eval_work_quality_snapshots s
      JOIN evalledger.eval_work_quality_snapshot_uncertainty x ON x.snapshot_id = s.snapshot_id
     CROSS JOIN LATERAL jsonb_each(x.uncertainty) u
     WHERE s.completed_at IS NOT NULL AND jsonb_typeof(u.value) = 'object';
COMMENT ON VIEW evalledger.work_quality_intervals_v1 IS
    'Per completed work-quality snapshot and dimension, the judges'' mean with its standard error and 95% interval; covers the judges'' disagreement on this work product, not other runs of the bot (docs/statistics.md); stored when the snapshot completed (eval_work_quality_snapshot_uncertainty).';
COMMENT ON COLUMN evalledger.work_quality_intervals_v1.snapshot_id IS 'The snapshot (eval_work_quality_snapshots.snapshot_id).';
COMMENT ON COLUMN evalledger.work_quality_intervals_v1.name IS 'The target (a bot or feature) the snapshot is of.';
COMMENT ON COLUMN evalledger.work_quality_intervals_v1.run_id IS 'The assessed run''s id (the snapshot''s RunID).';
COMMENT ON COLUMN evalledger.work_quality_intervals_v1.at IS 'When the assessed run happened (timestamptz; the snapshot''s At).';
COMMENT ON COLUMN evalledger.work_quality_intervals_v1.completed_at IS 'When the snapshot was completed (timestamptz).';
COMMENT ON COLUMN evalledger.work_quality_intervals_v1.dimension IS 'A dimension of the rubric: efficacy, completeness, output_quality, restraint, reliability, value_for_money or overall.';
COMMENT ON COLUMN evalledger.work_quality_intervals_v1.estimate IS 'The judges'' mean score, on the rubric''s scale (0-1).';
COMMENT ON COLUMN evalledger.work_quality_intervals_v1.stderr IS 'Its standard error over the judges, on the rubric''s scale (0-1); NULL with one judge.';
COMMENT ON COLUMN evalledger.work_quality_intervals_v1.ci95_lo IS 'The 95% interval''s lower bound, on the rubric''s scale (0-1).';
COMMENT ON COLUMN evalledger.work_quality_intervals_v1.ci95_hi IS 'The 95% interval''s upper bound, on the rubric''s scale (0-1).';
COMMENT ON COLUMN evalledger.work_quality_intervals_v1.judges IS 'Count: the judges whose scores the snapshot holds for the dimension.';

REVOKE ALL ON work_quality_intervals_v1 FROM PUBLIC;
GRANT SELECT ON work_quality_intervals_v1 TO evalledger_revops, evalledger_auditor;

DO $invoker$
BEGIN
    IF current_setting('server_version_num')::int >= 150000 THEN
        ALTER VIEW evalledger.work_quality_intervals_v1 SET (security_invoker = true);
    END IF;
END
$invoker$;
