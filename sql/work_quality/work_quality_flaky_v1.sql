-- work_quality_flaky_v1: the snapshots whose judge repeats straddle the regression line (docs/
-- statistics.md, "Judge repeats"). A work-quality snapshot (one work product) is the item; with
-- --repeats K each judge scores it K times. Its rubric holds no absolute threshold: the gate is
-- relative, overall or value_for_money dropping by more than the rubric's compare.regress_tolerance
-- (read from the snapshot's rubric row) below the previous snapshot's mean. A judge's repeats of one
-- of those dimensions straddle that line when the lowest is below it and the highest at or above it:
-- on another asking the comparison could have gone the other way. One row per completed snapshot
-- with a previous one, dimension and judge that straddles. Read by RevOps and auditors under their
-- own row-level security.
CREATE VIEW evalledger.work_quality_flaky_v1 AS
    SELECT s.snapshot_id, s.name, s.run_id, b.version AS rubric_version, s.at, d.key AS dimension,
           v.model AS judge_model, count(*) AS repeats,
           min((v.scores ->> d.key)::numeric) AS lowest, max((v.scores ->> d.key)::numeric) AS highest,
           (p.mean_scores ->> d.key)::numeric - (b.definition -> 'compare' ->> 'regress_tolerance')::numeric AS threshold
      FROM evalledger.eval_work_quality_snapshots s
      JOIN evalledger.rubric b ON b.rubric_id = s.rubric_id
      JOIN evalledger.eval_work_quality_snapshots p ON p.snapshot_id = s.prev_snapshot_id
     CROSS JOIN (VALUES ('overall'), ('value_for_money')) d(key)
      JOIN evalledger.eval_work_quality_judge_verdicts v ON v.snapshot_id = s.snapshot_id AND v.contributes
     WHERE s.completed_at IS NOT NULL AND p.mean_scores ? d.key
     GROUP BY s.snapshot_id, s.name, s.run_id, b.version, s.at, d.key, v.model, p.mean_scores, b.definition
    HAVING count(*) >= 2
       AND min((v.scores ->> d.key)::numeric)
           < (p.mean_scores ->> d.key)::numeric - (b.definition -> 'compare' ->> 'regress_tolerance')::numeric
       AND max((v.scores ->> d.key)::numeric)
           >= (p.mean_scores ->> d.key)::numeric - (b.definition -> 'compare' ->> 'regress_tolerance')::numeric;
COMMENT ON VIEW evalledger.work_quality_flaky_v1 IS
    'Per completed work-quality snapshot with a previous one, gated dimension (overall, value_for_money) and judge: a flaky item, where the judge''s repeats (--repeats K) straddle the regression line, the previous mean less the rubric''s compare.regress_tolerance (docs/statistics.md, "Judge repeats").';
COMMENT ON COLUMN evalledger.work_quality_flaky_v1.snapshot_id IS 'The snapshot (eval_work_quality_snapshots.snapshot_id): its work product is the item.';
COMMENT ON COLUMN evalledger.work_quality_flaky_v1.name IS 'The target (bot or feature) the snapshot assesses.';
COMMENT ON COLUMN evalledger.work_quality_flaky_v1.run_id IS 'The assessed run''s id (--run-id).';
COMMENT ON COLUMN evalledger.work_quality_flaky_v1.rubric_version IS 'The rubric epoch the snapshot was judged by, e.g. v1.0.';
COMMENT ON COLUMN evalledger.work_quality_flaky_v1.at IS 'When the snapshot was taken (timestamptz).';
COMMENT ON COLUMN evalledger.work_quality_flaky_v1.dimension IS 'The gated dimension whose repeats straddle the line: overall or value_for_money.';
COMMENT ON COLUMN evalledger.work_quality_flaky_v1.judge_model IS 'The judge model, provider:model (e.g. openai:gpt-4o).';
COMMENT ON COLUMN evalledger.work_quality_flaky_v1.repeats IS 'Count: the judge''s contributing repeats.';
COMMENT ON COLUMN evalledger.work_quality_flaky_v1.lowest IS 'The lowest of those scores, on the rubric''s scale (0-1).';
COMMENT ON COLUMN evalledger.work_quality_flaky_v1.highest IS 'The highest of those scores, on the rubric''s scale (0-1).';
COMMENT ON COLUMN evalledger.work_quality_flaky_v1.threshold IS 'The regression line, on the rubric''s scale (0-1): the previous snapshot''s mean of the dimension less the rubric''s regress_tolerance.';

REVOKE ALL ON work_quality_flaky_v1 FROM PUBLIC;
GRANT SELECT ON work_quality_flaky_v1 TO evalledger_revops, evalledger_auditor;

DO $invoker$
BEGIN
    IF current_setting('server_version_num')::int >= 150000 THEN
        ALTER VIEW evalledger.work_quality_flaky_v1 SET (security_invoker = true);
    END IF;
END
$invoker$;
