-- takes_quality_run_admit_v1: a takes-quality run starts in progress, under a takes-quality
-- rubric, with a valid panel; the database fills in the rubric and panel fingerprints itself
-- (rubric_sha8: first 8 hex of the rubric's fingerprint; models_sha8: over the sorted model ids).
CREATE FUNCTION evalledger.takes_quality_run_admit_v1() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    PERFORM evalledger.require_open_v1('takes-quality run', NEW.completed_at, 'judge verdicts');
    PERFORM evalledger.refuse_supplied_v1(
        'eval_takes_quality_runs',
        jsonb_build_object('cycles_run', NEW.cycles_run, 'verdict', NEW.verdict,
                           'overall_score', NEW.overall_score, 'cost_usd', NEW.cost_usd,
                           'receipt_json', NEW.receipt_json));

    IF NEW.rubric_id IS NULL THEN
        SELECT r.rubric_id INTO NEW.rubric_id
          FROM evalledger.rubric r WHERE r.suite = 'takes-quality' ORDER BY r.rubric_id DESC LIMIT 1;
    END IF;
    SELECT left(r.fingerprint, 8) INTO NEW.rubric_sha8
      FROM evalledger.rubric r WHERE r.rubric_id = NEW.rubric_id AND r.suite = 'takes-quality';
    IF NOT FOUND THEN
        RAISE EXCEPTION 'evalledger: rubric % is not a takes-quality rubric', NEW.rubric_id
            USING ERRCODE = 'foreign_key_violation', COLUMN = 'rubric_id';
    END IF;

    PERFORM evalledger.check_panel_v1('takes-quality run', NEW.models);
    NEW.models_sha8 := left(encode(sha256(convert_to(
        (SELECT string_agg(m, E'\n' ORDER BY m COLLATE "C") FROM unnest(NEW.models) m), 'UTF8')), 'hex'), 8);
    NEW.started_at := coalesce(NEW.started_at, now());
    NEW.created_at := now();
    RETURN NEW;
END;
$$;
