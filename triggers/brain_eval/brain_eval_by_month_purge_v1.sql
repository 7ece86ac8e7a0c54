-- brain_eval_by_month_purge_v1: after runs leave the ledger (retention_purge_v2 deletes them, their
-- question rows, drafts and trail first), recount the by-month panel tables for every month the
-- departed runs were recorded in: those months' rows are deleted and rebuilt from the completed
-- runs that remain (held ones among them), so the auditor's aggregates never count a purged run.
-- Per statement, from the deleted rows (a transition table). SECURITY DEFINER: the code role's.
CREATE FUNCTION evalledger.brain_eval_by_month_purge_v1() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    months date[];
BEGIN
    SELECT coalesce(array_agg(DISTINCT evalledger.utc_month_v1(g.created_at)), '{}') INTO months
      FROM gone g WHERE g.completed_at IS NOT NULL;
    IF cardinality(months) = 0 THEN
        RETURN NULL;
    END IF;
    DELETE FROM evalledger.brain_eval_runs_by_month m WHERE m.recorded_month = ANY (months);
    DELETE FROM evalledger.brain_eval_questions_by_month m WHERE m.recorded_month = ANY (months);
    DELETE FROM evalledger.brain_eval_agreement_by_month m WHERE m.recorded_month = ANY (months);
    PERFORM evalledger.brain_eval_by_month_add_v1(ARRAY(
        SELECT l.eval_run_id FROM evalledger.brain_eval_log l
         WHERE l.completed_at IS NOT NULL AND evalledger.utc_month_v1(l.created_at) = ANY (months)));
    RETURN NULL;
END;
$$;

CREATE TRIGGER brain_eval_log_30_by_month_purge AFTER DELETE ON brain_eval_log
    REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION brain_eval_by_month_purge_v1();
