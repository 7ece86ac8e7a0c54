-- takes_quality_receipt_v1: the seed-000 receipt (schema_version 1) of a run, built from the run
-- row and its verdict rows: the last cycle decides; cost and errors cover every cycle.
CREATE FUNCTION evalledger.takes_quality_receipt_v1(p_run_id bigint) RETURNS jsonb
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
    recorded int;
    total int;
    message text;
BEGIN
    SELECT * INTO run FROM evalledger.eval_takes_quality_runs r WHERE r.id = p_run_id;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'evalledger: no takes-quality run %', p_run_id USING ERRCODE = 'no_data_found';
    END IF;
    SELECT * INTO rub FROM evalledger.rubric r WHERE r.rubric_id = run.rubric_id;
    SELECT max(v.cycle), count(*), count(*) FILTER (WHERE v.recorded),
           count(*) FILTER (WHERE v.error_kind = 'budget_exhausted'),
           trim_scale(round(coalesce(sum(v.cost_usd), 0), 6))
      INTO last_cycle, total, recorded, skipped, cost
      FROM evalledger.eval_takes_quality_judge_verdicts v WHERE v.run_id = p_run_id;
    IF last_cycle IS NULL THEN
        RAISE EXCEPTION 'evalledger: takes-quality run % has no verdicts', p_run_id
            USING ERRCODE = 'check_violation', CONSTRAINT = 'eval_takes_quality_runs_complete_run_has_verdicts';
    END IF;
    decided := evalledger.takes_quality_cycle_v1(p_run_id, last_cycle);
    SELECT jsonb_agg(c.n ORDER BY c.cycle) INTO successes FROM (
        SELECT g.cycle, count(v.*) FILTER (WHERE v.contributes) AS n
          FROM generate_series(1, last_cycle) g(cycle)
          LEFT JOIN evalledger.eval_takes_quality_judge_verdicts v ON v.run_id = p_run_id AND v.cycle = g.cycle
         GROUP BY g.cycle) c;
    SELECT coalesce(jsonb_agg(format('cycle %s %s: %s%s', v.cycle, v.model, v.error_kind,
                                     CASE WHEN v.error_message IS NULL THEN '' ELSE ': ' || v.error_message END)
                              ORDER BY v.cycle, array_position(run.models, v.model)), '[]')
      INTO errors
      FROM evalledger.eval_takes_quality_judge_verdicts v WHERE v.run_id = p_run_id AND NOT v.contributes;
    message := decided ->> 'message';
    IF last_cycle > 1 THEN
        message := message || format('; decided in cycle %s', last_cycle);
    END IF;
    IF skipped > 0 THEN
        message := message || format('; %s call(s) not made: the budget cap would have been passed', skipped);
    END IF;

    RETURN jsonb_build_object(
        'schema_version', 1,
        'ts', to_char(run.started_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
        'rubric_version', rub.version,
        'rubric_sha8', run.rubric_sha8,
        'corpus', jsonb_build_object('source', run.corpus_source, 'n_takes', run.n_takes,
                                     'slug_prefix', run.slug_prefix, 'corpus_sha8', run.corpus_sha8)
                  || CASE WHEN run.corpus_path IS NULL THEN '{}'::jsonb
                          ELSE jsonb_build_object('path', run.corpus_path) END,
        'prompt_sha8', run.prompt_sha8,
        'models_sha8', run.models_sha8,
        'models', to_jsonb(run.models),
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
        'run_id', run.id,
        'seed', run.seed,
        'judges', CASE WHEN recorded = 0 THEN 'live' WHEN recorded = total THEN 'recorded' ELSE 'mixed' END);
END;
$$;
