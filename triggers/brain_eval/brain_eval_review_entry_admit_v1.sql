-- brain_eval_review_entry_admit_v1: the trail is written by brain_eval_review_trail_v1 (running as
-- the code role) and by nothing else, so no role can add an entry no reviewer made; the time is
-- the database's.
CREATE FUNCTION evalledger.brain_eval_review_entry_admit_v1() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    IF current_user <> 'evalledger_code' THEN
        RAISE EXCEPTION 'evalledger: brain_eval_review_entry is written by the ledger as a reviewer scores, not directly'
            USING ERRCODE = 'insufficient_privilege',
                  HINT = 'the run''s reviewer updates the question row (evalledger review score)';
    END IF;
    NEW.entered_at := now();
    RETURN NEW;
END;
$$;

CREATE TRIGGER brain_eval_review_entry_10_admit BEFORE INSERT ON brain_eval_review_entry
    FOR EACH ROW EXECUTE FUNCTION brain_eval_review_entry_admit_v1();
