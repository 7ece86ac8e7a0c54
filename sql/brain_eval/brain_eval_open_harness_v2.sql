-- brain_eval_open_harness_v2: the harness record of a run that still takes what `takes` names
-- (answers, suggestions), with the run locked as lock_run_v1 locks it, so nothing lands after its
-- completion. Refused in one way whether the run does not exist, is no harness run, is complete or
-- is one the caller may not read (caller_reads_v1: a cold run, for the runner): the refusal tells
-- the caller nothing it could not read itself.
CREATE FUNCTION evalledger.brain_eval_open_harness_v2(run_id uuid, takes text)
RETURNS evalledger.brain_eval_harness_run
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    harness evalledger.brain_eval_harness_run;
BEGIN
    PERFORM evalledger.lock_run_v1(run_id);
    SELECT h.* INTO harness FROM evalledger.brain_eval_harness_run h
      JOIN evalledger.brain_eval_log l USING (eval_run_id)
     WHERE h.eval_run_id = run_id AND l.completed_at IS NULL
       AND evalledger.caller_reads_v1(l.created_at, l.reviewer_user_id);
    IF harness.eval_run_id IS NULL THEN
        RAISE EXCEPTION 'evalledger: no open harness run % takes %', run_id, takes
            USING ERRCODE = 'insufficient_privilege', COLUMN = 'eval_run_id',
                  HINT = 'answers and suggestions go to an open harness run you may read (evalledger run brain-eval)';
    END IF;
    RETURN harness;
END
$$;
