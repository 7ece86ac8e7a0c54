-- takes_quality_flaky_v1: the items whose judge repeats straddle a threshold (docs/statistics.md,
-- "Judge repeats"). A takes-quality run's sample is the item; with --repeats K each judge scores it
-- K times per cycle, and a judge's repeats of a dimension in one cycle straddle a threshold when
-- the lowest is below it and the highest at or above it. The thresholds are the run's rubric's own
-- (pass_rule.every_dim_mean_at_least and every_dim_min_at_least, read from the rubric row): a
-- straddle means the verdict could have gone the other way on another asking. One row per
-- completed run, dimension, judge, cycle and threshold straddled. Read by RevOps and auditors under
-- their own row-level security.
CREATE VIEW evalledger.takes_quality_flaky_v1 AS
    SELECT r.id AS run_id, b.version AS rubric_version, r.started_at, r.verdict, d.key AS dimension,
           v.model AS judge_model, v.cycle, count(*) AS repeats,
           min((v.scores ->> d.key)::numeric) AS lowest, max((v.scores ->> d.key)::numeric) AS highest,
           t.rule, t.threshold
      FROM evalledger.eval_takes_quality_runs r
      JOIN evalledger.rubric b ON b.rubric_id = r.rubric_id
     CROSS JOIN LATERAL jsonb_array_elements(b.definition -> 'dimensions') dd
     CROSS JOIN LATERAL (SELECT dd ->> 'key' AS key) d
     CROSS JOIN LATERAL (VALUES ('every_dim_mean_at_least', (b.definition -> 'pass_rule' ->> 'every_dim_mean_at_least')::numeric),
                                ('every_dim_min_at_least', (b.definition -> 'pass_rule' ->> 'every_dim_min_at_least')::numeric)) t(rule, threshold)
      JOIN evalledger.eval_takes_quality_judge_verdicts v ON v.run_id = r.id AND v.contributes
     WHERE r.completed_at IS NOT NULL AND t.threshold IS NOT NULL
     GROUP BY r.id, b.version, r.started_at, r.verdict, d.key, v.model, v.cycle, t.rule, t.threshold
    HAVING count(*) >= 2 AND min((v.scores ->> d.key)::numeric) < t.threshold
       AND max((v.scores ->> d.key)::numeric) >= t.threshold;
COMMENT ON VIEW evalledger.takes_quality_flaky_v1 IS
    'Per completed takes-quality run, dimension, judge, cycle and rubric threshold: a flaky item, where the judge''s repeats (--repeats K) of the dimension straddle the threshold (lowest below it, highest at or above it). Thresholds are the rubric''s pass_rule (docs/statistics.md, "Judge repeats").';
COMMENT ON COLUMN evalledger.takes_quality_flaky_v1.run_id IS 'The run (eval_takes_quality_runs.id): its sample of takes is the item.';
COMMENT ON COLUMN evalledger.takes_quality_flaky_v1.rubric_version IS 'The rubric epoch the run was judged by, e.g. v1.1.';
COMMENT ON COLUMN evalledger.takes_quality_flaky_v1.started_at IS 'When the run started (timestamptz; the receipt''s ts).';
COMMENT ON COLUMN evalledger.takes_quality_flaky_v1.verdict IS 'The verdict the database computed: pass, fail or inconclusive (unchanged by flakiness).';
COMMENT ON COLUMN evalledger.takes_quality_flaky_v1.dimension IS 'The rubric dimension whose repeats straddle the threshold.';
COMMENT ON COLUMN evalledger.takes_quality_flaky_v1.judge_model IS 'The judge model, provider:model (e.g. openai:gpt-4o).';
COMMENT ON COLUMN evalledger.takes_quality_flaky_v1.cycle IS 'Count: the cycle (1 onwards) whose repeats straddle it.';
COMMENT ON COLUMN evalledger.takes_quality_flaky_v1.repeats IS 'Count: the judge''s contributing repeats in that cycle.';
COMMENT ON COLUMN evalledger.takes_quality_flaky_v1.lowest IS 'The lowest of those scores, on the rubric''s scale (1-10).';
COMMENT ON COLUMN evalledger.takes_quality_flaky_v1.highest IS 'The highest of those scores, on the rubric''s scale (1-10).';
COMMENT ON COLUMN evalledger.takes_quality_flaky_v1.rule IS 'Which threshold of the rubric''s pass_rule: every_dim_mean_at_least or every_dim_min_at_least.';
COMMENT ON COLUMN evalledger.takes_quality_flaky_v1.threshold IS 'That threshold, on the rubric''s scale (1-10), as the rubric row holds it.';

REVOKE ALL ON takes_quality_flaky_v1 FROM PUBLIC;
GRANT SELECT ON takes_quality_flaky_v1 TO evalledger_revops, evalledger_auditor;

DO $invoker$
BEGIN
    IF current_setting('server_version_num')::int >= 150000 THEN
        ALTER VIEW evalledger.takes_quality_flaky_v1 SET (security_invoker = true);
    END IF;
END
$invoker$;
