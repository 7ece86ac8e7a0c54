-- work_quality_snapshot_identity_v1: a snapshot's identity is its target, its run id and how it
-- was judged (live or recorded), so recorded replies never occupy a live run's id. After
-- work_quality_snapshot_admit_v2: a run's previous snapshot is the target's latest completed one
-- judged the same way (a live run is never compared with recorded replies, nor shown them); an
-- imported file was judged live unless its note says its replies were the recorded ones. A
-- snapshot closed without completing whole (eval_run_closure: abandoned or cancelled; issue 37,
-- item 2) is no baseline: a run compares with the last one its judges completed.
CREATE FUNCTION evalledger.work_quality_snapshot_identity_v1() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    prev evalledger.eval_work_quality_snapshots;
BEGIN
    IF NEW.origin = 'import' THEN
        NEW.judges := CASE WHEN NEW.note LIKE 'recorded replies shipped with evalledger%' THEN 'recorded' ELSE 'live' END;
        RETURN NEW;
    END IF;
    SELECT * INTO prev FROM evalledger.eval_work_quality_snapshots s
     WHERE s.name = NEW.name AND s.completed_at IS NOT NULL
       AND coalesce(s.judges, CASE WHEN s.note LIKE 'recorded replies shipped with evalledger%' THEN 'recorded'
                                   ELSE 'live' END) = NEW.judges
       AND NOT EXISTS (SELECT 1 FROM evalledger.eval_run_closure c WHERE c.snapshot_id = s.snapshot_id)
     ORDER BY s.at DESC, s.snapshot_id DESC LIMIT 1;
    NEW.prev_snapshot_id := prev.snapshot_id;
    NEW.prev_run_id := prev.run_id;
    RETURN NEW;
END;
$$;

CREATE TRIGGER eval_work_quality_snapshots_15_identity BEFORE INSERT ON eval_work_quality_snapshots
    FOR EACH ROW EXECUTE FUNCTION work_quality_snapshot_identity_v1();
