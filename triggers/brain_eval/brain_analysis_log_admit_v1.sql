-- brain_analysis_log_admit_v1: an analysis (production traffic, or a brain's eval answer) is
-- produced neither in the future nor more than a day (in UTC, by the statement's clock) before it
-- is recorded, unless an audited import (brain_eval_import) was made in the same transaction: a
-- caller's produced_at never answers a run it predates, nor stays "latest" from 2099. Its brain
-- then owns its prompt (brain_prompt_claim_v1), for independence, levers and holds by key. Its time
-- is one the project's readers can read back (readable_time_v1).
CREATE FUNCTION evalledger.brain_analysis_log_admit_v1() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    NEW.produced_at := coalesce(NEW.produced_at, now());
    IF NEW.produced_at > clock_timestamp() THEN
        RAISE EXCEPTION 'evalledger: produced_at % is in the future', NEW.produced_at
            USING ERRCODE = 'check_violation', COLUMN = 'produced_at',
                  CONSTRAINT = 'brain_analysis_log_produced_not_in_future';
    END IF;
    -- An import may date an analysis years back, but not where no reader can read it (issue 37, item 8).
    IF NOT evalledger.readable_time_v1(NEW.produced_at) THEN
        RAISE EXCEPTION 'evalledger: produced_at % is not a time between the years 1 and 9999', NEW.produced_at
            USING ERRCODE = 'check_violation', COLUMN = 'produced_at', CONSTRAINT = 'brain_analysis_log_produced_readable';
    END IF;
    IF NEW.produced_at < evalledger.utc_ago_v1(evalledger.backdating_window_v1()) AND NOT EXISTS (
           SELECT 1 FROM evalledger.brain_eval_import i WHERE i.txid = txid_current()) THEN
        RAISE EXCEPTION 'evalledger: produced_at % is more than a day before the analysis is recorded', NEW.produced_at
            USING ERRCODE = 'check_violation', COLUMN = 'produced_at',
                  CONSTRAINT = 'brain_analysis_log_produced_recently',
                  HINT = 'historical analyses are recorded through an import made in the same transaction '
                         '(evalledger brain-eval record --historical REASON)';
    END IF;
    -- An unknown brain or a malformed hash is left to the row's own foreign key and CHECK.
    IF NEW.system_prompt_hash ~ '^[0-9a-f]{64}$'
       AND EXISTS (SELECT 1 FROM evalledger.target t WHERE t.target_id = NEW.brain) THEN
        PERFORM evalledger.brain_prompt_claim_v1(NEW.brain, NEW.system_prompt_hash, 'analysis');
    END IF;
    RETURN NEW;
END;
$$;

CREATE TRIGGER brain_analysis_log_10_admit BEFORE INSERT ON brain_analysis_log
    FOR EACH ROW EXECUTE FUNCTION brain_analysis_log_admit_v1();
