-- takes_quality_run_admit_v1: a takes-quality run starts in progress, under an activated
-- takes-quality rubric, with a valid panel; the database fills in the rubric and panel fingerprints itself
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

    NEW.rubric_id := evalledger.rubric_admitted_v1('takes-quality', NEW.rubric_id);
    SELECT left(r.fingerprint, 8) INTO NEW.rubric_sha8 FROM evalledger.rubric r WHERE r.rubric_id = NEW.rubric_id;

    PERFORM evalledger.check_panel_v1('takes-quality run', NEW.models);
    NEW.models_sha8 := left(encode(sha256(convert_to(
        (SELECT string_agg(m, E'\n' ORDER BY m COLLATE "C") FROM unnest(NEW.models) m), 'UTF8')), 'hex'), 8);
    NEW.started_at := coalesce(NEW.started_at, now());
    NEW.created_at := now();
    RETURN NEW;
END;
$$;
