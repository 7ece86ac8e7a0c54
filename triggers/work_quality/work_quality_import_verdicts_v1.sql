-- work_quality_import_verdicts_v1: an imported snapshot's judge verdicts become verdict rows too,
-- one per entry of aggregate.verdicts, as the file recorded them (the ledger holds every verdict,
-- whoever ran the panel).
CREATE FUNCTION evalledger.work_quality_import_verdicts_v1() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    IF NEW.origin = 'import' AND jsonb_typeof(NEW.snapshot_json #> '{aggregate,verdicts}') = 'array' THEN
        INSERT INTO evalledger.eval_work_quality_judge_verdicts (snapshot_id, model, recorded, response_json)
        SELECT NEW.snapshot_id, v ->> 'model', false, v
          FROM jsonb_array_elements(NEW.snapshot_json #> '{aggregate,verdicts}') WITH ORDINALITY x(v, n)
         ORDER BY n
        ON CONFLICT ON CONSTRAINT eval_work_quality_judge_verdicts_once DO NOTHING;
    END IF;
    RETURN NULL;
END;
$$;

CREATE TRIGGER eval_work_quality_snapshots_20_import_verdicts AFTER INSERT ON eval_work_quality_snapshots
    FOR EACH ROW EXECUTE FUNCTION work_quality_import_verdicts_v1();
