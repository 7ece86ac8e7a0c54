-- work_quality_repeat_variance_v1: judge noise told from item variance (docs/statistics.md, "Judge
-- repeats"), per rubric version and dimension over the completed work-quality snapshots judged by
-- a panel (not imports) that the reader may read. The item is a snapshot's work product; a group is
-- one judge's contributing repeats of it (--repeats K). judge_variance (within an item, between
-- repeats) pools the groups' sample variances with weights n - 1, NULL when no judge was asked twice;
-- item_variance (between items) is the sample variance of the snapshots' means (each the mean of all
-- its contributing scores of the dimension), NULL with fewer than two snapshots. flaky_items counts
-- the snapshots with a straddle (work_quality_flaky_v1). Every float8 sum runs in a fixed order,
-- never a plan's: a group's repeats by repeat and retry, the groups and a snapshot's scores by
-- snapshot, model (byte by byte), repeat and retry, the snapshots by id (docs/statistics.md, "Order
-- of summation").
CREATE VIEW evalledger.work_quality_repeat_variance_v1 AS
    WITH scored AS (
        SELECT s.snapshot_id, b.version AS rubric_version, d ->> 'key' AS dimension, v.model,
               v.repeat_no, v.retry_no, (v.scores ->> (d ->> 'key'))::float8 AS score
          FROM evalledger.eval_work_quality_snapshots s
          JOIN evalledger.rubric b ON b.rubric_id = s.rubric_id
         CROSS JOIN LATERAL jsonb_array_elements(b.definition -> 'dimensions') d
          JOIN evalledger.eval_work_quality_judge_verdicts v ON v.snapshot_id = s.snapshot_id AND v.contributes
         WHERE s.completed_at IS NOT NULL AND s.origin = 'run'),
    groups AS (
        SELECT s.rubric_version, s.dimension, s.snapshot_id, s.model, count(*) AS n,
               coalesce(var_samp(s.score ORDER BY s.repeat_no, s.retry_no), 0) AS var
          FROM scored s GROUP BY s.rubric_version, s.dimension, s.snapshot_id, s.model),
    within AS (
        SELECT g.rubric_version, g.dimension,
               sum((g.n - 1) * g.var ORDER BY g.snapshot_id, g.model COLLATE "C") / nullif(sum(g.n - 1), 0)
                   AS judge_variance,
               sum(g.n) AS calls, max(g.n) AS max_repeats
          FROM groups g GROUP BY g.rubric_version, g.dimension),
    items AS (
        SELECT s.rubric_version, s.dimension, s.snapshot_id,
               avg(s.score ORDER BY s.model COLLATE "C", s.repeat_no, s.retry_no) AS item_mean
          FROM scored s GROUP BY s.rubric_version, s.dimension, s.snapshot_id),
    between_items AS (
        SELECT i.rubric_version, i.dimension, count(*) AS items, var_samp(i.item_mean ORDER BY i.snapshot_id) AS item_variance
          FROM items i GROUP BY i.rubric_version, i.dimension)
    SELECT w.rubric_version, w.dimension, bi.items, w.calls, w.max_repeats, w.judge_variance, bi.item_variance,
           (SELECT count(DISTINCT f.snapshot_id) FROM evalledger.work_quality_flaky_v1 f
             WHERE f.rubric_version = w.rubric_version AND f.dimension = w.dimension) AS flaky_items
      FROM within w JOIN between_items bi USING (rubric_version, dimension);
COMMENT ON VIEW evalledger.work_quality_repeat_variance_v1 IS
    'Per rubric version and dimension over completed work-quality snapshots judged by a panel: the judges'' noise (the variance between one judge''s repeats of one work product, pooled) beside the variance between snapshots, and how many are flaky (docs/statistics.md, "Judge repeats").';
COMMENT ON COLUMN evalledger.work_quality_repeat_variance_v1.rubric_version IS 'The rubric epoch, e.g. v1.0.';
COMMENT ON COLUMN evalledger.work_quality_repeat_variance_v1.dimension IS 'A rubric dimension (efficacy, completeness, ..., overall).';
COMMENT ON COLUMN evalledger.work_quality_repeat_variance_v1.items IS 'Count: the completed snapshots (items) with a contributing score of the dimension.';
COMMENT ON COLUMN evalledger.work_quality_repeat_variance_v1.calls IS 'Count: the contributing judge calls (repeats) behind the row.';
COMMENT ON COLUMN evalledger.work_quality_repeat_variance_v1.max_repeats IS 'Count: the most contributing repeats one judge gave one snapshot (1: no repeats, judge_variance NULL).';
COMMENT ON COLUMN evalledger.work_quality_repeat_variance_v1.judge_variance IS 'Within-item variance between repeats of one judge, pooled with weights n - 1 (the rubric''s scale squared); NULL when no judge was asked twice.';
COMMENT ON COLUMN evalledger.work_quality_repeat_variance_v1.item_variance IS 'Between-item variance: the sample variance of the snapshots'' mean scores (the rubric''s scale squared); NULL with fewer than two snapshots.';
COMMENT ON COLUMN evalledger.work_quality_repeat_variance_v1.flaky_items IS 'Count: the snapshots with a judge whose repeats straddle the regression line on this dimension (work_quality_flaky_v1).';

REVOKE ALL ON work_quality_repeat_variance_v1 FROM PUBLIC;
GRANT SELECT ON work_quality_repeat_variance_v1 TO evalledger_revops, evalledger_auditor;

DO $invoker$
BEGIN
    IF current_setting('server_version_num')::int >= 150000 THEN
        ALTER VIEW evalledger.work_quality_repeat_variance_v1 SET (security_invoker = true);
    END IF;
END
$invoker$;
