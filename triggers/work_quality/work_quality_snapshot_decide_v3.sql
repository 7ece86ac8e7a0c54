-- work_quality_snapshot_decide_v3: a run's completion (complete_once_v1 has already refused any
-- other UPDATE), once every panel model's current row (work_quality_current_v1; one per repeat
-- with --repeats K) is an answer or a failure: a call that started with no reply recorded is no verdict yet. The database computes
-- the aggregate: mean_scores per dimension over the contributing judges; disagreement (max - min)
-- per dimension when at least two contributed (one judge has no spread to show); the note naming
-- each judge skipped in its current row (a call retried is not skipped), and each contributing
-- judge of the assessed run's family, after a label naming the judges whose replies were recorded
-- rather than live; the comparison with the previous snapshot (work_quality_compare_v1); what the
-- judges cost, exactly, a call that started and was never answered counting the runner's estimate
-- of it; and the whole document. With no contributing judge there is nothing to aggregate:
-- completion is refused and the run stays open, and the same --run-id judges again. Verdicts lock
-- their snapshot FOR SHARE, so this waits for them; it then reads under READ COMMITTED only
-- (require_fresh_snapshot_v1), whose fresh snapshot sees what it waited for. Over v2: current rows.
-- A snapshot past its rubric's deadline (brain_eval_run_deadline_v1, open_run_days from its
-- created_at) is closed as abandoned instead (its closure recorded here), and a closed one
-- (eval_run_closure: abandoned or cancelled; issue 37, item 2) is completed whole or not, with what
-- its judges had answered, and its note is the abandonment's rationale ("Abandoned: ..."): the
-- suite's failing decision, a regression (work_quality_history_rows_v1). What it computes is
-- work_quality_decide_v1's, which the ledger's recompute calls too.
CREATE FUNCTION evalledger.work_quality_snapshot_decide_v3() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    gap text;
    contributing integer;
    deadline timestamptz := evalledger.brain_eval_run_deadline_v1(NEW.created_at, NEW.rubric_id);
    closed evalledger.eval_run_closure;
BEGIN
    PERFORM evalledger.require_fresh_snapshot_v1('work-quality snapshot');
    IF now() >= deadline AND NOT EXISTS (SELECT 1 FROM evalledger.eval_run_closure c
                                          WHERE c.snapshot_id = NEW.snapshot_id) THEN
        INSERT INTO evalledger.eval_run_closure (suite, snapshot_id, closure, reason, closed_by, run_created_at)
        VALUES ('work-quality', NEW.snapshot_id, 'abandoned', evalledger.brain_eval_overdue_v1(deadline),
                evalledger.caller_v1(), NEW.created_at);
    END IF;
    SELECT c.* INTO closed FROM evalledger.eval_run_closure c WHERE c.snapshot_id = NEW.snapshot_id;
    SELECT string_agg(m || CASE WHEN k = 1 THEN '' ELSE format(' repeat %s', k) END, ', ' ORDER BY p, k) INTO gap
      FROM unnest(NEW.models) WITH ORDINALITY u(m, p)
     CROSS JOIN generate_series(1, NEW.repeats) k
     WHERE NOT EXISTS (SELECT 1 FROM evalledger.work_quality_current_v1(NEW.snapshot_id) v
                        WHERE v.model = u.m AND v.repeat_no = k AND NOT v.call_started);
    IF gap IS NOT NULL AND closed.closure_id IS NULL THEN
        RAISE EXCEPTION 'evalledger: work-quality snapshot % lacks a verdict from %', NEW.snapshot_id, gap
            USING ERRCODE = 'check_violation', CONSTRAINT = 'eval_work_quality_snapshots_complete_has_verdicts';
    END IF;
    SELECT count(*) INTO contributing FROM evalledger.eval_work_quality_judge_verdicts v
     WHERE v.snapshot_id = NEW.snapshot_id AND v.contributes;
    IF contributing = 0 AND closed.closure_id IS NULL THEN
        RAISE EXCEPTION 'evalledger: no judge produced a verdict for work-quality snapshot %', NEW.snapshot_id
            USING ERRCODE = 'check_violation', CONSTRAINT = 'eval_work_quality_snapshots_complete_has_a_verdict';
    END IF;

    NEW := evalledger.work_quality_decide_v1(NEW);
    RETURN NEW;
END;
$$;

CREATE TRIGGER eval_work_quality_snapshots_20_decide BEFORE UPDATE ON eval_work_quality_snapshots
    FOR EACH ROW EXECUTE FUNCTION work_quality_snapshot_decide_v3();
