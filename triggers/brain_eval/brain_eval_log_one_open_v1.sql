-- brain_eval_log_one_open_v1: before a run is recorded, the brain's open runs past their deadline
-- are closed as abandoned (brain_eval_close_v1; the decision trigger records why), so nothing has to
-- run on a schedule: the next run of the brain closes them (admission runs under READ COMMITTED
-- only, as closing's decision does). Until then readers see them abandoned (brain_eval_run_state_v1).
-- Then a run of the same brain, prompt and
-- catalog still open is named in the refusal (brain_eval_log_one_open_idx holds the rule against
-- racing sessions, which this trigger cannot see).
CREATE FUNCTION evalledger.brain_eval_log_one_open_v1() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    overdue uuid;
    open_run evalledger.brain_eval_log;
BEGIN
    FOR overdue IN SELECT l.eval_run_id FROM evalledger.brain_eval_log l
                    WHERE l.brain_under_test = NEW.brain_under_test AND l.completed_at IS NULL
                      AND evalledger.brain_eval_run_deadline_v1(l.created_at, l.rubric_id) <= now()
                    ORDER BY l.created_at, l.eval_run_id LOOP
        PERFORM evalledger.brain_eval_close_v1(overdue, NULL);
    END LOOP;
    SELECT l.* INTO open_run FROM evalledger.brain_eval_log l
     WHERE l.brain_under_test = NEW.brain_under_test AND l.system_prompt_hash = NEW.system_prompt_hash
       AND l.question_catalog_version = NEW.question_catalog_version AND l.completed_at IS NULL;
    IF FOUND THEN
        RAISE EXCEPTION 'evalledger: run % of %, this prompt and catalog %, is open (recorded % UTC): complete or cancel it first',
                open_run.eval_run_id, open_run.brain_under_test, open_run.question_catalog_version,
                to_char(open_run.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS')
            USING ERRCODE = 'unique_violation', CONSTRAINT = 'brain_eval_log_one_open_idx',
                  HINT = 'evalledger brain-eval cancel RUN --reason "..."';
    END IF;
    RETURN NEW;
END;
$$;

CREATE TRIGGER brain_eval_log_15_one_open BEFORE INSERT ON brain_eval_log
    FOR EACH ROW EXECUTE FUNCTION brain_eval_log_one_open_v1();
