-- brain_eval_harness_run_admit_v2: a harness run's record agrees with the run it describes: the
-- brain version is the run's brain, model and prompt, the catalog is the run's, the questions are
-- that catalog's and as many as the run counts, and the contracts hashed are the run's hash. A run
-- that does not exist, is complete or is one the caller may not read (caller_reads_v1) is refused
-- in one way: the refusal tells the runner nothing about a cold run it cannot read.
CREATE FUNCTION evalledger.brain_eval_harness_run_admit_v2() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    run evalledger.brain_eval_log;
    brain evalledger.brain_version;
    missing text;
BEGIN
    PERFORM evalledger.lock_run_v1(NEW.eval_run_id);
    SELECT l.* INTO run FROM evalledger.brain_eval_log l
     WHERE l.eval_run_id = NEW.eval_run_id AND l.completed_at IS NULL
       AND evalledger.caller_reads_v1(l.created_at, l.reviewer_user_id);
    IF run.eval_run_id IS NULL THEN
        RAISE EXCEPTION 'evalledger: no open run % takes a harness record', NEW.eval_run_id
            USING ERRCODE = 'insufficient_privilege', COLUMN = 'eval_run_id';
    END IF;
    SELECT v.* INTO brain FROM evalledger.brain_version v WHERE v.brain_version_id = NEW.brain_version_id;
    IF brain.brain_version_id IS NULL THEN
        RAISE EXCEPTION 'evalledger: no brain version %', NEW.brain_version_id
            USING ERRCODE = 'foreign_key_violation', COLUMN = 'brain_version_id';
    END IF;
    IF (brain.target_id, brain.model_id, brain.system_prompt_hash, brain.version_label)
       IS DISTINCT FROM (run.brain_under_test, run.model_id, run.system_prompt_hash, run.system_prompt_version_label) THEN
        RAISE EXCEPTION 'evalledger: run % is not of % version %', run.eval_run_id, brain.target_id, brain.version
            USING ERRCODE = 'check_violation', COLUMN = 'brain_version_id';
    END IF;
    IF NEW.catalog_version IS DISTINCT FROM run.question_catalog_version
       OR cardinality(NEW.question_ids) IS DISTINCT FROM run.question_count
       OR NEW.contracts ->> 'brain_view_contracts_hash' IS DISTINCT FROM run.brain_view_contracts_hash THEN
        RAISE EXCEPTION 'evalledger: harness record of run % disagrees with its catalog, question count or contracts hash',
                run.eval_run_id
            USING ERRCODE = 'check_violation';
    END IF;
    SELECT string_agg(q, ', ') INTO missing FROM unnest(NEW.question_ids) AS q
     WHERE NOT EXISTS (SELECT 1 FROM evalledger.brain_eval_catalog_question c
                        WHERE c.catalog_version = NEW.catalog_version AND c.question_id = q);
    IF missing IS NOT NULL THEN
        RAISE EXCEPTION 'evalledger: catalog % has no question %', NEW.catalog_version, missing
            USING ERRCODE = 'foreign_key_violation', COLUMN = 'question_ids';
    END IF;
    NEW.created_at := now();
    RETURN NEW;
END;
$$;

CREATE TRIGGER brain_eval_harness_run_10_admit BEFORE INSERT ON brain_eval_harness_run
    FOR EACH ROW EXECUTE FUNCTION brain_eval_harness_run_admit_v2();
