-- retention_rows_v2: every row of every aging table but the captured queries (which leave by
-- whole monthly partitions) with its tier clock, the brains and run a hold may name (a brain-eval
-- row's label and every brain of its prompt), and whether a row that stays still references it (an
-- analysis of a kept run, an import of a kept run; a work-quality snapshot is never pinned by the one
-- after it): what retention_plan_v2 classifies, by the same rules as retention_due_v2 and the purge.
CREATE FUNCTION evalledger.retention_rows_v2()
RETURNS TABLE (table_name text, tier_clock timestamptz, brains text[], run uuid, pinned boolean)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
    WITH runs AS (
        SELECT l.eval_run_id, l.brain_under_test, l.created_at, l.import_id,
               evalledger.run_brains_v1(l.brain_under_test, l.system_prompt_hash) AS brains,
               l.created_at < evalledger.purge_horizon_at_v1()
               AND NOT evalledger.retention_held_v2(l.created_at,
                                                    evalledger.run_brains_v1(l.brain_under_test, l.system_prompt_hash),
                                                    l.eval_run_id) AS goes
          FROM evalledger.brain_eval_log l
    )
    SELECT 'brain_eval_log', r.created_at, r.brains, r.eval_run_id, false FROM runs r
    UNION ALL
    SELECT 'brain_eval_question_score', q.run_created_at, r.brains, q.eval_run_id, false
      FROM evalledger.brain_eval_question_score q JOIN runs r USING (eval_run_id)
    UNION ALL
    SELECT 'brain_eval_harness_run', t.run_created_at, r.brains, t.eval_run_id, false
      FROM evalledger.brain_eval_harness_run t JOIN runs r USING (eval_run_id)
    UNION ALL
    SELECT 'brain_eval_harness_answer', t.run_created_at, r.brains, t.eval_run_id, false
      FROM evalledger.brain_eval_harness_answer t JOIN runs r USING (eval_run_id)
    UNION ALL
    SELECT 'brain_eval_judge_suggestion', t.run_created_at, r.brains, t.eval_run_id, false
      FROM evalledger.brain_eval_judge_suggestion t JOIN runs r USING (eval_run_id)
    UNION ALL
    SELECT 'brain_eval_review_entry', t.run_created_at, r.brains, t.eval_run_id, false
      FROM evalledger.brain_eval_review_entry t JOIN runs r USING (eval_run_id)
    UNION ALL
    SELECT 'brain_eval_run_review', t.run_created_at, r.brains, t.eval_run_id, false
      FROM evalledger.brain_eval_run_review t JOIN runs r USING (eval_run_id)
    UNION ALL
    SELECT 'brain_eval_suggestion_shown', t.run_created_at, r.brains, t.eval_run_id, false
      FROM evalledger.brain_eval_suggestion_shown t JOIN runs r USING (eval_run_id)
    UNION ALL
    SELECT 'brain_eval_run_closure', t.run_created_at, r.brains, t.eval_run_id, false
      FROM evalledger.brain_eval_run_closure t JOIN runs r USING (eval_run_id)
    UNION ALL
    SELECT 'brain_eval_run_uncertainty', t.run_created_at, r.brains, t.eval_run_id, false
      FROM evalledger.brain_eval_run_uncertainty t JOIN runs r USING (eval_run_id)
    UNION ALL
    SELECT 'brain_eval_trend', t.run_created_at, r.brains, t.eval_run_id, false
      FROM evalledger.brain_eval_trend t JOIN runs r USING (eval_run_id)
    UNION ALL
    SELECT 'brain_analysis_log', a.created_at, evalledger.run_brains_v1(a.brain, a.system_prompt_hash), NULL::uuid,
           EXISTS (SELECT 1 FROM evalledger.brain_eval_question_score q JOIN runs r USING (eval_run_id)
                    WHERE q.brain_analysis_id = a.analysis_id AND NOT r.goes)
           OR EXISTS (SELECT 1 FROM evalledger.brain_eval_harness_answer h JOIN runs r USING (eval_run_id)
                       WHERE h.analysis_id = a.analysis_id AND NOT r.goes)
      FROM evalledger.brain_analysis_log a
    UNION ALL
    SELECT 'brain_eval_import', i.created_at, NULL::text[], NULL,
           EXISTS (SELECT 1 FROM runs r WHERE r.import_id = i.import_id AND NOT r.goes)
      FROM evalledger.brain_eval_import i
    UNION ALL
    SELECT 'eval_takes_quality_runs', t.created_at, ARRAY[t.target_id::text], NULL, false
      FROM evalledger.eval_takes_quality_runs t
    UNION ALL
    SELECT 'eval_takes_quality_judge_verdicts', v.run_created_at, ARRAY[t.target_id::text], NULL, false
      FROM evalledger.eval_takes_quality_judge_verdicts v JOIN evalledger.eval_takes_quality_runs t ON t.id = v.run_id
    UNION ALL
    SELECT 'eval_takes_quality_run_uncertainty', u.run_created_at, ARRAY[t.target_id::text], NULL, false
      FROM evalledger.eval_takes_quality_run_uncertainty u JOIN evalledger.eval_takes_quality_runs t ON t.id = u.run_id
    UNION ALL
    SELECT 'eval_work_quality_snapshots', s.created_at, NULL, NULL, false
      FROM evalledger.eval_work_quality_snapshots s
    UNION ALL
    SELECT 'eval_work_quality_judge_verdicts', v.snapshot_created_at, NULL, NULL, false
      FROM evalledger.eval_work_quality_judge_verdicts v
    UNION ALL
    SELECT 'eval_work_quality_snapshot_uncertainty', u.run_created_at, NULL, NULL, false
      FROM evalledger.eval_work_quality_snapshot_uncertainty u
    UNION ALL
    SELECT 'eval_run_closure', c.run_created_at, CASE WHEN t.id IS NOT NULL THEN ARRAY[t.target_id::text] END, NULL, false
      FROM evalledger.eval_run_closure c LEFT JOIN evalledger.eval_takes_quality_runs t ON t.id = c.takes_quality_run_id
    UNION ALL
    SELECT 'eval_candidate_keys', k.created_at, NULL, NULL, false FROM evalledger.eval_candidate_keys k
    UNION ALL
    SELECT 'eval_capture_failures', f.recorded_at, NULL, NULL, false FROM evalledger.eval_capture_failures f
    UNION ALL
    -- A gate decision by its own clock, the brain of its takes-quality run, kept while that run stays.
    SELECT 'eval_gate_decision', g.created_at, CASE WHEN t.id IS NOT NULL THEN ARRAY[t.target_id::text] END, NULL,
           evalledger.retention_gate_pinned_v1(g.run_id)
      FROM evalledger.eval_gate_decision g LEFT JOIN evalledger.eval_takes_quality_runs t ON t.id = g.run_id
    UNION ALL
    SELECT 'replay_run', r.created_at, ARRAY[r.brain_version], NULL, false FROM evalledger.replay_run r
    UNION ALL
    SELECT 'replay_query', q.run_created_at, ARRAY[r.brain_version], NULL, false
      FROM evalledger.replay_query q JOIN evalledger.replay_run r USING (replay_run_id)
$$;
