-- retention_due_v2: true when a row of an aging table is due for purge: its tier clock (the
-- database's own recording time, carried onto child rows from their parent) is past the purge
-- horizon and no legal hold covers it. Reference data and every other table: never. A released
-- hold goes with its run (run holds) or once its release is past the horizon (brain and range
-- holds); a release goes only with its hold (ON DELETE CASCADE). The horizon is purge_horizon_at_v1
-- (UTC, the statement's clock), and a brain hold covers a row of the brain's prompt whatever its
-- label (retention_held_v2 with run_brains_v1).
CREATE FUNCTION evalledger.retention_due_v2(table_name text, r jsonb) RETURNS boolean
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    clock timestamptz;
    brain text;
    prompt text;
    run uuid;
BEGIN
    CASE table_name
    WHEN 'brain_eval_log' THEN
        clock := r ->> 'created_at';
        brain := r ->> 'brain_under_test';
        prompt := r ->> 'system_prompt_hash';
        run := r ->> 'eval_run_id';
    WHEN 'brain_eval_question_score', 'brain_eval_harness_run', 'brain_eval_harness_answer',
         'brain_eval_judge_suggestion', 'brain_eval_review_entry', 'brain_eval_run_review',
         'brain_eval_suggestion_shown', 'brain_eval_run_closure', 'brain_eval_run_uncertainty',
         'brain_eval_trend' THEN
        clock := r ->> 'run_created_at';
        run := r ->> 'eval_run_id';
        SELECT l.brain_under_test, l.system_prompt_hash INTO brain, prompt
          FROM evalledger.brain_eval_log l WHERE l.eval_run_id = run;
    WHEN 'brain_analysis_log' THEN
        clock := r ->> 'created_at';
        brain := r ->> 'brain';
        prompt := r ->> 'system_prompt_hash';
    WHEN 'brain_eval_import', 'eval_work_quality_snapshots', 'eval_candidate_keys' THEN
        clock := r ->> 'created_at';
    WHEN 'eval_takes_quality_runs' THEN
        clock := r ->> 'created_at';
        brain := r ->> 'target_id';
    WHEN 'eval_takes_quality_judge_verdicts', 'eval_takes_quality_run_uncertainty' THEN
        clock := r ->> 'run_created_at';
        SELECT t.target_id INTO brain FROM evalledger.eval_takes_quality_runs t WHERE t.id = (r ->> 'run_id')::bigint;
    WHEN 'eval_run_closure' THEN
        clock := r ->> 'run_created_at';
        SELECT t.target_id INTO brain FROM evalledger.eval_takes_quality_runs t
         WHERE t.id = (r ->> 'takes_quality_run_id')::bigint;
    WHEN 'eval_work_quality_judge_verdicts' THEN
        clock := r ->> 'snapshot_created_at';
    WHEN 'eval_work_quality_snapshot_uncertainty' THEN
        clock := r ->> 'run_created_at';
    WHEN 'eval_capture_failures' THEN
        clock := r ->> 'recorded_at';
    WHEN 'eval_gate_decision' THEN
        -- Its own clock, its takes-quality run's brain; never while that run stays.
        IF evalledger.retention_gate_pinned_v1((r ->> 'run_id')::bigint) THEN
            RETURN false;
        END IF;
        clock := r ->> 'created_at';
        SELECT t.target_id INTO brain FROM evalledger.eval_takes_quality_runs t WHERE t.id = (r ->> 'run_id')::bigint;
    WHEN 'replay_run' THEN
        clock := r ->> 'created_at';
        brain := r ->> 'brain_version';
    WHEN 'replay_query' THEN
        clock := r ->> 'run_created_at';
        SELECT x.brain_version INTO brain FROM evalledger.replay_run x
         WHERE x.replay_run_id = (r ->> 'replay_run_id')::bigint;
    WHEN 'legal_hold' THEN
        IF r ->> 'released_at' IS NULL
           AND NOT EXISTS (SELECT 1 FROM evalledger.legal_hold_release x WHERE x.hold_id = (r ->> 'hold_id')::bigint) THEN
            RETURN false;
        END IF;
        IF r ->> 'eval_run_id' IS NOT NULL THEN
            SELECT l.created_at, l.brain_under_test, l.system_prompt_hash, l.eval_run_id INTO clock, brain, prompt, run
              FROM evalledger.brain_eval_log l WHERE l.eval_run_id = (r ->> 'eval_run_id')::uuid;
        ELSE
            SELECT coalesce((r ->> 'released_at')::timestamptz, max(x.released_at)) INTO clock
              FROM evalledger.legal_hold_release x WHERE x.hold_id = (r ->> 'hold_id')::bigint;
            RETURN clock < evalledger.purge_horizon_at_v1();
        END IF;
    WHEN 'legal_hold_release' THEN
        RETURN NOT EXISTS (SELECT 1 FROM evalledger.legal_hold h WHERE h.hold_id = (r ->> 'hold_id')::bigint);
    ELSE
        RETURN false;
    END CASE;
    RETURN coalesce(clock < evalledger.purge_horizon_at_v1()
                    AND NOT evalledger.retention_held_v2(clock, evalledger.run_brains_v1(brain, prompt), run), false);
END;
$$;
