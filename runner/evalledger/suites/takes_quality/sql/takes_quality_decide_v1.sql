-- takes_quality_cycle_v1: one cycle of a takes-quality run, aggregated from its verdict rows
-- under the run's rubric: per dimension the mean (2 decimals), min, max, the contributing
-- scores in panel order and per model; the overall score (mean of the dimension means); the
-- verdict: inconclusive when fewer than the rubric's quorum of the panel contributed, pass when
-- every dimension mean and every dimension minimum meet the rubric's thresholds, else fail;
-- and a message that says why.
CREATE OR REPLACE FUNCTION evalledger.takes_quality_cycle_v1(p_run_id bigint, p_cycle integer) RETURNS jsonb
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = evalledger, pg_temp AS $$
DECLARE
    run eval_takes_quality_runs;
    policy jsonb;
    panel int;
    answered int;
    contributed int;
    need_num int;
    need_den int;
    min_mean numeric;
    min_min numeric;
    dims jsonb;
    overall numeric;
    misses text[];
    verdict text;
    message text;
    improvements jsonb;
BEGIN
    SELECT * INTO run FROM eval_takes_quality_runs r WHERE r.id = p_run_id;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'evalledger: no takes-quality run %', p_run_id USING ERRCODE = 'no_data_found';
    END IF;
    SELECT r.definition INTO policy FROM rubric r WHERE r.rubric_id = run.rubric_id;
    panel := cardinality(run.models);
    need_num := (policy -> 'quorum' -> 'min_contributing_fraction' ->> 0)::int;
    need_den := (policy -> 'quorum' -> 'min_contributing_fraction' ->> 1)::int;
    min_mean := (policy -> 'pass_rule' ->> 'every_dim_mean_at_least')::numeric;
    min_min := (policy -> 'pass_rule' ->> 'every_dim_min_at_least')::numeric;

    SELECT count(*), count(*) FILTER (WHERE v.contributes) INTO answered, contributed
      FROM eval_takes_quality_judge_verdicts v WHERE v.run_id = p_run_id AND v.cycle = p_cycle;

    WITH dim AS (
        SELECT d ->> 'key' AS key, n FROM jsonb_array_elements(policy -> 'dimensions') WITH ORDINALITY x(d, n)
    ), contrib AS (
        SELECT v.model, array_position(run.models, v.model) AS pos, v.scores
          FROM eval_takes_quality_judge_verdicts v
         WHERE v.run_id = p_run_id AND v.cycle = p_cycle AND v.contributes
    ), agg AS (
        SELECT dim.key, dim.n,
               round(avg((c.scores ->> dim.key)::numeric), 2) AS mean,
               avg((c.scores ->> dim.key)::numeric) AS exact_mean,
               min((c.scores ->> dim.key)::numeric) AS lo,
               max((c.scores ->> dim.key)::numeric) AS hi,
               coalesce(jsonb_agg(c.scores -> dim.key ORDER BY c.pos) FILTER (WHERE c.model IS NOT NULL), '[]') AS scores,
               coalesce(jsonb_object_agg(c.model, c.scores -> dim.key) FILTER (WHERE c.model IS NOT NULL), '{}') AS per_model
          FROM dim LEFT JOIN contrib c ON true
         GROUP BY dim.key, dim.n
    )
    SELECT jsonb_object_agg(a.key, jsonb_build_object(
               'mean', trim_scale(a.mean), 'min', a.lo, 'max', a.hi, 'scores', a.scores, 'per_model', a.per_model)),
           trim_scale(round(avg(a.exact_mean), 2)),
           array_remove(array_agg(
               CASE WHEN a.mean < min_mean THEN format('%s mean %s < %s', a.key, trim_scale(a.mean), min_mean) END
               ORDER BY a.n), NULL)
           || array_remove(array_agg(
               CASE WHEN a.lo < min_min THEN format('%s min %s < %s', a.key, trim_scale(a.lo), min_min) END
               ORDER BY a.n), NULL)
      INTO dims, overall, misses
      FROM agg a;

    -- Each distinct suggestion once, in panel order.
    SELECT coalesce(jsonb_agg(i ORDER BY first_seen), '[]') INTO improvements FROM (
        SELECT i, min(array_position(run.models, v.model) * 1000 + n) AS first_seen
          FROM eval_takes_quality_judge_verdicts v,
               jsonb_array_elements(coalesce(v.improvements, '[]')) WITH ORDINALITY x(i, n)
         WHERE v.run_id = p_run_id AND v.cycle = p_cycle AND v.contributes
         GROUP BY i) s;

    IF contributed * need_den < need_num * panel THEN
        verdict := 'inconclusive';
        message := format('INCONCLUSIVE: %s of %s models contributed complete scores; the rubric needs at least %s/%s of the panel',
                          contributed, panel, need_num, need_den);
    ELSIF cardinality(misses) = 0 THEN
        verdict := 'pass';
        message := format('PASS: every dim mean >=%s and min >=%s (%s of %s models contributed; overall %s)',
                          min_mean, min_min, contributed, panel, overall);
    ELSE
        verdict := 'fail';
        message := format('FAIL: %s (%s of %s models contributed; overall %s)',
                          array_to_string(misses, '; '), contributed, panel, overall);
    END IF;

    RETURN jsonb_build_object(
        'cycle', p_cycle, 'panel', panel, 'answered', answered, 'contributed', contributed,
        'verdict', verdict, 'scores', dims, 'overall_score', overall,
        'improvements', improvements, 'message', message);
END;
$$;

-- takes_quality_receipt_v1: the seed-000 receipt (schema_version 1) of a run, built from the run
-- row and its verdict rows: the last cycle decides; cost and errors cover every cycle.
CREATE OR REPLACE FUNCTION evalledger.takes_quality_receipt_v1(p_run_id bigint) RETURNS jsonb
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = evalledger, pg_temp AS $$
DECLARE
    run eval_takes_quality_runs;
    rub rubric;
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
    SELECT * INTO run FROM eval_takes_quality_runs r WHERE r.id = p_run_id;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'evalledger: no takes-quality run %', p_run_id USING ERRCODE = 'no_data_found';
    END IF;
    SELECT * INTO rub FROM rubric r WHERE r.rubric_id = run.rubric_id;
    SELECT max(v.cycle), count(*), count(*) FILTER (WHERE v.recorded),
           count(*) FILTER (WHERE v.error_kind = 'budget_exhausted'),
           trim_scale(round(coalesce(sum(v.cost_usd), 0), 6))
      INTO last_cycle, total, recorded, skipped, cost
      FROM eval_takes_quality_judge_verdicts v WHERE v.run_id = p_run_id;
    IF last_cycle IS NULL THEN
        RAISE EXCEPTION 'evalledger: takes-quality run % has no verdicts', p_run_id
            USING ERRCODE = 'check_violation', CONSTRAINT = 'eval_takes_quality_runs_complete_run_has_verdicts';
    END IF;
    decided := takes_quality_cycle_v1(p_run_id, last_cycle);
    SELECT jsonb_agg(c.n ORDER BY c.cycle) INTO successes FROM (
        SELECT g.cycle, count(v.*) FILTER (WHERE v.contributes) AS n
          FROM generate_series(1, last_cycle) g(cycle)
          LEFT JOIN eval_takes_quality_judge_verdicts v ON v.run_id = p_run_id AND v.cycle = g.cycle
         GROUP BY g.cycle) c;
    SELECT coalesce(jsonb_agg(format('cycle %s %s: %s%s', v.cycle, v.model, v.error_kind,
                                     CASE WHEN v.error_message IS NULL THEN '' ELSE ': ' || v.error_message END)
                              ORDER BY v.cycle, array_position(run.models, v.model)), '[]')
      INTO errors
      FROM eval_takes_quality_judge_verdicts v WHERE v.run_id = p_run_id AND NOT v.contributes;
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

-- takes_quality_run_complete_v1: the only UPDATE a run accepts is its completion, once; every
-- cycle must hold a verdict from every panel model. The database then writes what it decided:
-- cycles_run, verdict, overall_score, cost_usd and the whole receipt.
CREATE OR REPLACE FUNCTION evalledger.takes_quality_run_complete_v1() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = evalledger, pg_temp AS $$
DECLARE
    changed text;
    gap text;
    receipt jsonb;
BEGIN
    IF OLD.completed_at IS NOT NULL THEN
        RAISE EXCEPTION 'evalledger: takes-quality run % is complete: eval_takes_quality_runs is append-only', OLD.id
            USING ERRCODE = 'insufficient_privilege';
    END IF;
    changed := changed_columns_v1(to_jsonb(NEW), to_jsonb(OLD), ARRAY['completed_at']);
    IF changed IS NOT NULL THEN
        RAISE EXCEPTION 'evalledger: eval_takes_quality_runs is append-only: only completed_at may be set, not %', changed
            USING ERRCODE = 'insufficient_privilege';
    END IF;
    IF NEW.completed_at IS NULL THEN
        RAISE EXCEPTION 'evalledger: completed_at is set once, to a time'
            USING ERRCODE = 'not_null_violation', COLUMN = 'completed_at';
    END IF;
    SELECT format('cycle %s lacks %s', g.cycle, string_agg(m, ', ' ORDER BY p)) INTO gap
      FROM generate_series(1, (SELECT max(v.cycle) FROM eval_takes_quality_judge_verdicts v WHERE v.run_id = NEW.id)) g(cycle)
      CROSS JOIN unnest(NEW.models) WITH ORDINALITY u(m, p)
     WHERE NOT EXISTS (SELECT 1 FROM eval_takes_quality_judge_verdicts v
                        WHERE v.run_id = NEW.id AND v.cycle = g.cycle AND v.model = u.m)
     GROUP BY g.cycle ORDER BY g.cycle LIMIT 1;
    IF gap IS NOT NULL THEN
        RAISE EXCEPTION 'evalledger: takes-quality run % is not whole: %', NEW.id, gap
            USING ERRCODE = 'check_violation', CONSTRAINT = 'eval_takes_quality_runs_complete_run_has_verdicts';
    END IF;
    receipt := takes_quality_receipt_v1(NEW.id);
    NEW.cycles_run := (receipt ->> 'cycles_run')::int;
    NEW.verdict := receipt ->> 'verdict';
    NEW.overall_score := (receipt ->> 'overall_score')::numeric;
    NEW.cost_usd := (receipt ->> 'cost_usd')::numeric;
    NEW.receipt_json := receipt;
    RETURN NEW;
END;
$$;
