-- takes_quality_run_admit_v2: a takes-quality run starts in progress, now by the database's clock
-- (started_at, the receipt's ts and the trend's order, is not the caller's), under an activated
-- takes-quality rubric that passes today's check, with a valid panel as large and as cross-family as
-- the rubric's panel policy asks (seed 000: three frontier models); the database fills in the rubric
-- and panel fingerprints itself (rubric_sha8: first 8 hex of the rubric's fingerprint; models_sha8:
-- over the sorted model ids).
CREATE FUNCTION evalledger.takes_quality_run_admit_v2() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    panel jsonb;
    families int;
BEGIN
    PERFORM evalledger.require_open_v1('takes-quality run', NEW.completed_at, 'judge verdicts');
    PERFORM evalledger.refuse_supplied_v1(
        'eval_takes_quality_runs',
        jsonb_build_object('cycles_run', NEW.cycles_run, 'verdict', NEW.verdict,
                           'overall_score', NEW.overall_score, 'cost_usd', NEW.cost_usd,
                           'receipt_json', NEW.receipt_json, 'started_at', NEW.started_at));

    NEW.rubric_id := evalledger.rubric_admitted_v2('takes-quality', NEW.rubric_id);
    SELECT left(r.fingerprint, 8) INTO NEW.rubric_sha8 FROM evalledger.rubric r WHERE r.rubric_id = NEW.rubric_id;

    PERFORM evalledger.check_panel_v1('takes-quality run', NEW.models);
    SELECT r.definition -> 'panel' INTO panel FROM evalledger.rubric r WHERE r.rubric_id = NEW.rubric_id;
    families := (SELECT count(DISTINCT split_part(m, ':', 1)) FROM unnest(NEW.models) m);
    IF cardinality(NEW.models) < (panel ->> 'min_models')::numeric OR families < (panel ->> 'min_families')::numeric THEN
        RAISE EXCEPTION 'evalledger: a takes-quality panel needs at least % models from at least % families, not % from %',
                panel ->> 'min_models', panel ->> 'min_families', cardinality(NEW.models), families
            USING ERRCODE = 'check_violation', COLUMN = 'models', CONSTRAINT = 'eval_takes_quality_runs_panel_policy',
                  HINT = 'the rubric''s panel policy (seed 000: three frontier models, of more than one provider)';
    END IF;
    NEW.models_sha8 := left(encode(sha256(convert_to(
        (SELECT string_agg(m, E'\n' ORDER BY m COLLATE "C") FROM unnest(NEW.models) m), 'UTF8')), 'hex'), 8);
    NEW.started_at := now();
    NEW.created_at := now();
    RETURN NEW;
END;
$$;

CREATE TRIGGER eval_takes_quality_runs_10_admit BEFORE INSERT ON eval_takes_quality_runs
    FOR EACH ROW EXECUTE FUNCTION takes_quality_run_admit_v2();
