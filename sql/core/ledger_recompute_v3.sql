-- Compares the suites' runs by the keys the journal gives them (journal_key_v1, made per table by
-- journal_attach_v2).
-- ledger_recompute_v3 (issue 18: brain-eval runs by brain_eval_decide_v2 and question rows by
-- brain_eval_question_verdict_v1, the versions their triggers decide by; v2 re-derived both by the
-- versions issue 17 replaced): every computed column of every completed run whose value now differs from
-- what its suite's decision computes from the run's inputs (one row per column): brain-eval runs
-- (aggregates, criteria, decision, rationale, cost, hours and notes) and their question rows
-- (question_passed) and the uncertainty their completion stored (brain_eval_run_uncertainty, by
-- brain_eval_uncertainty_v1) and the trend rows derived from the two (brain_eval_trend, by
-- brain_eval_trend_of_v1; a completed run without either is named), takes-quality runs (cycles, verdict, overall score, cost, receipt) and
-- the uncertainty their completion stored (eval_takes_quality_run_uncertainty, by
-- takes_quality_uncertainty_v1), and work-quality runs (means, spreads, note, comparison, judges' cost, document) and
-- the uncertainty their completion stored (eval_work_quality_snapshot_uncertainty, by
-- work_quality_uncertainty_v2 cut to its snapshot's own rubric's scale, whatever was activated
-- since), and replay runs
-- (decision, rationale, summary) and their replayed queries (status and every measure, by
-- replay_query_measured_v1, the function their admission calls: migration 0165), and regression
-- gate decisions (decision, reasons, comparison: gate_decide_v2, as eval_gate_decision_admit_v1
-- decides them, a work-quality gate under the rubric it was decided under, whatever was activated
-- since, a takes-quality gate when its run had completed as it was decided). Values compare
-- as JSON values, rendered with extra_float_digits pinned to 1 whatever the reader's session says,
-- so 0.50 and 0.5 are equal and nothing is rounded. It reads through each suite's
-- one entry point (ledger_recompute_<suite>_v1), which calls the functions the suite's trigger
-- calls: a rewritten decision shows here even where the journal was rewritten to match it. Runs
-- imported from history files are the files' own and are not re-derived (the intervals the database
-- stored for them are).
CREATE FUNCTION evalledger.ledger_recompute_v3()
RETURNS TABLE (table_name text, row_key text, column_name text, stored text, recomputed text)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET extra_float_digits = 1 AS $$
    -- Each completed brain-eval run and its uncertainty, derived once: the run is compared with its row, and
    -- its stored uncertainty and trend row with what the two derive.
    WITH brain_run AS MATERIALIZED (
        SELECT l AS stored, evalledger.ledger_recompute_brain_eval_v2(l) AS now_is,
               coalesce(evalledger.brain_eval_uncertainty_v1(l.eval_run_id), '{}'::jsonb) AS uncertainty
          FROM evalledger.brain_eval_log l WHERE l.completed_at IS NOT NULL
    ), decided (table_name, row_key, was, now_is, columns) AS (
        SELECT 'brain_eval_log', evalledger.journal_key_v1(r.stored), to_jsonb(r.stored), r.now_is,
               ARRAY['aggregated_scores', 'hard_criteria_passed', 'soft_criteria_passed_count', 'decision',
                     'decision_rationale', 'token_cost_usd', 'reviewer_hours_spent', 'calibration_notes']
          FROM brain_run r
        UNION ALL
        SELECT 'brain_eval_question_score', evalledger.journal_key_v1(q), to_jsonb(q),
               jsonb_build_object('question_passed', evalledger.brain_eval_question_verdict_v1(
                   q, evalledger.brain_eval_question_policy_v2(q.eval_run_id, q.question_id))),
               ARRAY['question_passed']
          FROM evalledger.brain_eval_log l JOIN evalledger.brain_eval_question_score q USING (eval_run_id)
         WHERE l.completed_at IS NOT NULL
        UNION ALL
        -- Every completed run's stored uncertainty and trend row (its key: the run's). A run completed
        -- without one is named by its key column, stored null. A trend row is compared in what its
        -- completion derived (the decision, the aggregates and their bounds) with brain_eval_trend_of_v1 of
        -- the run and its uncertainty as recomputed, so a rewritten run or interval is named there and not in
        -- the copy; what it copies as it is (the run's trigger, times, prompt, reviewer) the journal holds.
        SELECT 'brain_eval_run_uncertainty', evalledger.journal_key_v1(r.stored), to_jsonb(u),
               jsonb_build_object('eval_run_id', (r.stored).eval_run_id, 'uncertainty', r.uncertainty),
               CASE WHEN u.eval_run_id IS NULL THEN ARRAY['eval_run_id'] ELSE ARRAY['uncertainty'] END
          FROM brain_run r LEFT JOIN evalledger.brain_eval_run_uncertainty u ON u.eval_run_id = (r.stored).eval_run_id
        UNION ALL
        SELECT 'brain_eval_trend', evalledger.journal_key_v1(r.stored), to_jsonb(t),
               to_jsonb(evalledger.brain_eval_trend_of_v1(jsonb_populate_record(r.stored, r.now_is), r.uncertainty)),
               CASE WHEN t.eval_run_id IS NULL THEN ARRAY['eval_run_id']
                    ELSE ARRAY['decision', 'citation_rate', 'hallucination_rate', 'staleness_recognition_rate',
                               'diagnosis_accuracy_mean', 'lever_mapping_correctness', 'confidence_calibration_in_band',
                               'narrative_coherence_mean', 'citation_rate_ci95_lo', 'citation_rate_ci95_hi',
                               'hallucination_rate_ci95_lo', 'hallucination_rate_ci95_hi',
                               'staleness_recognition_rate_ci95_lo', 'staleness_recognition_rate_ci95_hi',
                               'diagnosis_accuracy_mean_ci95_lo', 'diagnosis_accuracy_mean_ci95_hi',
                               'lever_mapping_correctness_ci95_lo', 'lever_mapping_correctness_ci95_hi',
                               'confidence_calibration_in_band_ci95_lo', 'confidence_calibration_in_band_ci95_hi',
                               'narrative_coherence_mean_ci95_lo', 'narrative_coherence_mean_ci95_hi'] END
          FROM brain_run r LEFT JOIN evalledger.brain_eval_trend t ON t.eval_run_id = (r.stored).eval_run_id
        UNION ALL
        SELECT 'eval_takes_quality_runs', evalledger.journal_key_v1(r), to_jsonb(r),
               (SELECT jsonb_build_object('cycles_run', x -> 'cycles_run', 'verdict', x -> 'verdict',
                                          'overall_score', x -> 'overall_score', 'cost_usd', x -> 'cost_usd',
                                          'receipt_json', x)
                  FROM (SELECT evalledger.ledger_recompute_takes_quality_v2(r.id) AS x) receipt),
               ARRAY['cycles_run', 'verdict', 'overall_score', 'cost_usd', 'receipt_json']
          FROM evalledger.eval_takes_quality_runs r WHERE r.completed_at IS NOT NULL
        UNION ALL
        SELECT 'eval_takes_quality_run_uncertainty', evalledger.journal_key_v1(u), to_jsonb(u),
               jsonb_build_object('uncertainty', coalesce(evalledger.takes_quality_uncertainty_v1(u.run_id), '{}'::jsonb)),
               ARRAY['uncertainty']
          FROM evalledger.eval_takes_quality_run_uncertainty u
        UNION ALL
        SELECT 'eval_work_quality_snapshots', evalledger.journal_key_v1(s), to_jsonb(s),
               evalledger.ledger_recompute_work_quality_v2(s),
               ARRAY['mean_scores', 'disagreement', 'note', 'comparison', 'judges_cost_usd', 'snapshot_json']
          FROM evalledger.eval_work_quality_snapshots s WHERE s.completed_at IS NOT NULL AND s.origin = 'run'
        UNION ALL
        -- An imported snapshot's too: the file's document is its own, its intervals the database's.
        SELECT 'eval_work_quality_snapshot_uncertainty', evalledger.journal_key_v1(u), to_jsonb(u),
               jsonb_build_object('uncertainty', coalesce(evalledger.work_quality_uncertainty_v2(s.snapshot_json, s.rubric_id),
                                                          '{}'::jsonb)),
               ARRAY['uncertainty']
          FROM evalledger.eval_work_quality_snapshot_uncertainty u
          JOIN evalledger.eval_work_quality_snapshots s USING (snapshot_id)
        UNION ALL
        SELECT 'replay_run', evalledger.journal_key_v1(r), to_jsonb(r),
               (SELECT jsonb_build_object('decision', x -> 'decision', 'rationale', x -> 'rationale', 'summary', x)
                  FROM (SELECT evalledger.replay_decision_v1(r) AS x) decided),
               ARRAY['decision', 'rationale', 'summary']
          FROM evalledger.replay_run r WHERE r.completed_at IS NOT NULL
        UNION ALL
        -- Every query of a completed run, whatever its status says: a status rewritten away from
        -- replayed (its measures nulled with it) is named as surely as a rewritten measure.
        SELECT 'replay_query', evalledger.journal_key_v1(q), to_jsonb(q),
               to_jsonb(evalledger.replay_query_measured_v1(q, (b.definition ->> 'rbo_p')::numeric)),
               ARRAY['status', 'recall', 'jaccard', 'rbo', 'sources_gained', 'sources_lost', 'latency_ratio']
          FROM evalledger.replay_run r JOIN evalledger.replay_query q USING (replay_run_id)
          JOIN evalledger.rubric b ON b.rubric_id = r.rubric_id
         WHERE r.completed_at IS NOT NULL
        UNION ALL
        -- A gate decision, re-decided from what it was decided on by the function its admission trigger
        -- calls: a takes-quality gate whose run had completed as its decision read it (run_completed; an
        -- open run's receipt was provisional; a run the purge took is gone), or, one stored before
        -- migration 0158 without that, whose run's completed_at is no later than its created_at (the
        -- clock's guess, which can be wrong where the two transactions overlapped); a
        -- work-quality gate (its two documents are its own) under the work-quality rubric stored with it
        -- (the one active when it was decided, whatever was activated since); one stored without (decided
        -- before migration 0158 in a ledger that had activated more than one) is left out, its rubric not
        -- known exactly.
        SELECT 'eval_gate_decision', evalledger.journal_key_v1(g), to_jsonb(g),
               (SELECT jsonb_build_object('decision', x -> 'decision', 'reasons', x -> 'reasons', 'comparison', x)
                  FROM (SELECT evalledger.gate_decide_v2(g.suite, g.mode, g.threshold, g.baseline, g.current_doc,
                                                         g.run_id, g.work_quality_rubric_id) AS x) decided),
               ARRAY['decision', 'reasons', 'comparison']
          FROM evalledger.eval_gate_decision g
         WHERE CASE g.suite
                   WHEN 'takes-quality' THEN EXISTS (
                       SELECT 1 FROM evalledger.eval_takes_quality_runs t
                        WHERE t.id = g.run_id AND t.completed_at IS NOT NULL
                          AND coalesce(g.run_completed, t.completed_at <= g.created_at))
                   ELSE g.work_quality_rubric_id IS NOT NULL END)
    SELECT d.table_name, d.row_key, c, (d.was -> c)::text, (d.now_is -> c)::text
      FROM decided d CROSS JOIN LATERAL unnest(d.columns) c
     WHERE (d.was -> c) IS DISTINCT FROM (d.now_is -> c)
     ORDER BY 1, 2, 3
$$;
GRANT EXECUTE ON FUNCTION ledger_recompute_v3() TO evalledger_owner, evalledger_auditor;
