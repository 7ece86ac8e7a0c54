-- prompt_drift_rows_v3: the rows of prompt_drift_rows_v2, exactly, with the first month found
-- without passing over the rows the reader may not see. The months start at the first month the
-- reader sees a production analysis or a run of the brain: the earliest produced_at (started_at)
-- among the rows it reads. v2 took it as the first entry of an index in that order, and RevOps
-- (the hot tier only) passed over every cold entry before it, so the panel grew with the cold
-- tier. Here it is the least of two bounded lookups, both exact whatever the rows hold: with
-- first_recorded the earliest created_at the reader sees (one probe: the tier clock follows the
-- brain in the index, and a policy's bound on it is an index condition), a row it sees was
-- produced either at or after first_recorded - 24 hours (the first such row in produced_at order,
-- past at most the rows it may not see that were produced in those 24 hours) or more than 24
-- hours before it was recorded (an audited import: the few rows of a partial index). 24 hours, not '1 day':
-- timestamptz minus a day depends on the session's TimeZone, minus 24 hours does not.
CREATE FUNCTION evalledger.prompt_drift_rows_v3(p_brain text, p_from_month date, p_to_month date, p_trigger text)
RETURNS TABLE (
    brain_under_test          varchar(16),
    month                     date,
    production_prompt_hash    varchar(64),
    production_last_seen_at   timestamptz,
    eval_prompt_hash          varchar(64),
    eval_prompt_version_label varchar(64),
    eval_run_id               uuid,
    eval_decision             text,
    eval_started_at           timestamptz,
    prompt_drift              boolean)
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
    SELECT t.target_id, m.month::date, p.system_prompt_hash, p.produced_at, e.system_prompt_hash,
           e.system_prompt_version_label, e.eval_run_id, e.decision::text, e.started_at,
           -- NULL without production traffic; TRUE when production runs a prompt that never passed.
           CASE WHEN p.system_prompt_hash IS NOT NULL THEN (p.system_prompt_hash = e.system_prompt_hash) IS NOT TRUE END
      FROM evalledger.target t
     CROSS JOIN LATERAL (
            SELECT min(a.created_at) AS first_recorded FROM evalledger.brain_analysis_log a
             WHERE a.brain = t.target_id AND a.origin = 'production') pa
     CROSS JOIN LATERAL (
            SELECT min(l.created_at) AS first_recorded FROM evalledger.brain_eval_log l
             WHERE l.brain_under_test = t.target_id) pl
     CROSS JOIN LATERAL (
            SELECT least(
                       (SELECT a.produced_at FROM evalledger.brain_analysis_log a
                         WHERE a.brain = t.target_id AND a.origin = 'production'
                           AND a.produced_at >= pa.first_recorded - interval '24 hours'
                         ORDER BY a.produced_at LIMIT 1),
                       (SELECT min(a.produced_at) FROM evalledger.brain_analysis_log a
                         WHERE a.brain = t.target_id AND a.origin = 'production'
                           AND a.created_at - a.produced_at > interval '24 hours'),
                       (SELECT l.started_at FROM evalledger.brain_eval_log l
                         WHERE l.brain_under_test = t.target_id
                           AND l.started_at >= pl.first_recorded - interval '24 hours'
                         ORDER BY l.started_at LIMIT 1),
                       (SELECT min(l.started_at) FROM evalledger.brain_eval_log l
                         WHERE l.brain_under_test = t.target_id
                           AND l.created_at - l.started_at > interval '24 hours')) AS first_seen) f
     CROSS JOIN LATERAL generate_series(
            coalesce(date_trunc('month', p_from_month::timestamp), date_trunc('month', timezone('UTC', f.first_seen))),
            coalesce(date_trunc('month', p_to_month::timestamp), date_trunc('month', timezone('UTC', statement_timestamp()))),
            interval '1 month') m(month)
      LEFT JOIN LATERAL (
            SELECT a.system_prompt_hash, a.produced_at
              FROM evalledger.brain_analysis_log a
             WHERE a.brain = t.target_id AND a.origin = 'production'
               AND a.produced_at < timezone('UTC', m.month + interval '1 month')
             ORDER BY a.produced_at DESC, a.created_at DESC, a.analysis_id DESC
             LIMIT 1) p ON true
      LEFT JOIN LATERAL (
            SELECT l.eval_run_id, l.system_prompt_hash, l.system_prompt_version_label, l.decision, l.started_at
              FROM evalledger.brain_eval_log l
             WHERE l.brain_under_test = t.target_id
               AND l.completed_at IS NOT NULL
               AND l.decision IN ('pass', 'pass_with_notes')
               AND l.started_at < timezone('UTC', m.month + interval '1 month')
               AND (p_trigger IS NULL OR l.run_trigger::text = p_trigger)
             ORDER BY l.started_at DESC, l.eval_run_id DESC
             LIMIT 1) e ON true
     WHERE t.kind = 'brain' AND (p_brain IS NULL OR t.target_id = p_brain)
       AND (p.system_prompt_hash IS NOT NULL OR e.eval_run_id IS NOT NULL)
$$;

GRANT EXECUTE ON FUNCTION prompt_drift_rows_v3(text, date, date, text) TO evalledger_revops, evalledger_auditor;
