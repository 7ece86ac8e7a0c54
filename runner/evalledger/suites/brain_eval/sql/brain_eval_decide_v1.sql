-- confidence_in_band_v1: a question's confidence distribution lies inside the rubric's band.
CREATE OR REPLACE FUNCTION evalledger.confidence_in_band_v1(dist jsonb, band jsonb) RETURNS boolean
LANGUAGE sql IMMUTABLE AS $$
    SELECT (dist ->> 'high_confidence_pct')::numeric
               BETWEEN (band -> 'high_confidence_pct' ->> 0)::numeric AND (band -> 'high_confidence_pct' ->> 1)::numeric
       AND (dist ->> 'speculation_pct')::numeric <= (band ->> 'speculation_pct_max')::numeric;
$$;

-- brain_eval_scores_v1: the seven aggregated_scores of a run, computed from its question rows.
CREATE OR REPLACE FUNCTION evalledger.brain_eval_scores_v1(run_id uuid, band jsonb) RETURNS jsonb
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = evalledger, pg_temp AS $$
    SELECT jsonb_build_object(
        'citation_rate', round(avg(q.citation_rate), 6),
        'hallucination_rate', round(coalesce(sum(q.hallucinations_detected)::numeric
                                             / nullif(sum(q.total_claims), 0), 0), 6),
        'staleness_recognition_rate',
            round(count(*) FILTER (WHERE q.uses_stale_fixture AND q.staleness_correctly_recognized)::numeric
                  / nullif(count(*) FILTER (WHERE q.uses_stale_fixture), 0), 6),
        'diagnosis_accuracy_mean', round(avg(q.diagnosis_accuracy_score), 6),
        'lever_mapping_correctness',
            round(count(*) FILTER (WHERE q.lever_mapping_violations = 0)::numeric
                  / nullif(count(q.lever_mapping_violations), 0), 6),
        'confidence_calibration_in_band',
            round(avg(CASE WHEN evalledger.confidence_in_band_v1(q.confidence_distribution, band)
                           THEN 1 ELSE 0 END), 6),
        'narrative_coherence_mean', round(avg(q.narrative_coherence_rating), 6))
      FROM brain_eval_question_score q
     WHERE q.eval_run_id = run_id;
$$;

-- criterion_met_v1: value against a rubric criterion's operator and threshold.
CREATE OR REPLACE FUNCTION evalledger.criterion_met_v1(criterion jsonb, value numeric) RETURNS boolean
LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE criterion ->> 'op'
             WHEN '>=' THEN value >= (criterion ->> 'threshold')::numeric
             WHEN '<=' THEN value <= (criterion ->> 'threshold')::numeric
           END;
$$;

-- criterion_miss_v1: a missed criterion as a phrase for the rationale, e.g. "citation rate 3pp below 95%".
CREATE OR REPLACE FUNCTION evalledger.criterion_miss_v1(criterion jsonb, value numeric) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
    WITH c AS (
        SELECT criterion ->> 'label' AS label,
               (criterion ->> 'threshold')::numeric AS threshold,
               criterion ->> 'unit' = 'rate' AS is_rate,
               criterion ->> 'op' AS op)
    SELECT CASE
             WHEN op = '<=' AND is_rate THEN
                 format('%s %s%% above the %s%% limit', label,
                        trim_scale(round(value * 100, 2)), trim_scale(round(threshold * 100, 2)))
             WHEN op = '<=' THEN
                 format('%s %s above the %s limit', label, trim_scale(round(value, 2)), trim_scale(threshold))
             WHEN is_rate THEN
                 format('%s %spp below %s', label, trim_scale(round((threshold - value) * 100, 1)),
                        coalesce(criterion ->> 'target_label', trim_scale(round(threshold * 100, 2)) || '%'))
             ELSE
                 format('%s %s below %s', label, trim_scale(round(threshold - value, 2)),
                        coalesce(criterion ->> 'target_label', trim_scale(threshold)::text))
           END
      FROM c;
$$;

-- brain_eval_decide_v1: the computed columns of a completed run (aggregates, criteria, decision,
-- rationale, cost), read from the rubric the run names. One function so the trigger and the
-- tests that explain a decision read the same policy.
CREATE OR REPLACE FUNCTION evalledger.brain_eval_decide_v1(run evalledger.brain_eval_log) RETURNS jsonb
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = evalledger, pg_temp AS $$
DECLARE
    policy jsonb;
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
BEGIN
    SELECT r.definition INTO policy FROM rubric r WHERE r.rubric_id = run.rubric_id;
    scores := brain_eval_scores_v1(run.eval_run_id, policy -> 'confidence_band');

    FOR criterion IN SELECT * FROM jsonb_array_elements(policy -> 'hard_criteria') LOOP
        CONTINUE WHEN criterion ? 'applies_to' AND NOT (criterion -> 'applies_to') ? run.brain_under_test;
        value := (scores ->> (criterion ->> 'key'))::numeric;
        CONTINUE WHEN value IS NULL;  -- nothing of this kind in the run, so nothing missed
        IF NOT criterion_met_v1(criterion, value) THEN
            hard_passed := false;
            hard_misses := hard_misses || criterion_miss_v1(criterion, value);
        END IF;
    END LOOP;

    FOR criterion IN SELECT * FROM jsonb_array_elements(policy -> 'soft_criteria') LOOP
        soft_total := soft_total + 1;
        value := (scores ->> (criterion ->> 'key'))::numeric;
        IF value IS NULL OR criterion_met_v1(criterion, value) THEN
            soft_passed := soft_passed + 1;
        ELSE
            soft_misses := soft_misses || criterion_miss_v1(criterion, value);
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

    RETURN jsonb_build_object(
        'aggregated_scores', scores,
        'hard_criteria_passed', hard_passed,
        'soft_criteria_passed_count', soft_passed,
        'decision', decided,
        'decision_rationale', rationale,
        'token_cost_usd', (SELECT coalesce(sum(a.token_cost_usd), 0)
                             FROM brain_eval_question_score q
                             JOIN brain_analysis_log a ON a.analysis_id = q.brain_analysis_id
                            WHERE q.eval_run_id = run.eval_run_id));
END;
$$;

-- brain_eval_log_decide_v1: on completion, check the run is whole and write what it decided.
CREATE OR REPLACE FUNCTION evalledger.brain_eval_log_decide_v1() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = evalledger, pg_temp AS $$
DECLARE
    scored int;
    computed jsonb;
BEGIN
    SELECT count(*) INTO scored FROM brain_eval_question_score q WHERE q.eval_run_id = NEW.eval_run_id;
    IF scored <> NEW.question_count THEN
        RAISE EXCEPTION 'evalledger: run % declares % questions but % are scored', NEW.eval_run_id,
                NEW.question_count, scored
            USING ERRCODE = 'check_violation', CONSTRAINT = 'brain_eval_log_complete_run_has_every_question';
    END IF;
    computed := brain_eval_decide_v1(NEW);
    NEW.aggregated_scores := computed -> 'aggregated_scores';
    NEW.hard_criteria_passed := (computed ->> 'hard_criteria_passed')::boolean;
    NEW.soft_criteria_passed_count := (computed ->> 'soft_criteria_passed_count')::int;
    NEW.decision := (computed ->> 'decision')::evalledger.eval_decision;
    NEW.decision_rationale := computed ->> 'decision_rationale';
    NEW.token_cost_usd := (computed ->> 'token_cost_usd')::numeric;
    RETURN NEW;
END;
$$;
