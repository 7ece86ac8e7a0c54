-- takes_quality_verdict_admit_v2: one judge's verdict for one cycle of an open run. The runner
-- supplies what it observed (the parsed reply, or the provider failure); the database decides
-- whether the verdict contributes (judge_scores_v2: every rubric dimension present, a number,
-- within the scale) and otherwise records why (parse_failed, incomplete_scores, out_of_scale),
-- and keeps the reply's feedback and improvements when it is a JSON object. It also derives the
-- judge's family from its model id and flags a judge of the target's own family. A run that does
-- not exist, is complete, or is one the runner may not read (caller_reads_v1: a cold run) is
-- refused in one way.
CREATE FUNCTION evalledger.takes_quality_verdict_admit_v2() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    run evalledger.eval_takes_quality_runs;
    judged jsonb;
BEGIN
    -- FOR SHARE, as lock_run_v1 does: a completion waits for this verdict, or this verdict for
    -- the completion (and then sees it), so no verdict lands after the receipt was written.
    SELECT * INTO run FROM evalledger.eval_takes_quality_runs r WHERE r.id = NEW.run_id FOR SHARE;
    IF run.id IS NULL OR run.completed_at IS NOT NULL OR NOT evalledger.caller_reads_v1(run.created_at, NULL) THEN
        RAISE EXCEPTION 'evalledger: no open takes-quality run % takes verdicts', NEW.run_id
            USING ERRCODE = 'insufficient_privilege', COLUMN = 'run_id';
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
        (SELECT t.model_family = NEW.family FROM evalledger.target t WHERE t.target_id = run.target_id), false);
    NEW.created_at := now();

    IF evalledger.runner_error_v1(NEW.error_kind) THEN
        NEW.contributes := false;
        RETURN NEW;
    END IF;

    judged := evalledger.judge_scores_v2(NEW.response_json,
                              (SELECT r.definition FROM evalledger.rubric r WHERE r.rubric_id = run.rubric_id));
    IF judged ->> 'error_kind' IS DISTINCT FROM 'parse_failed' THEN
        IF jsonb_typeof(NEW.response_json -> 'feedback') = 'string' THEN
            NEW.feedback := NEW.response_json ->> 'feedback';
        END IF;
        IF jsonb_typeof(NEW.response_json -> 'improvements') = 'array' THEN
            NEW.improvements := (SELECT coalesce(jsonb_agg(i ORDER BY n), '[]')
                                   FROM jsonb_array_elements(NEW.response_json -> 'improvements') WITH ORDINALITY x(i, n)
                                  WHERE jsonb_typeof(i) = 'string' AND btrim(i #>> '{}') <> '');
        END IF;
    END IF;
    NEW.scores := judged -> 'scores';
    NEW.contributes := NEW.scores IS NOT NULL;
    NEW.error_kind := judged ->> 'error_kind';
    NEW.error_message := judged ->> 'error_message';
    RETURN NEW;
END;
$$;

CREATE TRIGGER eval_takes_quality_judge_verdicts_10_admit BEFORE INSERT ON eval_takes_quality_judge_verdicts
    FOR EACH ROW EXECUTE FUNCTION takes_quality_verdict_admit_v2();
