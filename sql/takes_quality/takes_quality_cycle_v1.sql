-- takes_quality_cycle_v1: one cycle of a takes-quality run, aggregated from its verdict rows
-- under the run's rubric: per dimension the mean (2 decimals, for display: the rule compares the
-- exact mean, shown to 4 decimals where 2 would hide the miss), min, max, the contributing
-- scores in panel order and per model; the overall score (mean of the dimension means); the
-- verdict: inconclusive when fewer than the rubric's quorum of the panel contributed, pass when
-- every dimension mean and every dimension minimum meet the rubric's thresholds, else fail;
-- and a message that says why. With repeats (--repeats K) a judge's score of a dimension is its
-- mean over its contributing repeats in the cycle (exact; shown to 4 decimals), and a judge
-- contributes when any of its repeats does: the rule then reads the judges' means as it reads
-- their single scores when K is 1, and a run of one repeat is decided exactly as before.
CREATE FUNCTION evalledger.takes_quality_cycle_v1(p_run_id bigint, p_cycle integer) RETURNS jsonb
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    run evalledger.eval_takes_quality_runs;
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
    SELECT * INTO run FROM evalledger.eval_takes_quality_runs r WHERE r.id = p_run_id;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'evalledger: no takes-quality run %', p_run_id USING ERRCODE = 'no_data_found';
    END IF;
    SELECT r.definition INTO policy FROM evalledger.rubric r WHERE r.rubric_id = run.rubric_id;
    panel := cardinality(run.models);
    need_num := (policy -> 'quorum' -> 'min_contributing_fraction' ->> 0)::int;
    need_den := (policy -> 'quorum' -> 'min_contributing_fraction' ->> 1)::int;
    min_mean := (policy -> 'pass_rule' ->> 'every_dim_mean_at_least')::numeric;
    min_min := (policy -> 'pass_rule' ->> 'every_dim_min_at_least')::numeric;

    SELECT count(*), count(DISTINCT v.model) FILTER (WHERE v.contributes) INTO answered, contributed
      FROM evalledger.eval_takes_quality_judge_verdicts v WHERE v.run_id = p_run_id AND v.cycle = p_cycle;

    WITH dim AS (
        SELECT d ->> 'key' AS key, n FROM jsonb_array_elements(policy -> 'dimensions') WITH ORDINALITY x(d, n)
    ), contrib AS (
        -- Each contributing judge's score of each dimension: its one score, or its mean over its
        -- contributing repeats (exact, and as shown: 4 decimals).
        SELECT v.model, array_position(run.models, v.model) AS pos, dim.key,
               CASE WHEN count(*) = 1 THEN min((v.scores ->> dim.key)::numeric)
                    ELSE avg((v.scores ->> dim.key)::numeric) END AS score,
               CASE WHEN count(*) = 1 THEN (array_agg(v.scores -> dim.key))[1]
                    ELSE to_jsonb(trim_scale(round(avg((v.scores ->> dim.key)::numeric), 4))) END AS shown,
               CASE WHEN count(*) = 1 THEN min((v.scores ->> dim.key)::numeric)
                    ELSE trim_scale(round(avg((v.scores ->> dim.key)::numeric), 4)) END AS shown_score
          FROM evalledger.eval_takes_quality_judge_verdicts v CROSS JOIN dim
         WHERE v.run_id = p_run_id AND v.cycle = p_cycle AND v.contributes
         GROUP BY v.model, dim.key
    ), agg AS (
        SELECT dim.key, dim.n,
               round(avg(c.score), 2) AS mean,
               avg(c.score) AS exact_mean,
               min(c.score) AS lo,
               min(c.shown_score) AS lo_shown,
               max(c.shown_score) AS hi_shown,
               coalesce(jsonb_agg(c.shown ORDER BY c.pos) FILTER (WHERE c.model IS NOT NULL), '[]') AS scores,
               coalesce(jsonb_object_agg(c.model, c.shown) FILTER (WHERE c.model IS NOT NULL), '{}') AS per_model
          FROM dim LEFT JOIN contrib c ON c.key = dim.key
         GROUP BY dim.key, dim.n
    )
    SELECT jsonb_object_agg(a.key, jsonb_build_object(
               'mean', trim_scale(a.mean),
               'min', a.lo_shown, 'max', a.hi_shown,
               'scores', a.scores, 'per_model', a.per_model)),
           trim_scale(round(avg(a.exact_mean), 2)),
           array_remove(array_agg(
               CASE WHEN a.exact_mean < min_mean
                    THEN format('%s mean %s < %s', a.key,
                                trim_scale(CASE WHEN a.mean < min_mean THEN a.mean ELSE round(a.exact_mean, 4) END),
                                min_mean) END
               ORDER BY a.n), NULL)
           || array_remove(array_agg(
               CASE WHEN a.lo < min_min THEN format('%s min %s < %s', a.key, trim_scale(a.lo_shown), min_min) END
               ORDER BY a.n), NULL)
      INTO dims, overall, misses
      FROM agg a;

    -- Each distinct suggestion once, in panel order.
    SELECT coalesce(jsonb_agg(i ORDER BY first_seen), '[]') INTO improvements FROM (
        SELECT i, min(array_position(run.models, v.model) * 1000 + n) AS first_seen
          FROM evalledger.eval_takes_quality_judge_verdicts v,
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
