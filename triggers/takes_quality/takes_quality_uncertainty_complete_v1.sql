-- takes_quality_uncertainty_complete_v1: after a takes-quality run's completion (completed_at set,
-- the verdict and receipt computed by takes_quality_run_decide_v2 before it), store its uncertainty
-- (eval_takes_quality_run_uncertainty): takes_quality_uncertainty_v1 of its verdict rows and rubric,
-- in the same transaction, so every completed run has its intervals and none is computed again at a
-- read. SECURITY DEFINER: the table takes rows from the code role alone, and every verdict row of the
-- run counts whoever completes it.
CREATE FUNCTION evalledger.takes_quality_uncertainty_complete_v1() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    INSERT INTO evalledger.eval_takes_quality_run_uncertainty (run_id, uncertainty, run_created_at)
    VALUES (NEW.id, coalesce(evalledger.takes_quality_uncertainty_v1(NEW.id), '{}'::jsonb), NEW.created_at);
    RETURN NULL;
END;
$$;

-- After the decision (eval_takes_quality_runs_20_decide, BEFORE) and before the journal (_90_).
CREATE TRIGGER eval_takes_quality_runs_40_uncertainty AFTER UPDATE OF completed_at ON eval_takes_quality_runs
    FOR EACH ROW WHEN (OLD.completed_at IS NULL AND NEW.completed_at IS NOT NULL)
    EXECUTE FUNCTION takes_quality_uncertainty_complete_v1();
