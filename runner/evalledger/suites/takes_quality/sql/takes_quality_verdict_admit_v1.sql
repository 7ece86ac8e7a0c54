-- takes_quality_verdict_admit_v1: one judge's verdict for one cycle of an open run. The runner
-- supplies what it observed (the parsed reply, or the provider failure); the database decides
-- whether the verdict contributes: every rubric dimension present, a number, within the scale.
-- Otherwise it records why (parse_failed, incomplete_scores, out_of_scale). It also derives the
-- judge's family from its model id and flags a judge of the target's own family.
CREATE FUNCTION evalledger.takes_quality_verdict_admit_v1() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = evalledger, pg_temp AS $$
DECLARE
    run eval_takes_quality_runs;
    policy jsonb;
    container jsonb;
    dims text[];
    missing text[];
    dim text;
    value jsonb;
    lo numeric;
    hi numeric;
    normalised jsonb := '{}';
BEGIN
    SELECT * INTO run FROM eval_takes_quality_runs r WHERE r.id = NEW.run_id;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'evalledger: no takes-quality run %', NEW.run_id
            USING ERRCODE = 'foreign_key_violation', COLUMN = 'run_id';
    END IF;
    IF run.completed_at IS NOT NULL THEN
        RAISE EXCEPTION 'evalledger: takes-quality run % is complete: no more verdicts', NEW.run_id
            USING ERRCODE = 'insufficient_privilege';
    END IF;
    IF NOT NEW.model = ANY (run.models) THEN
        RAISE EXCEPTION 'evalledger: model % is not on the panel of run %', NEW.model, NEW.run_id
            USING ERRCODE = 'check_violation', COLUMN = 'model';
    END IF;
    PERFORM evalledger.refuse_supplied_v1(
        'eval_takes_quality_judge_verdicts',
        jsonb_build_object('scores', NEW.scores, 'feedback', NEW.feedback, 'improvements', NEW.improvements));

    NEW.family := split_part(NEW.model, ':', 1);
    NEW.same_family := coalesce(
        (SELECT t.model_family = NEW.family FROM target t WHERE t.target_id = run.target_id), false);
    NEW.created_at := now();

    IF NEW.error_kind IS NOT NULL THEN
        -- What only the runner can see: the call failed, or the budget did not allow it.
        IF NEW.error_kind NOT IN ('provider_error', 'budget_exhausted') THEN
            RAISE EXCEPTION 'evalledger: error_kind % is the database''s to decide', NEW.error_kind
                USING ERRCODE = 'insufficient_privilege', COLUMN = 'error_kind';
        END IF;
        NEW.contributes := false;
        RETURN NEW;
    END IF;
    NEW.error_message := NULL;

    IF NEW.response_json IS NULL OR jsonb_typeof(NEW.response_json) <> 'object' THEN
        NEW.contributes := false;
        NEW.error_kind := 'parse_failed';
        NEW.error_message := 'no JSON object in the reply';
        RETURN NEW;
    END IF;
    IF jsonb_typeof(NEW.response_json -> 'feedback') = 'string' THEN
        NEW.feedback := NEW.response_json ->> 'feedback';
    END IF;
    IF jsonb_typeof(NEW.response_json -> 'improvements') = 'array' THEN
        NEW.improvements := (SELECT coalesce(jsonb_agg(i ORDER BY n), '[]')
                               FROM jsonb_array_elements(NEW.response_json -> 'improvements') WITH ORDINALITY x(i, n)
                              WHERE jsonb_typeof(i) = 'string' AND btrim(i #>> '{}') <> '');
    END IF;

    SELECT r.definition INTO policy FROM rubric r WHERE r.rubric_id = run.rubric_id;
    dims := ARRAY(SELECT d ->> 'key' FROM jsonb_array_elements(policy -> 'dimensions') WITH ORDINALITY x(d, n) ORDER BY n);
    lo := (policy -> 'scale' ->> 'min')::numeric;
    hi := (policy -> 'scale' ->> 'max')::numeric;
    container := CASE WHEN jsonb_typeof(NEW.response_json -> 'scores') = 'object'
                      THEN NEW.response_json -> 'scores' ELSE NEW.response_json END;
    missing := ARRAY(SELECT d FROM unnest(dims) WITH ORDINALITY u(d, n)
                      WHERE coalesce(jsonb_typeof(container -> d), 'null') = 'null' ORDER BY n);
    IF cardinality(missing) > 0 THEN
        NEW.contributes := false;
        NEW.error_kind := 'incomplete_scores';
        NEW.error_message := format('missing [%s]', array_to_string(missing, ', '));
        RETURN NEW;
    END IF;
    FOREACH dim IN ARRAY dims LOOP
        value := container -> dim;
        IF jsonb_typeof(value) <> 'number' OR (value #>> '{}')::numeric NOT BETWEEN lo AND hi THEN
            NEW.contributes := false;
            NEW.error_kind := 'out_of_scale';
            NEW.error_message := format('%s = %s (scale %s-%s)', dim, value::text, lo, hi);
            RETURN NEW;
        END IF;
        normalised := normalised || jsonb_build_object(dim, trim_scale((value #>> '{}')::numeric));
    END LOOP;
    NEW.scores := normalised;
    NEW.contributes := true;
    RETURN NEW;
END;
$$;
