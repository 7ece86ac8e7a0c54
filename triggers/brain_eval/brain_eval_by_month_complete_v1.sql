-- brain_eval_by_month_complete_v1: after a run's completion (completed_at set, the decision
-- computed by brain_eval_log_decide_v2 before it), add the run to the by-month panel tables: its
-- month rows are summed in the same transaction, so a panel never counts a run the ledger does not
-- hold completed, nor misses one it does. SECURITY DEFINER: the tables take rows from the code
-- role alone.
CREATE FUNCTION evalledger.brain_eval_by_month_complete_v1() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    PERFORM evalledger.brain_eval_by_month_add_v1(ARRAY[NEW.eval_run_id]);
    RETURN NULL;
END;
$$;

-- After the decision (brain_eval_log_20_decide, BEFORE) and before the journal (_90_).
CREATE TRIGGER brain_eval_log_30_by_month AFTER UPDATE OF completed_at ON brain_eval_log
    FOR EACH ROW WHEN (OLD.completed_at IS NULL AND NEW.completed_at IS NOT NULL)
    EXECUTE FUNCTION brain_eval_by_month_complete_v1();
