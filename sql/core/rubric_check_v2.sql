-- rubric_check_v2: what is wrong with a rubric definition (NULL when nothing): the fields its
-- suite's decision code reads are present and typed, and seed 002's hard criteria (hallucination
-- rate <= 2%, staleness recognition = 100%, lever mapping = 100% for AGT-902) are never loosened,
-- and a missed hard criterion decides fail; a judged suite (takes-quality, work-quality) has a
-- numeric scale its judges' scores must keep to; takes-quality's panel policy is never below seed
-- 000's three frontier models, nor single-family (the design's cross-family panel); replay's pass
-- rule, rbo_p, min_replayable and min_replayable_share are numbers in their ranges. Policy is
-- validated when it is written, and again when a run is admitted under it (rubric_admitted_v2).
CREATE FUNCTION evalledger.rubric_check_v2(suite text, definition jsonb) RETURNS text
LANGUAGE plpgsql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    item jsonb;
    hard jsonb;
    field text;
    problem text;
BEGIN
    IF definition ->> 'suite' IS DISTINCT FROM suite THEN
        RETURN format('definition.suite is %s, not %s', coalesce(definition ->> 'suite', 'missing'), suite);
    END IF;
    IF jsonb_typeof(definition -> 'dimensions') IS DISTINCT FROM 'array'
       OR jsonb_array_length(definition -> 'dimensions') = 0 THEN
        RETURN 'dimensions must be a non-empty array';
    END IF;
    SELECT format('dimensions[%s].key must be a non-empty string', n - 1) INTO problem
      FROM jsonb_array_elements(definition -> 'dimensions') WITH ORDINALITY x(d, n)
     WHERE jsonb_typeof(d -> 'key') IS DISTINCT FROM 'string' OR d ->> 'key' = '' ORDER BY n LIMIT 1;
    IF problem IS NOT NULL THEN
        RETURN problem;
    END IF;
    -- The deadline of an open run of every suite (brain_eval_run_deadline_v1; 14 days when absent).
    IF definition ? 'open_run_days' AND (jsonb_typeof(definition -> 'open_run_days') IS DISTINCT FROM 'number'
       OR (definition ->> 'open_run_days')::numeric NOT BETWEEN 1 AND 366) THEN
        RETURN 'open_run_days must be a number of days from 1 to 366';
    END IF;
    CASE suite
    WHEN 'brain-eval' THEN
        IF definition ->> 'hard_failure_decision' IS DISTINCT FROM 'fail' THEN
            RETURN format('hard_failure_decision must be fail, not %s', coalesce(definition ->> 'hard_failure_decision', 'missing'));
        END IF;
        FOREACH field IN ARRAY ARRAY['hard_criteria', 'soft_criteria', 'decision_ladder'] LOOP
            IF jsonb_typeof(definition -> field) IS DISTINCT FROM 'array' THEN
                RETURN format('%s must be an array', field);
            END IF;
        END LOOP;
        IF jsonb_typeof(definition -> 'diagnosis_question_types') IS DISTINCT FROM 'array'
           OR jsonb_path_exists(definition, '$.diagnosis_question_types[*] ? (@.type() != "string")') THEN
            RETURN 'diagnosis_question_types must be an array of question types (which have a diagnosis to score)';
        END IF;
        FOR item IN SELECT c FROM jsonb_array_elements((definition -> 'hard_criteria') || (definition -> 'soft_criteria')) c LOOP
            IF jsonb_typeof(item -> 'key') IS DISTINCT FROM 'string' OR item ->> 'op' IS NULL
               OR item ->> 'op' NOT IN ('<=', '>=') OR jsonb_typeof(item -> 'threshold') IS DISTINCT FROM 'number' THEN
                RETURN format('criterion %s needs a key, an op (<= or >=) and a numeric threshold', item);
            END IF;
        END LOOP;
        FOR item IN SELECT s FROM jsonb_array_elements(definition -> 'decision_ladder') s LOOP
            IF jsonb_typeof(item -> 'min_soft_passed') IS DISTINCT FROM 'number'
               OR item ->> 'decision' IS NULL
               OR item ->> 'decision' NOT IN ('pass', 'pass_with_notes', 'conditional', 'fail') THEN
                RETURN format('decision_ladder step %s needs a numeric min_soft_passed and a decision', item);
            END IF;
        END LOOP;
        IF NOT EXISTS (SELECT 1 FROM jsonb_array_elements(definition -> 'decision_ladder') s
                        WHERE (s ->> 'min_soft_passed')::numeric = 0) THEN
            RETURN 'decision_ladder needs a step at min_soft_passed 0';
        END IF;
        FOR hard IN SELECT h::jsonb FROM unnest(ARRAY[
                '{"key": "hallucination_rate", "op": "<=", "threshold": 0.02}',
                '{"key": "staleness_recognition_rate", "op": ">=", "threshold": 1.0}',
                '{"key": "lever_mapping_correctness", "op": ">=", "threshold": 1.0, "brain": "AGT-902"}']) h LOOP
            IF NOT EXISTS (
                SELECT 1 FROM jsonb_array_elements(definition -> 'hard_criteria') c
                 WHERE c ->> 'key' = hard ->> 'key' AND c ->> 'op' = hard ->> 'op'
                   AND CASE hard ->> 'op' WHEN '<=' THEN (c ->> 'threshold')::numeric <= (hard ->> 'threshold')::numeric
                                          ELSE (c ->> 'threshold')::numeric >= (hard ->> 'threshold')::numeric END
                   AND CASE WHEN hard ? 'brain' THEN NOT c ? 'applies_to' OR (c -> 'applies_to') ? (hard ->> 'brain')
                            ELSE NOT c ? 'applies_to' END) THEN
                RETURN format('hard criterion %s %s %s is required (seed 002)', hard ->> 'key', hard ->> 'op', hard ->> 'threshold');
            END IF;
        END LOOP;
        IF jsonb_typeof(definition #> '{confidence_band,high_confidence_pct,0}') IS DISTINCT FROM 'number'
           OR jsonb_typeof(definition #> '{confidence_band,high_confidence_pct,1}') IS DISTINCT FROM 'number'
           OR jsonb_typeof(definition #> '{confidence_band,speculation_pct_max}') IS DISTINCT FROM 'number' THEN
            RETURN 'confidence_band needs numeric high_confidence_pct [low, high] and speculation_pct_max';
        END IF;
        SELECT format('question_pass.%s must be a number', k) INTO problem
          FROM unnest(ARRAY['max_hallucinations', 'min_citation_rate', 'min_diagnosis_accuracy',
                            'min_narrative_coherence', 'max_lever_violations']) k
         WHERE jsonb_typeof(definition -> 'question_pass' -> k) IS DISTINCT FROM 'number' LIMIT 1;
        RETURN problem;
    WHEN 'takes-quality' THEN
        IF jsonb_typeof(definition #> '{scale,min}') IS DISTINCT FROM 'number'
           OR jsonb_typeof(definition #> '{scale,max}') IS DISTINCT FROM 'number'
           OR (definition #>> '{scale,min}')::numeric >= (definition #>> '{scale,max}')::numeric THEN
            RETURN 'scale needs numeric min < max';
        END IF;
        IF jsonb_typeof(definition #> '{pass_rule,every_dim_mean_at_least}') IS DISTINCT FROM 'number'
           OR jsonb_typeof(definition #> '{pass_rule,every_dim_min_at_least}') IS DISTINCT FROM 'number' THEN
            RETURN 'pass_rule needs numeric every_dim_mean_at_least and every_dim_min_at_least';
        END IF;
        IF jsonb_typeof(definition #> '{quorum,min_contributing_fraction,0}') IS DISTINCT FROM 'number'
           OR jsonb_typeof(definition #> '{quorum,min_contributing_fraction,1}') IS DISTINCT FROM 'number'
           OR (definition #>> '{quorum,min_contributing_fraction,1}')::numeric <= 0 THEN
            RETURN 'quorum.min_contributing_fraction needs [numerator, positive denominator]';
        END IF;
        IF jsonb_typeof(definition #> '{panel,min_models}') IS DISTINCT FROM 'number'
           OR jsonb_typeof(definition #> '{panel,min_families}') IS DISTINCT FROM 'number'
           OR (definition #>> '{panel,min_models}')::numeric < 3
           OR (definition #>> '{panel,min_families}')::numeric < 2
           OR (definition #>> '{panel,min_families}')::numeric > (definition #>> '{panel,min_models}')::numeric
           OR (definition #>> '{panel,min_models}')::numeric <> trunc((definition #>> '{panel,min_models}')::numeric)
           OR (definition #>> '{panel,min_families}')::numeric <> trunc((definition #>> '{panel,min_families}')::numeric) THEN
            RETURN 'panel needs whole numbers min_models >= 3 (seed 000: three frontier models) and '
                   'min_families >= 2 (a cross-family panel), no more families than models';
        END IF;
        RETURN NULL;
    WHEN 'work-quality' THEN
        IF jsonb_typeof(definition #> '{scale,min}') IS DISTINCT FROM 'number'
           OR jsonb_typeof(definition #> '{scale,max}') IS DISTINCT FROM 'number'
           OR (definition #>> '{scale,min}')::numeric >= (definition #>> '{scale,max}')::numeric THEN
            RETURN 'scale needs numeric min < max';
        END IF;
        IF jsonb_typeof(definition #> '{compare,same_band}') IS DISTINCT FROM 'number'
           OR jsonb_typeof(definition #> '{compare,regress_tolerance}') IS DISTINCT FROM 'number' THEN
            RETURN 'compare needs numeric same_band and regress_tolerance';
        END IF;
        RETURN NULL;
    WHEN 'replay' THEN
        -- replay_decision_v1 and replay_rbo_v1 read these (issue 40).
        IF jsonb_typeof(definition -> 'rbo_p') IS DISTINCT FROM 'number'
           OR (definition ->> 'rbo_p')::numeric <= 0 OR (definition ->> 'rbo_p')::numeric > 1 THEN
            RETURN 'rbo_p must be a number above 0 and at most 1';
        END IF;
        IF jsonb_typeof(definition -> 'min_replayable') IS DISTINCT FROM 'number'
           OR (definition ->> 'min_replayable')::numeric < 1
           OR (definition ->> 'min_replayable')::numeric <> trunc((definition ->> 'min_replayable')::numeric) THEN
            RETURN 'min_replayable must be a whole number of queries, at least 1';
        END IF;
        IF jsonb_typeof(definition -> 'min_replayable_share') IS DISTINCT FROM 'number'
           OR (definition ->> 'min_replayable_share')::numeric NOT BETWEEN 0 AND 1 THEN
            RETURN 'min_replayable_share must be a number from 0 to 1';
        END IF;
        SELECT format('pass_rule.%s must be a number from 0 to 1', k) INTO problem
          FROM unnest(ARRAY['mean_recall_at_least', 'every_recall_at_least', 'adapter_failed_share_at_most']) k
         WHERE jsonb_typeof(definition -> 'pass_rule' -> k) IS DISTINCT FROM 'number'
            OR (definition -> 'pass_rule' ->> k)::numeric NOT BETWEEN 0 AND 1 LIMIT 1;
        IF problem IS NOT NULL THEN
            RETURN problem;
        END IF;
        IF jsonb_typeof(definition #> '{pass_rule,p95_latency_ratio_at_most}') IS DISTINCT FROM 'number'
           OR (definition #>> '{pass_rule,p95_latency_ratio_at_most}')::numeric <= 0 THEN
            RETURN 'pass_rule.p95_latency_ratio_at_most must be a number above 0';
        END IF;
        RETURN NULL;
    ELSE
        RETURN format('no suite %s', suite);
    END CASE;
END;
$$;

-- The owner role registers rubrics, and the rubric trigger (its own rights) validates them.
GRANT EXECUTE ON FUNCTION rubric_check_v2(text, jsonb) TO evalledger_owner;
