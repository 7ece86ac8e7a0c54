-- work_quality_uncertainty_complete_v1: when a work-quality snapshot completes (a judged run's
-- completion, its document computed by work_quality_snapshot_decide_v3 before it; or an imported
-- history file, complete at its admission), store its uncertainty
-- (eval_work_quality_snapshot_uncertainty): work_quality_uncertainty_v2 of its stored document cut to
-- its own rubric's scale, in
-- the same transaction, so every completed snapshot has its intervals and none is computed again at a
-- read. SECURITY DEFINER: the table takes rows from the code role alone.
CREATE FUNCTION evalledger.work_quality_uncertainty_complete_v1() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    INSERT INTO evalledger.eval_work_quality_snapshot_uncertainty (snapshot_id, uncertainty, run_created_at)
    VALUES (NEW.snapshot_id, coalesce(evalledger.work_quality_uncertainty_v2(NEW.snapshot_json, NEW.rubric_id), '{}'::jsonb),
            NEW.created_at);
    RETURN NULL;
END;
$$;

-- After the decision (eval_work_quality_snapshots_20_decide, BEFORE) and before the journal (_90_);
-- an import after its verdicts (_20_import_verdicts).
CREATE TRIGGER eval_work_quality_snapshots_40_uncertainty AFTER UPDATE OF completed_at ON eval_work_quality_snapshots
    FOR EACH ROW WHEN (OLD.completed_at IS NULL AND NEW.completed_at IS NOT NULL)
    EXECUTE FUNCTION work_quality_uncertainty_complete_v1();

CREATE TRIGGER eval_work_quality_snapshots_40_uncertainty_import AFTER INSERT ON eval_work_quality_snapshots
    FOR EACH ROW WHEN (NEW.completed_at IS NOT NULL)
    EXECUTE FUNCTION work_quality_uncertainty_complete_v1();
