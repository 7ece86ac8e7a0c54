-- takes_quality_regression_v1: seed 000's `regress` decided by the database, as work-quality's
-- Compare and IsRegression are: a baseline receipt against the run `regress` just made, read from
-- the ledger (its stored receipt, or, while it stays open, the receipt completion would write), so
-- the "now" side is the database's and never the caller's. Per dimension of the baseline (in the
-- run's rubric order, then the overall): baseline mean, now, delta (numeric, exact: a drop of
-- exactly the threshold is 0.5, not 0.5000000000000001) and whether it regressed, which is a drop
-- of more than the threshold (seed 000: "some dim dropped > 0.5"). The outcome the exit code
-- follows: regression (1) when any dropped; else inconclusive (2) when a side has no mean to
-- compare (an inconclusive run); else ok (0). Differences of the corpus, prompt and rubric
-- fingerprints are informational warnings (seed 000: the caller's call). The threshold is
-- takes_quality_threshold_v1's (NULL: seed 000's default). A run cancelled or abandoned (open past
-- its deadline, or closed so: takes_quality_run_state_v1; issue 37, item 2) is a regression whatever
-- its scores, its verdictMessage ("Abandoned: ...") the first warning: no gate passes on it.
CREATE FUNCTION evalledger.takes_quality_regression_v1(baseline jsonb, p_run_id bigint, threshold numeric DEFAULT NULL)
RETURNS jsonb LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    t numeric := evalledger.takes_quality_threshold_v1(threshold);
    now_receipt jsonb;
    dims text[];
    compared jsonb;
    closed text;
BEGIN
    IF jsonb_typeof(baseline -> 'scores') IS DISTINCT FROM 'object' THEN
        RAISE EXCEPTION 'evalledger: the baseline is not a takes-quality receipt (it has no scores object)'
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    SELECT coalesce(r.receipt_json, evalledger.takes_quality_receipt_v4(r.id)),
           ARRAY(SELECT d ->> 'key' FROM jsonb_array_elements(b.definition -> 'dimensions') WITH ORDINALITY x(d, n)
                  ORDER BY n),
           CASE WHEN s.state IN ('cancelled', 'abandoned') THEN format('run %s is %s: %s', r.id, s.state, s.verdict_message) END
      INTO now_receipt, dims, closed
      FROM evalledger.eval_takes_quality_runs r JOIN evalledger.rubric b USING (rubric_id)
      JOIN evalledger.takes_quality_run_state_v1 s ON s.run_id = r.id
     WHERE r.id = p_run_id;
    IF now_receipt IS NULL THEN
        RAISE EXCEPTION 'evalledger: no takes-quality run % to compare with the baseline', p_run_id
            USING ERRCODE = 'no_data_found';
    END IF;
    WITH pairs AS (
        SELECT k.n, k.name, baseline -> 'scores' -> k.name -> 'mean' AS before,
               now_receipt -> 'scores' -> k.name -> 'mean' AS after
          FROM (SELECT row_number() OVER (ORDER BY array_position(dims, key) NULLS LAST, key COLLATE "C") AS n,
                       key AS name
                  FROM jsonb_object_keys(baseline -> 'scores') key) k
        UNION ALL
        SELECT 1e9, 'overall', baseline -> 'overall_score', now_receipt -> 'overall_score'),
    rows AS (
        SELECT p.n, p.name, p.before, p.after, d.delta, coalesce(d.delta < -t, false) AS regressed
          FROM pairs p CROSS JOIN LATERAL (
               SELECT CASE WHEN jsonb_typeof(p.before) = 'number' AND jsonb_typeof(p.after) = 'number'
                           THEN (p.after::text)::numeric - (p.before::text)::numeric END AS delta) d)
    SELECT jsonb_build_object(
               'threshold', t,
               'rows', coalesce(jsonb_agg(jsonb_build_object('dimension', name, 'baseline', before, 'now', after,
                                                             'delta', delta, 'regressed', regressed) ORDER BY n), '[]'),
               'regressed', coalesce(jsonb_agg(name ORDER BY n) FILTER (WHERE regressed), '[]'),
               'outcome', CASE WHEN bool_or(regressed) OR closed IS NOT NULL THEN 'regression'
                               WHEN bool_or(delta IS NULL) THEN 'inconclusive'
                               ELSE 'ok' END,
               'warnings', (SELECT CASE WHEN closed IS NOT NULL THEN jsonb_build_array(closed) ELSE '[]' END
                                   || coalesce(jsonb_agg(format('%s differs: %s (baseline) vs %s (now)', f.name, f.a, f.b)
                                                      ORDER BY f.n), '[]')
                              FROM (VALUES (1, 'corpus_sha8', baseline -> 'corpus' ->> 'corpus_sha8',
                                            now_receipt -> 'corpus' ->> 'corpus_sha8'),
                                           (2, 'prompt_sha8', baseline ->> 'prompt_sha8', now_receipt ->> 'prompt_sha8'),
                                           (3, 'rubric_sha8', baseline ->> 'rubric_sha8', now_receipt ->> 'rubric_sha8'))
                                   f(n, name, a, b)
                             WHERE f.a IS DISTINCT FROM f.b))
      INTO compared
      FROM rows;
    RETURN compared;
END;
$$;

-- `regress` runs as the runner, which made the run it compares.
GRANT EXECUTE ON FUNCTION takes_quality_regression_v1(jsonb, bigint, numeric) TO evalledger_runner;
