-- brain_eval_uncertainty_complete_v1: after a run's completion (completed_at set, the decision
-- computed by brain_eval_log_decide_v2 before it), store its uncertainty
-- (brain_eval_run_uncertainty): brain_eval_uncertainty_v1 of its question rows and rubric, in the
-- same transaction, so every completed run has its intervals and none is computed again at a read.
-- SECURITY DEFINER: the table takes rows from the code role alone, and the run's every question row
-- counts whoever completes it.
CREATE FUNCTION evalledger.brain_eval_uncertainty_complete_v1() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    INSERT INTO evalledger.brain_eval_run_uncertainty (eval_run_id, uncertainty, reviewer_user_id, run_created_at)
    VALUES (NEW.eval_run_id, coalesce(evalledger.brain_eval_uncertainty_v1(NEW.eval_run_id), '{}'::jsonb),
            NEW.reviewer_user_id, NEW.created_at);
    RETURN NULL;
END;
$$;

-- After the decision (brain_eval_log_20_decide, BEFORE) and before the journal (_90_).
CREATE TRIGGER brain_eval_log_40_uncertainty AFTER UPDATE OF completed_at ON brain_eval_log
    FOR EACH ROW WHEN (OLD.completed_at IS NULL AND NEW.completed_at IS NOT NULL)
    EXECUTE FUNCTION brain_eval_uncertainty_complete_v1();
