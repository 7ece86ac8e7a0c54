-- work_quality_snapshot_admit_v2: a new snapshot row, from a run or from an imported file.
-- A run (origin 'run') starts in progress: the runner supplies what it observed (target, task,
-- evidence digest, metrics, panel); the database stamps `at` and picks the previous snapshot
-- (the target's latest completed one) that the judges will see and that the comparison is
-- against. An import (origin 'import') supplies only the document a SnapshotStore file held
-- (and the file's name): the database reads every column from it, and the row is complete at once.
-- Either goes through rubric admission (rubric_admitted_v2: an activated work-quality rubric with a
-- scale), and an imported `at` is never in the future: the previous snapshot is the target's latest
-- completed one at or before the new one, so no file dated 2099 becomes every later run's baseline.
CREATE FUNCTION evalledger.work_quality_snapshot_admit_v2() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    doc jsonb := NEW.snapshot_json;
    prev evalledger.eval_work_quality_snapshots;
BEGIN
    NEW.rubric_id := evalledger.rubric_admitted_v2('work-quality', NEW.rubric_id);
    NEW.created_at := now();

    IF NEW.origin = 'import' THEN
        IF doc IS NULL OR jsonb_typeof(doc) <> 'object' THEN
            RAISE EXCEPTION 'evalledger: an imported snapshot is its document: snapshot_json must be an object'
                USING ERRCODE = 'check_violation', COLUMN = 'snapshot_json';
        END IF;
        IF (doc ->> 'schema_version') IS DISTINCT FROM '1' THEN
            RAISE EXCEPTION 'evalledger: snapshot schema_version % is not 1', coalesce(doc ->> 'schema_version', 'null')
                USING ERRCODE = 'check_violation', COLUMN = 'snapshot_json';
        END IF;
        PERFORM evalledger.refuse_supplied_v1('eval_work_quality_snapshots', jsonb_build_object(
            'completed_at', NEW.completed_at, 'mean_scores', NEW.mean_scores, 'comparison', NEW.comparison,
            'prev_snapshot_id', NEW.prev_snapshot_id, 'note', NEW.note));
        NEW.kind := doc ->> 'kind';
        NEW.name := doc ->> 'name';
        NEW.persona := coalesce(doc ->> 'persona', '');
        NEW.run_id := doc ->> 'run_id';
        NEW.at := (doc ->> 'at')::timestamptz;
        IF NEW.at > clock_timestamp() THEN
            RAISE EXCEPTION 'evalledger: snapshot % of % is dated % (in the future)', NEW.run_id, NEW.name, doc ->> 'at'
                USING ERRCODE = 'check_violation', COLUMN = 'at', CONSTRAINT = 'eval_work_quality_snapshots_at_not_in_future';
        END IF;
        NEW.bot_version := coalesce(doc ->> 'bot_version', '');
        NEW.iterion_sha := coalesce(doc ->> 'iterion_sha', '');
        NEW.task := coalesce(doc ->> 'task', '');
        NEW.outcome := '';
        NEW.evidence_digest := coalesce(doc ->> 'evidence_digest', '');
        NEW.cost_usd := coalesce((doc #>> '{metrics,cost_usd}')::numeric, 0);
        NEW.tokens := coalesce((doc #>> '{metrics,tokens}')::bigint, 0);
        NEW.duration_ms := coalesce((doc #>> '{metrics,duration_ms}')::bigint, 0);
        NEW.iterations := coalesce((doc #>> '{metrics,iterations}')::bigint, 0);
        NEW.model_calls := coalesce((doc #>> '{metrics,model_calls}')::bigint, 0);
        NEW.retries := coalesce((doc #>> '{metrics,retries}')::bigint, 0);
        NEW.models := ARRAY(SELECT v ->> 'model'
                              FROM jsonb_array_elements(CASE jsonb_typeof(doc #> '{aggregate,verdicts}')
                                                        WHEN 'array' THEN doc #> '{aggregate,verdicts}' ELSE '[]' END)
                                   WITH ORDINALITY x(v, n) ORDER BY n);
        NEW.mean_scores := coalesce(doc #> '{aggregate,mean_scores}', '{}');
        NEW.disagreement := doc #> '{aggregate,disagreement}';
        NEW.note := coalesce(doc #>> '{aggregate,note}', '');
        NEW.prev_run_id := nullif(doc ->> 'prev_run_id', '');
        NEW.comparison := CASE WHEN jsonb_typeof(doc -> 'comparison') = 'object' THEN doc -> 'comparison' END;
        NEW.prev_snapshot_id := (SELECT s.snapshot_id FROM evalledger.eval_work_quality_snapshots s
                                  WHERE s.name = NEW.name AND s.run_id = NEW.prev_run_id);
        NEW.judges_cost_usd := 0;
        NEW.completed_at := now();
        RETURN NEW;
    END IF;

    -- A run: inserted in progress, with a valid panel; what the database computes is not the
    -- runner's to supply.
    PERFORM evalledger.require_open_v1('work-quality run', NEW.completed_at, 'judge verdicts');
    PERFORM evalledger.refuse_supplied_v1('eval_work_quality_snapshots', jsonb_build_object(
        'mean_scores', NEW.mean_scores, 'disagreement', NEW.disagreement,
        'note', NEW.note, 'comparison', NEW.comparison, 'snapshot_json', NEW.snapshot_json,
        'prev_snapshot_id', NEW.prev_snapshot_id, 'prev_run_id', NEW.prev_run_id,
        'judges_cost_usd', NEW.judges_cost_usd, 'source_file', NEW.source_file));
    PERFORM evalledger.check_panel_v1('work-quality run', NEW.models);
    NEW.at := now();
    SELECT * INTO prev FROM evalledger.eval_work_quality_snapshots s
     WHERE s.name = NEW.name AND s.completed_at IS NOT NULL AND s.at <= NEW.at
     ORDER BY s.at DESC, s.snapshot_id DESC LIMIT 1;
    IF FOUND THEN
        NEW.prev_snapshot_id := prev.snapshot_id;
        NEW.prev_run_id := prev.run_id;
    END IF;
    RETURN NEW;
END;
$$;

CREATE TRIGGER eval_work_quality_snapshots_10_admit BEFORE INSERT ON eval_work_quality_snapshots
    FOR EACH ROW EXECUTE FUNCTION work_quality_snapshot_admit_v2();
