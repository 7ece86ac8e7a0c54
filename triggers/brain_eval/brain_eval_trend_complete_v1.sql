-- brain_eval_trend_complete_v1: after a run's completion (the decision computed before it, its
-- uncertainty stored by brain_eval_log_40_uncertainty), store its trend row (brain_eval_trend,
-- brain_eval_trend_of_v1 of the two) in the same transaction, so the trend panel reads each run
-- and its error bars in one row. SECURITY DEFINER: the table takes rows from the code role alone.
CREATE FUNCTION evalledger.brain_eval_trend_complete_v1() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    INSERT INTO evalledger.brain_eval_trend
    SELECT t.* FROM evalledger.brain_eval_trend_of_v1(
        NEW, (SELECT u.uncertainty FROM evalledger.brain_eval_run_uncertainty u WHERE u.eval_run_id = NEW.eval_run_id)) t;
    RETURN NULL;
END;
$$;

-- After the uncertainty (brain_eval_log_40_uncertainty, whose row it copies) and before the journal (_90_).
CREATE TRIGGER brain_eval_log_45_trend AFTER UPDATE OF completed_at ON brain_eval_log
    FOR EACH ROW WHEN (OLD.completed_at IS NULL AND NEW.completed_at IS NOT NULL)
    EXECUTE FUNCTION brain_eval_trend_complete_v1();
