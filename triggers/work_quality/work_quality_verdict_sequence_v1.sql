-- work_quality_verdict_sequence_v1: where a judge's row falls among the rows of its call on a
-- snapshot, before the verdict is admitted (work_quality_verdict_admit_v2). retry_no is the
-- database's: 0 first, one more for each row after. A row follows only a started call (its answer,
-- or a new start after a runner that stopped), a failure outside the judge's content (a provider
-- error, a call the budget did not allow), or, while no judge of the snapshot has contributed,
-- any failure: a run with no verdict at all can never be completed, so its --run-id is judged
-- again rather than left open for good. A started call carries only the runner's estimate of its
-- cost, which counts if no answer follows. A live snapshot takes live rows, a recorded one
-- recorded rows. An imported snapshot's rows come from its file, once each. With repeats (the
-- snapshot's repeats, --repeats K) each judge is asked K times: repeat_no (1 to K, the caller's)
-- numbers the repeat, each with its own rows and retries as above; a repeat outside 1 to K is refused.
CREATE FUNCTION evalledger.work_quality_verdict_sequence_v1() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    snap evalledger.eval_work_quality_snapshots;
    cur evalledger.eval_work_quality_judge_verdicts;
BEGIN
    SELECT * INTO snap FROM evalledger.eval_work_quality_snapshots s WHERE s.snapshot_id = NEW.snapshot_id;
    IF NOT FOUND OR snap.origin = 'import' OR snap.completed_at IS NOT NULL
       OR NOT evalledger.caller_reads_v1(snap.created_at, NULL) THEN
        NEW.retry_no := 0;
        -- Admission (work_quality_verdict_admit) refuses a missing, closed or unreadable snapshot
        -- alike, and admits imports: nothing here says more about it.
        RETURN NEW;
    END IF;
    IF snap.judges IS NOT NULL AND NEW.recorded IS DISTINCT FROM (snap.judges = 'recorded') THEN
        RAISE EXCEPTION 'evalledger: work-quality snapshot % is judged by % judges: a % reply is not one of its verdicts',
                NEW.snapshot_id, snap.judges, CASE WHEN NEW.recorded THEN 'recorded' ELSE 'live' END
            USING ERRCODE = 'check_violation', COLUMN = 'recorded';
    END IF;

    IF NEW.repeat_no IS NULL OR NEW.repeat_no < 1 OR NEW.repeat_no > snap.repeats THEN
        RAISE EXCEPTION 'evalledger: work-quality snapshot % asks each judge % time(s): repeat % is not one of them',
                NEW.snapshot_id, snap.repeats, NEW.repeat_no
            USING ERRCODE = 'check_violation', COLUMN = 'repeat_no';
    END IF;

    SELECT * INTO cur FROM evalledger.eval_work_quality_judge_verdicts v
     WHERE v.snapshot_id = NEW.snapshot_id AND v.model = NEW.model AND v.repeat_no = NEW.repeat_no
     ORDER BY v.retry_no DESC LIMIT 1;
    IF NOT FOUND THEN
        NEW.retry_no := 0;
    ELSIF cur.call_started OR cur.error_kind IN ('provider_error', 'budget_exhausted')
          OR (NOT cur.contributes AND NOT EXISTS (SELECT 1 FROM evalledger.eval_work_quality_judge_verdicts v
                                                   WHERE v.snapshot_id = NEW.snapshot_id AND v.contributes)) THEN
        NEW.retry_no := cur.retry_no + 1;
    ELSE
        RAISE EXCEPTION 'evalledger: % has its verdict on work-quality snapshot %: nothing to retry',
                NEW.model || CASE WHEN NEW.repeat_no = 1 THEN '' ELSE format(' (repeat %s)', NEW.repeat_no) END,
                NEW.snapshot_id
            USING ERRCODE = 'check_violation', CONSTRAINT = 'eval_work_quality_judge_verdicts_once';
    END IF;

    IF NEW.call_started THEN
        IF NEW.recorded OR NEW.error_kind IS NOT NULL OR NEW.response_json IS NOT NULL OR NEW.raw_excerpt IS NOT NULL
           OR NEW.input_tokens <> 0 OR NEW.output_tokens <> 0 OR NEW.cost_usd <> 0 OR NEW.attempts <> 0 THEN
            RAISE EXCEPTION 'evalledger: a started call carries only the estimate of its cost'
                USING ERRCODE = 'check_violation', COLUMN = 'call_started';
        END IF;
        IF NEW.estimated_cost_usd IS NULL OR NEW.estimated_cost_usd < 0 THEN
            RAISE EXCEPTION 'evalledger: a started call needs the estimate of its cost (0 or more)'
                USING ERRCODE = 'check_violation', COLUMN = 'estimated_cost_usd';
        END IF;
        NEW.error_kind := 'provider_error';
        NEW.error_message := 'call started: no reply recorded';
    ELSIF NEW.estimated_cost_usd IS NOT NULL THEN
        RAISE EXCEPTION 'evalledger: only a started call carries an estimated cost; an answer carries its own'
            USING ERRCODE = 'check_violation', COLUMN = 'estimated_cost_usd';
    END IF;
    RETURN NEW;
END;
$$;

CREATE TRIGGER eval_work_quality_judge_verdicts_05_sequence BEFORE INSERT ON eval_work_quality_judge_verdicts
    FOR EACH ROW EXECUTE FUNCTION work_quality_verdict_sequence_v1();
