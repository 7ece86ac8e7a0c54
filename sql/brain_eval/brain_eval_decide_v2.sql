-- brain_eval_decide_v2: the computed columns of a completed run (aggregates, criteria, decision,
-- rationale, cost), read from the rubric the run names, every threshold compared on exact values
-- and an unmeasurable score counted as missed. One function so the trigger and the tests that
-- explain a decision read the same policy. A hard criterion that applies to some brains applies when
-- any of the run's brains (run_brains_v1: its label and every brain of its prompt) is one of them.
-- A closed run (brain_eval_run_closure: abandoned or cancelled) is fail, no hard criterion shown,
-- with its closure's rationale, whatever its scores so far.
CREATE FUNCTION evalledger.brain_eval_decide_v2(run evalledger.brain_eval_log) RETURNS jsonb
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    policy jsonb;
    brains text[] := evalledger.run_brains_v1(run.brain_under_test, run.system_prompt_hash);
    scores jsonb;
    criterion jsonb;
    value numeric;
    hard_passed boolean := true;
    hard_misses text[] := '{}';
    soft_misses text[] := '{}';
    soft_passed int := 0;
    soft_total int := 0;
    decided text;
    label text;
    rationale text;
    closed evalledger.brain_eval_run_closure;
BEGIN
    SELECT r.definition INTO policy FROM evalledger.rubric r WHERE r.rubric_id = run.rubric_id;
    scores := evalledger.brain_eval_scores_v1(run.eval_run_id, policy -> 'confidence_band');

    FOR criterion IN SELECT * FROM jsonb_array_elements(policy -> 'hard_criteria') LOOP
        CONTINUE WHEN criterion ? 'applies_to' AND NOT (criterion -> 'applies_to') ?| brains;
        value := (scores ->> (criterion ->> 'key'))::numeric;
        -- Unmeasurable (null) is not met: missing evidence never passes.
        IF NOT coalesce(evalledger.criterion_met_v1(criterion, value), false) THEN
            hard_passed := false;
            hard_misses := hard_misses || evalledger.criterion_miss_v1(criterion, value);
        END IF;
    END LOOP;

    FOR criterion IN SELECT * FROM jsonb_array_elements(policy -> 'soft_criteria') LOOP
        soft_total := soft_total + 1;
        value := (scores ->> (criterion ->> 'key'))::numeric;
        IF coalesce(evalledger.criterion_met_v1(criterion, value), false) THEN
            soft_passed := soft_passed + 1;
        ELSE
            soft_misses := soft_misses || evalledger.criterion_miss_v1(criterion, value);
        END IF;
    END LOOP;

    IF hard_passed THEN
        SELECT step ->> 'decision' INTO decided
          FROM jsonb_array_elements(policy -> 'decision_ladder') step
         WHERE (step ->> 'min_soft_passed')::int <= soft_passed
         ORDER BY (step ->> 'min_soft_passed')::int DESC LIMIT 1;
    ELSE
        decided := policy ->> 'hard_failure_decision';
    END IF;
    label := upper(left(decided, 1)) || replace(substr(decided, 2), '_', ' ');

    IF NOT hard_passed THEN
        rationale := format('%s: hard criteria missed: %s', label, array_to_string(hard_misses, '; '))
            || CASE WHEN cardinality(soft_misses) > 0
                    THEN '; also ' || array_to_string(soft_misses, '; ') ELSE '' END || '.';
    ELSIF cardinality(soft_misses) = 0 THEN
        rationale := format('%s: all hard criteria passed; all %s soft criteria within threshold.', label, soft_total);
    ELSE
        rationale := format('%s: %s; all hard criteria passed', label, array_to_string(soft_misses, '; '))
            || CASE WHEN decided = 'fail'
                    THEN format(', but only %s of %s soft criteria within threshold', soft_passed, soft_total)
                    ELSE '' END || '.';
    END IF;

    SELECT c.* INTO closed FROM evalledger.brain_eval_run_closure c WHERE c.eval_run_id = run.eval_run_id;
    IF closed.eval_run_id IS NOT NULL THEN
        hard_passed := false;
        decided := 'fail';
        rationale := evalledger.brain_eval_abandoned_v1(closed.closure, closed.reason, closed.closed_by);
    END IF;

    RETURN jsonb_build_object(
        'aggregated_scores', scores,
        'hard_criteria_passed', hard_passed,
        'soft_criteria_passed_count', soft_passed,
        'decision', decided,
        'decision_rationale', rationale,
        'token_cost_usd', (SELECT coalesce(sum(a.token_cost_usd), 0)
                             FROM evalledger.brain_eval_question_score q
                             JOIN evalledger.brain_analysis_log a ON a.analysis_id = q.brain_analysis_id
                            WHERE q.eval_run_id = run.eval_run_id));
END;
$$;
