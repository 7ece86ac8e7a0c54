-- ledger_recompute_v1: every computed column of every completed run whose value now differs from
-- what its suite's decision computes from the run's inputs (one row per column): brain-eval runs
-- (aggregates, criteria, decision, rationale, cost, hours and notes) and their question rows
-- (question_passed), takes-quality runs (cycles, verdict, overall score, cost, receipt), and
-- work-quality runs (means, spreads, note, comparison, judges' cost, document). Values compare
-- as JSON values, so 0.50 and 0.5 are equal and nothing is rounded. It reads through each suite's
-- one entry point (ledger_recompute_<suite>_v1), which calls the functions the suite's trigger
-- calls: a rewritten decision shows here even where the journal was rewritten to match it. Runs
-- imported from history files are the files' own and are not re-derived.
CREATE FUNCTION evalledger.ledger_recompute_v1()
RETURNS TABLE (table_name text, row_key text, column_name text, stored text, recomputed text)
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    run evalledger.brain_eval_log;
    q evalledger.brain_eval_question_score;
    tq evalledger.eval_takes_quality_runs;
    snap evalledger.eval_work_quality_snapshots;
    now_is jsonb;
    was jsonb;
    c text;
BEGIN
    FOR run IN SELECT l.* FROM evalledger.brain_eval_log l WHERE l.completed_at IS NOT NULL ORDER BY l.eval_run_id LOOP
        now_is := evalledger.ledger_recompute_brain_eval_v1(run);
        was := to_jsonb(run);
        table_name := 'brain_eval_log';
        row_key := evalledger.journal_key_v1(run);
        FOREACH c IN ARRAY ARRAY['aggregated_scores', 'hard_criteria_passed', 'soft_criteria_passed_count', 'decision',
                                 'decision_rationale', 'token_cost_usd', 'reviewer_hours_spent', 'calibration_notes'] LOOP
            IF (was -> c) IS DISTINCT FROM (now_is -> c) THEN
                column_name := c;
                stored := was -> c;
                recomputed := now_is -> c;
                RETURN NEXT;
            END IF;
        END LOOP;
        FOR q IN SELECT s.* FROM evalledger.brain_eval_question_score s WHERE s.eval_run_id = run.eval_run_id
                  ORDER BY s.question_id LOOP
            IF q.question_passed IS DISTINCT FROM evalledger.ledger_recompute_question_v1(q, run.brain_under_test) THEN
                table_name := 'brain_eval_question_score';
                row_key := evalledger.journal_key_v1(q);
                column_name := 'question_passed';
                stored := to_jsonb(q.question_passed);
                recomputed := to_jsonb(evalledger.ledger_recompute_question_v1(q, run.brain_under_test));
                RETURN NEXT;
            END IF;
        END LOOP;
    END LOOP;

    FOR tq IN SELECT r.* FROM evalledger.eval_takes_quality_runs r WHERE r.completed_at IS NOT NULL ORDER BY r.id LOOP
        now_is := evalledger.ledger_recompute_takes_quality_v1(tq.id);
        now_is := jsonb_build_object('cycles_run', now_is -> 'cycles_run', 'verdict', now_is -> 'verdict',
                                     'overall_score', now_is -> 'overall_score', 'cost_usd', now_is -> 'cost_usd',
                                     'receipt_json', now_is);
        was := to_jsonb(tq);
        table_name := 'eval_takes_quality_runs';
        row_key := evalledger.journal_key_v1(tq);
        FOREACH c IN ARRAY ARRAY['cycles_run', 'verdict', 'overall_score', 'cost_usd', 'receipt_json'] LOOP
            IF (was -> c) IS DISTINCT FROM (now_is -> c) THEN
                column_name := c;
                stored := was -> c;
                recomputed := now_is -> c;
                RETURN NEXT;
            END IF;
        END LOOP;
    END LOOP;

    FOR snap IN SELECT s.* FROM evalledger.eval_work_quality_snapshots s
                 WHERE s.completed_at IS NOT NULL AND s.origin = 'run' ORDER BY s.snapshot_id LOOP
        now_is := evalledger.ledger_recompute_work_quality_v1(snap);
        was := to_jsonb(snap);
        table_name := 'eval_work_quality_snapshots';
        row_key := evalledger.journal_key_v1(snap);
        FOREACH c IN ARRAY ARRAY['mean_scores', 'disagreement', 'note', 'comparison', 'judges_cost_usd', 'snapshot_json'] LOOP
            IF (was -> c) IS DISTINCT FROM (now_is -> c) THEN
                column_name := c;
                stored := was -> c;
                recomputed := now_is -> c;
                RETURN NEXT;
            END IF;
        END LOOP;
    END LOOP;
END;
$$;
