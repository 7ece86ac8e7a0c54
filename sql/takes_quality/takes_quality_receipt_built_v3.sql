-- takes_quality_receipt_built_v3: the receipt takes_quality_receipt_v3 gives, built for any run whoever
-- asks: granted to no role, so only the ledger's own functions call it (takes_quality_receipt_v3 once
-- it asked caller_reads_v1, and takes_quality_receipt_built_v4). The completion's decision builds the
-- receipt of the run it decides through it whatever the run's age (it closes an open run past its
-- deadline whatever its age), where trigger depth once let any caller past the tier: a login reaches
-- a trigger of its own on a temporary table.
CREATE FUNCTION evalledger.takes_quality_receipt_built_v3(p_run_id bigint) RETURNS jsonb
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    run evalledger.eval_takes_quality_runs;
    rub evalledger.rubric;
    last_cycle int;
    decided jsonb;
    successes jsonb;
    errors jsonb;
    cost numeric;
    skipped int;
    pending int;
    recorded int;
    total int;
    message text;
BEGIN
    SELECT * INTO run FROM evalledger.eval_takes_quality_runs r
     WHERE r.id = p_run_id;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'evalledger: no takes-quality run %', p_run_id USING ERRCODE = 'no_data_found';
    END IF;
    SELECT * INTO rub FROM evalledger.rubric r WHERE r.rubric_id = run.rubric_id;
    SELECT max(v.cycle), count(*) FILTER (WHERE NOT v.call_started),
           count(*) FILTER (WHERE v.recorded)
      INTO last_cycle, total, recorded
      FROM evalledger.eval_takes_quality_judge_verdicts v WHERE v.run_id = p_run_id;
    IF last_cycle IS NULL THEN
        RAISE EXCEPTION 'evalledger: takes-quality run % has no verdicts', p_run_id
            USING ERRCODE = 'check_violation', CONSTRAINT = 'eval_takes_quality_runs_complete_run_has_verdicts';
    END IF;
    decided := evalledger.takes_quality_cycle_v1(p_run_id, last_cycle);
    SELECT jsonb_agg(c.n ORDER BY c.cycle) INTO successes FROM (
        SELECT g.cycle, count(DISTINCT v.model) FILTER (WHERE v.contributes) AS n
          FROM generate_series(1, last_cycle) g(cycle)
          LEFT JOIN evalledger.eval_takes_quality_judge_verdicts v ON v.run_id = p_run_id AND v.cycle = g.cycle
         GROUP BY g.cycle) c;
    SELECT count(*) FILTER (WHERE c.error_kind = 'budget_exhausted' AND NOT c.call_started),
           count(*) FILTER (WHERE c.call_started OR c.error_kind IN ('provider_error', 'budget_exhausted'))
      INTO skipped, pending
      FROM evalledger.takes_quality_current_v1(p_run_id) c;

    WITH calls AS (
        SELECT v.*, lead(v.retry_no) OVER w IS NULL AS current, coalesce(lead(v.call_started) OVER w, false) AS restarted
          FROM evalledger.eval_takes_quality_judge_verdicts v
         WHERE v.run_id = p_run_id
        WINDOW w AS (PARTITION BY v.cycle, v.model, v.repeat_no ORDER BY v.retry_no)
    ), told AS (
        SELECT c.cycle, array_position(run.models, c.model) AS pos, c.repeat_no, c.retry_no,
               -- A started call whose answer follows is not an error: the answer says what happened.
               CASE WHEN c.call_started AND c.current
                    THEN format('cycle %s %s: no reply: the call started at %s and no answer was recorded '
                                '(estimated $%s counted)', c.cycle, c.model || CASE WHEN c.repeat_no = 1 THEN '' ELSE format(' (repeat %s)', c.repeat_no) END,
                                to_char(c.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
                                trim_scale(round(c.estimated_cost_usd, 6)))
                    WHEN c.call_started AND c.restarted
                    THEN format('cycle %s %s: no reply: the runner stopped while the call was in flight '
                                '(estimated $%s counted); retried', c.cycle, c.model || CASE WHEN c.repeat_no = 1 THEN '' ELSE format(' (repeat %s)', c.repeat_no) END,
                                trim_scale(round(c.estimated_cost_usd, 6)))
                    WHEN NOT c.call_started AND NOT c.contributes
                    THEN format('cycle %s %s: %s%s%s', c.cycle, c.model || CASE WHEN c.repeat_no = 1 THEN '' ELSE format(' (repeat %s)', c.repeat_no) END, c.error_kind,
                                CASE WHEN c.error_message IS NULL THEN '' ELSE ': ' || c.error_message END,
                                CASE WHEN c.current THEN '' ELSE '; retried' END) END AS line,
               CASE WHEN c.call_started AND (c.current OR c.restarted) THEN c.estimated_cost_usd ELSE 0 END
                   + c.cost_usd AS cost
          FROM calls c
    )
    SELECT coalesce(jsonb_agg(t.line ORDER BY t.cycle, t.pos, t.repeat_no, t.retry_no) FILTER (WHERE t.line IS NOT NULL), '[]'),
           trim_scale(coalesce(sum(t.cost), 0))
      INTO errors, cost
      FROM told t;

    message := decided ->> 'message';
    IF last_cycle > 1 THEN
        message := message || format('; decided in cycle %s', last_cycle);
    END IF;
    IF skipped > 0 THEN
        message := message || format('; %s call(s) not made: the budget cap would have been passed', skipped);
    END IF;
    IF pending > 0 THEN
        message := message || format('; not final: %s call(s) failed outside the judges'' content, '
                                     'and running the same eval again retries them', pending);
    END IF;

    RETURN evalledger.takes_quality_receipt_identity_v1(run, rub) || jsonb_build_object(
        'cycles_run', last_cycle,
        'successes_per_cycle', successes,
        'verdict', decided ->> 'verdict',
        'scores', decided -> 'scores',
        'overall_score', decided -> 'overall_score',
        'cost_usd', cost,
        'improvements', decided -> 'improvements',
        'errors', errors,
        'verdictMessage', message,
        -- Optional fields (additive at schema_version 1).
        'judges', coalesce(run.judges, CASE WHEN recorded = 0 THEN 'live' WHEN recorded = total THEN 'recorded'
                                            ELSE 'mixed' END),
        'final', pending = 0)
        -- Optional, only where each judge was asked more than once per cycle (--repeats K).
        || CASE WHEN run.repeats > 1 THEN jsonb_build_object('repeats', run.repeats) ELSE '{}'::jsonb END;
END;
$$;
