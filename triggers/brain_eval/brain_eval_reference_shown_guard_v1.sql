-- brain_eval_reference_shown_guard_v1: brain_eval_reference_shown is append-only as
-- brain_eval_suggestion_shown is, and ages with it: a row leaves only with its question row
-- (ON DELETE CASCADE) inside the retention purge, when retention_due_v2 finds a suggestions-shown
-- row of the same run past the purge horizon and under no legal hold; every UPDATE, every other
-- DELETE and every TRUNCATE is refused, whoever asks.
CREATE FUNCTION evalledger.brain_eval_reference_shown_guard_v1() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    IF TG_OP = 'DELETE' AND evalledger.retention_purging_v1()
       AND evalledger.retention_due_v2('brain_eval_suggestion_shown', to_jsonb(OLD)) THEN
        RETURN OLD;
    END IF;
    RAISE EXCEPTION 'evalledger: % is append-only: % refused', TG_TABLE_NAME, TG_OP
        USING ERRCODE = 'insufficient_privilege',
              HINT = 'a reference shown stays recorded until its run is purged with it (evalledger retention apply)';
END;
$$;

CREATE TRIGGER brain_eval_reference_shown_00_append_only BEFORE UPDATE OR DELETE ON brain_eval_reference_shown
    FOR EACH ROW EXECUTE FUNCTION brain_eval_reference_shown_guard_v1();

CREATE TRIGGER brain_eval_reference_shown_00_no_truncate BEFORE TRUNCATE ON brain_eval_reference_shown
    FOR EACH STATEMENT EXECUTE FUNCTION brain_eval_reference_shown_guard_v1();
