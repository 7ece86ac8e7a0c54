-- work_quality_verdict_admit_v2: one judge's verdict on an open work-quality run. The runner
-- supplies what it observed (the parsed reply, or the provider failure); the database decides
-- whether it contributes: all seven dimensions present, numbers on the rubric's 0-1 scale, a
-- narrative, and a confidence on 0-1. Otherwise it records why (parse_failed, incomplete_scores,
-- out_of_scale, off_contract) and the judge is skipped with a note at completion. The judge's
-- family is its provider, and a judge of the assessed run's family is flagged. The relative
-- judgement (better/same/worse per dimension) is kept only when there is a previous snapshot.
-- Rows of an imported snapshot come from its own file (inserted by work_quality_import_verdicts_v1):
-- only in the transaction that recorded the snapshot (its created_at is that transaction's now()),
-- and only as one of the file's own verdict entries, under that entry's model, as the first repeat's
-- first call (so the once-constraint takes each entry once). Not by trigger depth:
-- any login reaches a depth of 2 through a trigger of its own on a temporary table, and so could
-- add a verdict the file never held to any imported snapshot, long after its import.
-- The snapshot is locked FOR SHARE, so a completion (work_quality_snapshot_decide_v3) waits for this
-- verdict or this verdict for it; one that does not exist, is complete, or is one the runner may
-- not read (caller_reads_v1: a cold one) is refused in one way.
CREATE FUNCTION evalledger.work_quality_verdict_admit_v2() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    snap evalledger.eval_work_quality_snapshots;
    policy jsonb;
    dims text[];
    decided jsonb;
    relative jsonb;
BEGIN
    SELECT * INTO snap FROM evalledger.eval_work_quality_snapshots s WHERE s.snapshot_id = NEW.snapshot_id FOR SHARE;
    IF snap.snapshot_id IS NULL
       OR (snap.origin = 'import' AND (snap.created_at <> now() OR NEW.repeat_no <> 1 OR NEW.retry_no <> 0 OR NOT EXISTS (
              SELECT 1 FROM jsonb_array_elements(CASE WHEN jsonb_typeof(snap.snapshot_json #> '{aggregate,verdicts}') = 'array'
                                                      THEN snap.snapshot_json #> '{aggregate,verdicts}' END) v
               WHERE v = NEW.response_json AND v ->> 'model' = NEW.model)))
       OR (snap.origin = 'run' AND (snap.completed_at IS NOT NULL OR NOT evalledger.caller_reads_v1(snap.created_at, NULL))) THEN
        RAISE EXCEPTION 'evalledger: no open work-quality run % takes verdicts', NEW.snapshot_id
            USING ERRCODE = 'insufficient_privilege', COLUMN = 'snapshot_id',
                  HINT = 'an imported snapshot''s verdicts come from its file only';
    END IF;
    IF snap.origin = 'run' AND NOT NEW.model = ANY (snap.models) THEN
        RAISE EXCEPTION 'evalledger: model % is not on the panel of snapshot %', NEW.model, NEW.snapshot_id
            USING ERRCODE = 'check_violation', COLUMN = 'model';
    END IF;
    PERFORM evalledger.refuse_supplied_v1('eval_work_quality_judge_verdicts', jsonb_build_object(
        'scores', NEW.scores, 'narrative', NEW.narrative, 'relative_vs_prev', NEW.relative_vs_prev,
        'relative_narrative', NEW.relative_narrative, 'confidence', NEW.confidence));

    -- The family is the provider: the spec's part before the first ':' (ours) or '/' (the seed's).
    NEW.family := substring(NEW.model FROM '^([^:/]*)');
    NEW.same_family := CASE WHEN snap.origin = 'import'
                            THEN coalesce((NEW.response_json ->> 'same_family_as_bot')::boolean, false)
                            ELSE coalesce(NEW.family = snap.bot_family, false) END;
    NEW.created_at := now();

    -- What only the runner can see: the call failed, or the budget did not allow it.
    IF evalledger.runner_error_v1(NEW.error_kind) THEN
        NEW.contributes := false;
        RETURN NEW;
    END IF;
    NEW.error_message := NULL;

    -- The contribution rule every judged suite shares (all dimensions, numbers, on the scale); a
    -- judge replies flat (the seed's schema), a snapshot file nests them under "scores".
    SELECT r.definition INTO policy FROM evalledger.rubric r WHERE r.rubric_id = snap.rubric_id;
    decided := evalledger.judge_scores_v2(NEW.response_json, policy);
    IF decided ? 'error_kind' THEN
        NEW.contributes := false;
        NEW.error_kind := decided ->> 'error_kind';
        NEW.error_message := decided ->> 'error_message';
        RETURN NEW;
    END IF;
    IF jsonb_typeof(NEW.response_json -> 'narrative') IS DISTINCT FROM 'string'
       OR btrim(NEW.response_json ->> 'narrative') = '' THEN
        NEW.contributes := false;
        NEW.error_kind := 'off_contract';
        NEW.error_message := 'no narrative';
        RETURN NEW;
    END IF;
    IF jsonb_typeof(NEW.response_json -> 'confidence') IS DISTINCT FROM 'number'
       OR (NEW.response_json ->> 'confidence')::numeric NOT BETWEEN 0 AND 1 THEN
        NEW.contributes := false;
        NEW.error_kind := 'off_contract';
        NEW.error_message := format('confidence = %s (expected a number from 0 to 1)',
                                    coalesce((NEW.response_json -> 'confidence')::text, 'missing'));
        RETURN NEW;
    END IF;

    NEW.scores := decided -> 'scores';
    NEW.narrative := NEW.response_json ->> 'narrative';
    NEW.confidence := trim_scale((NEW.response_json ->> 'confidence')::numeric);
    IF snap.prev_run_id IS NOT NULL THEN
        -- better/same/worse per dimension, spelled as the seed normalises it; "n/a" and anything
        -- else is left out, and an empty judgement is none.
        dims := ARRAY(SELECT d ->> 'key' FROM jsonb_array_elements(policy -> 'dimensions') WITH ORDINALITY x(d, n)
                       ORDER BY n);
        relative := CASE WHEN jsonb_typeof(NEW.response_json -> 'relative_vs_prev') = 'object'
                         THEN NEW.response_json -> 'relative_vs_prev' ELSE '{}' END;
        NEW.relative_vs_prev := (
            SELECT jsonb_object_agg(d, lower(btrim(relative ->> d)))
              FROM unnest(dims) d
             WHERE jsonb_typeof(relative -> d) = 'string'
               AND lower(btrim(relative ->> d)) IN ('better', 'same', 'worse'));
        IF jsonb_typeof(NEW.response_json -> 'relative_narrative') = 'string' THEN
            NEW.relative_narrative := NEW.response_json ->> 'relative_narrative';
        END IF;
    END IF;
    NEW.contributes := true;
    RETURN NEW;
END;
$$;

CREATE TRIGGER eval_work_quality_judge_verdicts_10_admit BEFORE INSERT ON eval_work_quality_judge_verdicts
    FOR EACH ROW EXECUTE FUNCTION work_quality_verdict_admit_v2();
