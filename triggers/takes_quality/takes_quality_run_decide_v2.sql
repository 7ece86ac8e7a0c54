-- takes_quality_run_decide_v2: at completion (which complete_once_v1 admits first), every cycle
-- must hold a row from every panel model (for each of the run's repeats), and every judge's
-- current row must be an answer: a
-- run whose calls failed outside the judges' content (a provider error, a call the budget did not
-- allow, a call started with no reply) is not a final verdict, so it stays open and the same eval
-- run again retries exactly those calls. The database then writes what it decided: cycles_run,
-- verdict, overall_score, cost_usd and the whole receipt (takes_quality_receipt_built_v4: the
-- receipt takes_quality_receipt_v4 gives, whatever the run's age). A run past its
-- rubric's deadline (brain_eval_run_deadline_v1, open_run_days from its created_at) is closed as
-- abandoned instead (its closure recorded here), and a closed run (eval_run_closure: abandoned or
-- cancelled) is decided fail, "Abandoned: ...", whole or not (issue 37, item 2).
CREATE FUNCTION evalledger.takes_quality_run_decide_v2() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    gap text;
    pending text;
    receipt jsonb;
    deadline timestamptz := evalledger.brain_eval_run_deadline_v1(NEW.created_at, NEW.rubric_id);
BEGIN
    PERFORM evalledger.require_fresh_snapshot_v1('takes-quality run');
    IF now() >= deadline AND NOT EXISTS (SELECT 1 FROM evalledger.eval_run_closure c
                                          WHERE c.takes_quality_run_id = NEW.id) THEN
        INSERT INTO evalledger.eval_run_closure
               (suite, takes_quality_run_id, closure, reason, closed_by, run_created_at)
        VALUES ('takes-quality', NEW.id, 'abandoned', evalledger.brain_eval_overdue_v1(deadline),
                evalledger.caller_v1(), NEW.created_at);
    END IF;
    -- A closed run is decided as closed, whole or not.
    IF NOT EXISTS (SELECT 1 FROM evalledger.eval_run_closure c WHERE c.takes_quality_run_id = NEW.id) THEN
        SELECT format('cycle %s lacks %s', g.cycle,
                      string_agg(m || CASE WHEN k = 1 THEN '' ELSE format(' repeat %s', k) END, ', ' ORDER BY p, k)) INTO gap
          FROM generate_series(1, (SELECT max(v.cycle) FROM evalledger.eval_takes_quality_judge_verdicts v WHERE v.run_id = NEW.id)) g(cycle)
          CROSS JOIN unnest(NEW.models) WITH ORDINALITY u(m, p)
          CROSS JOIN generate_series(1, NEW.repeats) k
         WHERE NOT EXISTS (SELECT 1 FROM evalledger.eval_takes_quality_judge_verdicts v
                            WHERE v.run_id = NEW.id AND v.cycle = g.cycle AND v.model = u.m AND v.repeat_no = k)
         GROUP BY g.cycle ORDER BY g.cycle LIMIT 1;
        IF gap IS NOT NULL THEN
            RAISE EXCEPTION 'evalledger: takes-quality run % is not whole: %', NEW.id, gap
                USING ERRCODE = 'check_violation', CONSTRAINT = 'eval_takes_quality_runs_complete_run_has_verdicts';
        END IF;
        SELECT string_agg(format('cycle %s %s (%s)', c.cycle,
                                 c.model || CASE WHEN c.repeat_no = 1 THEN '' ELSE format(' repeat %s', c.repeat_no) END,
                                 CASE WHEN c.call_started THEN 'started, no reply' ELSE c.error_kind END),
                          ', ' ORDER BY c.cycle, array_position(NEW.models, c.model), c.repeat_no)
          INTO pending
          FROM evalledger.takes_quality_current_v1(NEW.id) c
         WHERE c.call_started OR c.error_kind IN ('provider_error', 'budget_exhausted');
        IF pending IS NOT NULL THEN
            RAISE EXCEPTION 'evalledger: takes-quality run % is not final: % failed outside the judges'' content',
                    NEW.id, pending
                USING ERRCODE = 'check_violation', CONSTRAINT = 'eval_takes_quality_runs_complete_run_is_final',
                      HINT = 'running the same eval again retries exactly those calls';
        END IF;
    END IF;
    receipt := evalledger.takes_quality_receipt_built_v4(NEW.id);
    NEW.cycles_run := (receipt ->> 'cycles_run')::int;
    NEW.verdict := receipt ->> 'verdict';
    NEW.overall_score := (receipt ->> 'overall_score')::numeric;
    NEW.cost_usd := (receipt ->> 'cost_usd')::numeric;
    NEW.receipt_json := receipt;
    RETURN NEW;
END;
$$;

CREATE TRIGGER eval_takes_quality_runs_20_decide BEFORE UPDATE ON eval_takes_quality_runs
    FOR EACH ROW EXECUTE FUNCTION takes_quality_run_decide_v2();
