-- prompt_drift_rows_v2: production-versus-eval prompt drift as a history: per brain and UTC month,
-- as of that month's end (now, for the current month), the prompt of the latest production
-- analysis (brain_analysis_log, origin 'production') against the prompt of the last passing eval
-- (a completed run decided pass or pass_with_notes), and whether they differ. Months run from
-- the month of p_from_month (else the first month the reader sees a production analysis or a run
-- of the brain) to the month of p_to_month (else this month). Each month is two lookups: the
-- latest production analysis through brain_analysis_log_production_idx, the last passing run
-- through (brain_under_test, started_at DESC) (index 1), so a month costs the same however long
-- the history. p_trigger, when given, counts only evals of that trigger. Readers see what their
-- policies show (RevOps: the hot tier; a reviewer no production traffic).
CREATE FUNCTION evalledger.prompt_drift_rows_v2(p_brain text, p_from_month date, p_to_month date, p_trigger text)
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
            SELECT least(
                       (SELECT a.produced_at FROM evalledger.brain_analysis_log a
                         WHERE a.brain = t.target_id AND a.origin = 'production' ORDER BY a.produced_at LIMIT 1),
                       (SELECT l.started_at FROM evalledger.brain_eval_log l
                         WHERE l.brain_under_test = t.target_id ORDER BY l.started_at LIMIT 1)) AS first_seen) f
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
GRANT EXECUTE ON FUNCTION prompt_drift_rows_v2(text, date, date, text) TO evalledger_revops, evalledger_auditor;
