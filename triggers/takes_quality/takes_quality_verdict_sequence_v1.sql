-- takes_quality_verdict_sequence_v1: where a judge's row falls among the rows of its call, before
-- the verdict is admitted (takes_quality_verdict_admit_v2). retry_no is the database's: 0 for the
-- first row of a judge in a cycle, one more for each row after. A row follows only a started
-- call (its answer, or a new start after a runner that stopped) or a failure outside the judge's
-- content (a provider error, a call the budget did not allow): a judge that answered has its
-- verdict, and nothing replaces it. A started call (call_started, inserted before the request is
-- sent) carries only the runner's estimate of its cost; if no answer follows it, that estimate is
-- what the call counts. A run judged live takes only live rows, a recorded run only recorded
-- ones. A later cycle starts only once every judge's current row in the one before is an answer.
-- With repeats (the run's repeats, --repeats K) each judge is asked K times per cycle: repeat_no
-- (1 to K, the caller's) numbers the repeat, and each repeat has its own rows and retries as
-- above; a repeat outside 1 to K is refused, and a later cycle waits for every repeat's answer.
CREATE FUNCTION evalledger.takes_quality_verdict_sequence_v1() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    run evalledger.eval_takes_quality_runs;
    cur evalledger.eval_takes_quality_judge_verdicts;
    undecided text;
BEGIN
    SELECT * INTO run FROM evalledger.eval_takes_quality_runs r WHERE r.id = NEW.run_id;
    IF NOT FOUND OR run.completed_at IS NOT NULL OR NOT evalledger.caller_reads_v1(run.created_at, NULL) THEN
        -- Admission (takes_quality_verdict_admit) refuses these alike: a run that is missing, closed
        -- or not the caller's to read reads as one, and nothing here says more about it.
        RETURN NEW;
    END IF;
    IF run.judges IS NOT NULL AND NEW.recorded IS DISTINCT FROM (run.judges = 'recorded') THEN
        RAISE EXCEPTION 'evalledger: takes-quality run % is judged by % judges: a % reply is not one of its verdicts',
                NEW.run_id, run.judges, CASE WHEN NEW.recorded THEN 'recorded' ELSE 'live' END
            USING ERRCODE = 'check_violation', COLUMN = 'recorded';
    END IF;

    IF NEW.repeat_no IS NULL OR NEW.repeat_no < 1 OR NEW.repeat_no > run.repeats THEN
        RAISE EXCEPTION 'evalledger: takes-quality run % asks each judge % time(s) per cycle: repeat % is not one of them',
                NEW.run_id, run.repeats, NEW.repeat_no
            USING ERRCODE = 'check_violation', COLUMN = 'repeat_no';
    END IF;

    SELECT * INTO cur FROM evalledger.eval_takes_quality_judge_verdicts v
     WHERE v.run_id = NEW.run_id AND v.cycle = NEW.cycle AND v.model = NEW.model AND v.repeat_no = NEW.repeat_no
     ORDER BY v.retry_no DESC LIMIT 1;
    IF NOT FOUND THEN
        NEW.retry_no := 0;
    ELSIF cur.call_started OR cur.error_kind IN ('provider_error', 'budget_exhausted') THEN
        NEW.retry_no := cur.retry_no + 1;
    ELSE
        RAISE EXCEPTION 'evalledger: % has its verdict in cycle % of takes-quality run %: nothing to retry',
                NEW.model, NEW.cycle || CASE WHEN NEW.repeat_no = 1 THEN '' ELSE format(' (repeat %s)', NEW.repeat_no) END,
                NEW.run_id
            USING ERRCODE = 'check_violation', CONSTRAINT = 'eval_takes_quality_judge_verdicts_retry_once';
    END IF;

    IF NEW.cycle > 1 THEN
        SELECT string_agg(m || CASE WHEN k = 1 THEN '' ELSE format(' repeat %s', k) END, ', ' ORDER BY p, k) INTO undecided
          FROM unnest(run.models) WITH ORDINALITY u(m, p)
          CROSS JOIN generate_series(1, run.repeats) k
          LEFT JOIN evalledger.takes_quality_current_v1(NEW.run_id) c
                 ON c.cycle = NEW.cycle - 1 AND c.model = u.m AND c.repeat_no = k
         WHERE c.verdict_id IS NULL OR c.call_started OR c.error_kind IN ('provider_error', 'budget_exhausted');
        IF undecided IS NOT NULL THEN
            RAISE EXCEPTION 'evalledger: cycle % of takes-quality run % is not decided (no answer from %): cycle % waits',
                    NEW.cycle - 1, NEW.run_id, undecided, NEW.cycle
                USING ERRCODE = 'check_violation', COLUMN = 'cycle';
        END IF;
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

CREATE TRIGGER eval_takes_quality_judge_verdicts_05_sequence BEFORE INSERT ON eval_takes_quality_judge_verdicts
    FOR EACH ROW EXECUTE FUNCTION takes_quality_verdict_sequence_v1();
