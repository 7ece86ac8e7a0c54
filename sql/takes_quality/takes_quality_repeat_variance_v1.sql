-- takes_quality_repeat_variance_v1: judge noise told from item variance (docs/statistics.md, "Judge
-- repeats"), per rubric version and dimension over the completed takes-quality runs the reader may
-- read. The item is a run's sample of takes; a group is one judge's contributing repeats of the item
-- in one cycle (--repeats K). judge_variance (within an item, between repeats) pools the groups'
-- sample variances with weights n - 1: sum((n_g - 1) s_g^2) / sum(n_g - 1), NULL when no group has
-- two repeats. item_variance (between items) is the sample variance of the items' means (each the
-- mean of all its contributing scores of the dimension), NULL with fewer than two items. When
-- item_variance is not larger than judge_variance / (judges x repeats), the runs' differences are
-- within the judges' own noise. flaky_items counts the runs with a straddle (takes_quality_flaky_v1).
-- Every float8 sum runs in a fixed order, never a plan's: a group's repeats by repeat and retry, the
-- groups and an item's scores by run, model (byte by byte), cycle, repeat and retry, the items by
-- run (docs/statistics.md, "Order of summation").
CREATE VIEW evalledger.takes_quality_repeat_variance_v1 AS
    WITH scored AS (
        SELECT r.id AS run_id, b.version AS rubric_version, d ->> 'key' AS dimension, v.model, v.cycle,
               v.repeat_no, v.retry_no, (v.scores ->> (d ->> 'key'))::float8 AS score
          FROM evalledger.eval_takes_quality_runs r
          JOIN evalledger.rubric b ON b.rubric_id = r.rubric_id
         CROSS JOIN LATERAL jsonb_array_elements(b.definition -> 'dimensions') d
          JOIN evalledger.eval_takes_quality_judge_verdicts v ON v.run_id = r.id AND v.contributes
         WHERE r.completed_at IS NOT NULL),
    groups AS (
        SELECT s.rubric_version, s.dimension, s.run_id, s.model, s.cycle, count(*) AS n,
               coalesce(var_samp(s.score ORDER BY s.repeat_no, s.retry_no), 0) AS var
          FROM scored s GROUP BY s.rubric_version, s.dimension, s.run_id, s.model, s.cycle),
    within AS (
        SELECT g.rubric_version, g.dimension,
               sum((g.n - 1) * g.var ORDER BY g.run_id, g.model COLLATE "C", g.cycle) / nullif(sum(g.n - 1), 0)
                   AS judge_variance,
               sum(g.n) AS calls, max(g.n) AS max_repeats
          FROM groups g GROUP BY g.rubric_version, g.dimension),
    items AS (
        SELECT s.rubric_version, s.dimension, s.run_id,
               avg(s.score ORDER BY s.model COLLATE "C", s.cycle, s.repeat_no, s.retry_no) AS item_mean
          FROM scored s GROUP BY s.rubric_version, s.dimension, s.run_id),
    between_items AS (
        SELECT i.rubric_version, i.dimension, count(*) AS items, var_samp(i.item_mean ORDER BY i.run_id) AS item_variance
          FROM items i GROUP BY i.rubric_version, i.dimension)
    SELECT w.rubric_version, w.dimension, bi.items, w.calls, w.max_repeats, w.judge_variance, bi.item_variance,
           (SELECT count(DISTINCT f.run_id) FROM evalledger.takes_quality_flaky_v1 f
             WHERE f.rubric_version = w.rubric_version AND f.dimension = w.dimension) AS flaky_items
      FROM within w JOIN between_items bi USING (rubric_version, dimension);
COMMENT ON VIEW evalledger.takes_quality_repeat_variance_v1 IS
    'Per rubric version and dimension over completed takes-quality runs: the judges'' noise (the variance between one judge''s repeats of one item, pooled) beside the variance between items (the runs'' means), and how many items are flaky (docs/statistics.md, "Judge repeats").';
COMMENT ON COLUMN evalledger.takes_quality_repeat_variance_v1.rubric_version IS 'The rubric epoch, e.g. v1.1.';
COMMENT ON COLUMN evalledger.takes_quality_repeat_variance_v1.dimension IS 'A rubric dimension (accuracy, attribution, ...).';
COMMENT ON COLUMN evalledger.takes_quality_repeat_variance_v1.items IS 'Count: the completed runs (items) with a contributing score of the dimension.';
COMMENT ON COLUMN evalledger.takes_quality_repeat_variance_v1.calls IS 'Count: the contributing judge calls (repeats and cycles) behind the row.';
COMMENT ON COLUMN evalledger.takes_quality_repeat_variance_v1.max_repeats IS 'Count: the most contributing repeats one judge gave one item in one cycle (1: no repeats, judge_variance NULL).';
COMMENT ON COLUMN evalledger.takes_quality_repeat_variance_v1.judge_variance IS 'Within-item variance between repeats of one judge in one cycle, pooled with weights n - 1 (the rubric''s scale squared); NULL when no judge was asked twice.';
COMMENT ON COLUMN evalledger.takes_quality_repeat_variance_v1.item_variance IS 'Between-item variance: the sample variance of the runs'' mean scores (the rubric''s scale squared); NULL with fewer than two runs.';
COMMENT ON COLUMN evalledger.takes_quality_repeat_variance_v1.flaky_items IS 'Count: the runs with a judge whose repeats straddle a rubric threshold on this dimension (takes_quality_flaky_v1).';

REVOKE ALL ON takes_quality_repeat_variance_v1 FROM PUBLIC;
GRANT SELECT ON takes_quality_repeat_variance_v1 TO evalledger_revops, evalledger_auditor;

DO $invoker$
BEGIN
    IF current_setting('server_version_num')::int >= 150000 THEN
        ALTER VIEW evalledger.takes_quality_repeat_variance_v1 SET (security_invoker = true);
    END IF;
END
$invoker$;
