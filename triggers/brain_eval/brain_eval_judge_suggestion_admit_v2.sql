-- brain_eval_judge_suggestion_admit_v2: one judge's draft for the reviewer on one answer of an open
-- harness run the caller may read (brain_eval_open_harness_v2: refused alike for any other). The runner supplies what it observed (the parsed reply, or the provider failure);
-- the database reads the draft from the reply and decides whether it contributes: total claims a
-- whole number, the unsupported claims quoted as strings and no more of them than claims, diagnosis
-- accuracy 0, 0.5 or 1 exactly where the question has that criterion, staleness recognised true or
-- false exactly on a stale-fixture question. Otherwise it records why not (parse_failed,
-- incomplete, out_of_scale). It derives the judge's family and flags the brain's own family.
-- With repeats (the run's repeats, --repeats K) a judge drafts K times on each answer: repeat_no
-- is 1 to K, and each repeat is stored once (brain_eval_judge_suggestion_once refuses a second).
CREATE FUNCTION evalledger.brain_eval_judge_suggestion_admit_v2() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    harness evalledger.brain_eval_harness_run;
    question evalledger.brain_eval_catalog_question;
    reply jsonb := NEW.response_json;
    wants_diagnosis boolean;
BEGIN
    PERFORM evalledger.refuse_supplied_v1('brain_eval_judge_suggestion', jsonb_build_object(
        'family', NEW.family, 'same_family', NEW.same_family, 'total_claims', NEW.total_claims,
        'unsupported_claims', NEW.unsupported_claims, 'diagnosis_accuracy', NEW.diagnosis_accuracy,
        'staleness_recognised', NEW.staleness_recognised, 'contributes', NEW.contributes));
    harness := evalledger.brain_eval_open_harness_v2(NEW.eval_run_id, 'suggestions');
    IF NEW.repeat_no IS NULL OR NEW.repeat_no < 1 OR NEW.repeat_no > harness.repeats THEN
        RAISE EXCEPTION 'evalledger: brain-eval run % asks each judge % time(s) per answer: repeat % is not one of them',
                NEW.eval_run_id, harness.repeats, NEW.repeat_no
            USING ERRCODE = 'check_violation', COLUMN = 'repeat_no';
    END IF;
    SELECT q.* INTO question FROM evalledger.brain_eval_catalog_question q
     WHERE q.catalog_version = harness.catalog_version AND q.question_id = NEW.question_id;
    wants_diagnosis := question.pass_criteria ? 'min_diagnosis_accuracy';

    NEW.family := split_part(NEW.model, ':', 1);
    NEW.same_family := NEW.family = (SELECT v.provider FROM evalledger.brain_version v
                                      WHERE v.brain_version_id = harness.brain_version_id);
    NEW.created_at := now();
    IF evalledger.runner_error_v1(NEW.error_kind) THEN
        NEW.contributes := false;
        RETURN NEW;
    END IF;

    IF reply IS NULL OR jsonb_typeof(reply) <> 'object' THEN
        NEW.error_kind := 'parse_failed';
        NEW.error_message := 'the reply is not a JSON object';
    ELSIF jsonb_typeof(reply -> 'total_claims') IS DISTINCT FROM 'number'
          OR jsonb_typeof(reply -> 'unsupported_claims') IS DISTINCT FROM 'array'
          OR (wants_diagnosis AND jsonb_typeof(reply -> 'diagnosis_accuracy') IS DISTINCT FROM 'number')
          OR (question.uses_stale_fixture AND jsonb_typeof(reply -> 'staleness_recognised') IS DISTINCT FROM 'boolean') THEN
        NEW.error_kind := 'incomplete';
        NEW.error_message := 'the reply lacks total_claims, unsupported_claims'
            || CASE WHEN wants_diagnosis THEN ', diagnosis_accuracy' ELSE '' END
            || CASE WHEN question.uses_stale_fixture THEN ', staleness_recognised' ELSE '' END || ' as they should be';
    ELSIF (reply ->> 'total_claims')::numeric <> trunc((reply ->> 'total_claims')::numeric)
          OR (reply ->> 'total_claims')::numeric < 0
          OR jsonb_array_length(reply -> 'unsupported_claims') > (reply ->> 'total_claims')::numeric
          OR jsonb_path_exists(reply, '$.unsupported_claims[*] ? (@.type() != "string")')
          OR (wants_diagnosis AND (reply ->> 'diagnosis_accuracy')::numeric NOT IN (0, 0.5, 1)) THEN
        NEW.error_kind := 'out_of_scale';
        NEW.error_message := 'total_claims, unsupported_claims or diagnosis_accuracy is out of its scale';
    ELSE
        NEW.total_claims := (reply ->> 'total_claims')::integer;
        NEW.unsupported_claims := reply -> 'unsupported_claims';
        NEW.diagnosis_accuracy := CASE WHEN wants_diagnosis THEN (reply ->> 'diagnosis_accuracy')::numeric END;
        NEW.staleness_recognised := CASE WHEN question.uses_stale_fixture THEN (reply ->> 'staleness_recognised')::boolean END;
        IF jsonb_typeof(reply -> 'notes') = 'string' THEN
            NEW.notes := reply ->> 'notes';
        END IF;
    END IF;
    NEW.contributes := NEW.error_kind IS NULL;
    RETURN NEW;
END;
$$;

CREATE TRIGGER brain_eval_judge_suggestion_10_admit BEFORE INSERT ON brain_eval_judge_suggestion
    FOR EACH ROW EXECUTE FUNCTION brain_eval_judge_suggestion_admit_v2();
