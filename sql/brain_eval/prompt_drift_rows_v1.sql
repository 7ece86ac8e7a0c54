-- prompt_drift_rows_v1: per brain, the prompt hash of its latest production analysis against the hash of its last passing eval.
-- A production analysis is a brain_analysis_log row of origin 'production' (the harness records
-- its own analyses, origin 'eval', in the same table); a passing eval is a completed run decided
-- pass or pass_with_notes. Latest means produced_at, last means started_at.
CREATE FUNCTION evalledger.prompt_drift_rows_v1()
RETURNS TABLE (
    brain                       varchar(16),
    production_prompt_hash      varchar(64),
    production_last_seen_at     timestamptz,
    eval_prompt_hash            varchar(64),
    eval_prompt_version_label   varchar(64),
    eval_run_id                 uuid,
    eval_decision               text,
    eval_started_at             timestamptz,
    prompt_drift                boolean)
LANGUAGE sql STABLE AS $$
    SELECT t.target_id, p.system_prompt_hash, p.produced_at,
           e.system_prompt_hash, e.system_prompt_version_label, e.eval_run_id, e.decision::text,
           e.started_at,
           -- NULL without production traffic; TRUE when production runs a prompt that never passed.
           CASE WHEN p.system_prompt_hash IS NOT NULL
                THEN (p.system_prompt_hash OPERATOR(pg_catalog.=) e.system_prompt_hash) IS NOT TRUE END
      FROM evalledger.target t
      LEFT JOIN LATERAL (
            SELECT a.system_prompt_hash, a.produced_at
              FROM evalledger.brain_analysis_log a
             WHERE a.brain OPERATOR(pg_catalog.=) t.target_id AND a.origin OPERATOR(pg_catalog.=) 'production'
             ORDER BY a.produced_at DESC, a.created_at DESC, a.analysis_id DESC
             LIMIT 1) p ON true
      LEFT JOIN LATERAL (
            SELECT l.eval_run_id, l.system_prompt_hash, l.system_prompt_version_label, l.decision, l.started_at
              FROM evalledger.brain_eval_log l
             WHERE l.brain_under_test OPERATOR(pg_catalog.=) t.target_id
               AND l.completed_at IS NOT NULL
               AND l.decision OPERATOR(pg_catalog.=) ANY (ARRAY['pass', 'pass_with_notes']::evalledger.eval_decision[])
             ORDER BY l.started_at DESC, l.eval_run_id DESC
             LIMIT 1) e ON true
     WHERE t.kind OPERATOR(pg_catalog.=) 'brain'
$$;

-- A function a view calls is executed with the reader's rights, so the reader needs EXECUTE.
GRANT EXECUTE ON FUNCTION prompt_drift_rows_v1() TO evalledger_revops, evalledger_auditor;
