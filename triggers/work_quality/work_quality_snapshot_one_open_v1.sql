-- work_quality_snapshot_one_open_v1: one open work-quality run of a target (name) and its judges
-- (live, or the recorded replies, which never occupy a live run's place) at a time (issue 37, item
-- 2): another --run-id of the same bot or feature while one is open would let an operator judge
-- runs until one compares well. Before a snapshot is recorded (a run or an import), the
-- target's open runs past their deadline (brain_eval_run_deadline_v1) are closed as abandoned
-- (eval_run_close_v1; the decision trigger records why), so nothing has to run on a schedule; until
-- then readers see them abandoned (work_quality_run_state_v1). Then a run of the target still open is
-- named in the refusal, unless it is this very run (its identity: the runner's INSERT ... ON CONFLICT
-- DO NOTHING then resumes it, as before). eval_work_quality_snapshots_one_open_idx holds the rule
-- against racing sessions, which this trigger cannot see. An import is complete when recorded.
CREATE FUNCTION evalledger.work_quality_snapshot_one_open_v1() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    overdue bigint;
    open_run evalledger.eval_work_quality_snapshots;
BEGIN
    FOR overdue IN SELECT s.snapshot_id FROM evalledger.eval_work_quality_snapshots s
                    WHERE s.name = NEW.name AND s.completed_at IS NULL
                      AND evalledger.brain_eval_run_deadline_v1(s.created_at, s.rubric_id) <= now()
                    ORDER BY s.created_at, s.snapshot_id LOOP
        PERFORM evalledger.eval_run_close_v1('work-quality', overdue, NULL);
    END LOOP;
    IF NEW.completed_at IS NOT NULL THEN
        RETURN NEW;
    END IF;
    SELECT s.* INTO open_run FROM evalledger.eval_work_quality_snapshots s
     WHERE s.name = NEW.name AND s.judges = NEW.judges AND s.completed_at IS NULL;
    IF FOUND AND open_run.run_id IS DISTINCT FROM NEW.run_id THEN
        RAISE EXCEPTION 'evalledger: work-quality run % of % (% judges), snapshot %, is open (recorded % UTC): complete or cancel it first',
                open_run.run_id, open_run.name, open_run.judges, open_run.snapshot_id,
                to_char(open_run.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS')
            USING ERRCODE = 'unique_violation', CONSTRAINT = 'eval_work_quality_snapshots_one_open_idx',
                  HINT = format('evalledger work-quality cancel %s --reason "..."', open_run.snapshot_id);
    END IF;
    RETURN NEW;
END;
$$;

CREATE TRIGGER eval_work_quality_snapshots_17_one_open BEFORE INSERT ON eval_work_quality_snapshots
    FOR EACH ROW EXECUTE FUNCTION work_quality_snapshot_one_open_v1();
