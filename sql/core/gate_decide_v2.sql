-- gate_decide_v2: a regression gate's decision, by one of three modes, with what it rests on
-- (docs/statistics.md, "Paired comparisons and gates"). The two sides: for takes-quality a baseline
-- receipt and run p_run_id as the ledger holds it; for work-quality two Snapshot documents.
--   default: the seed's own gate, unchanged: takes_quality_regression_v1 (a dimension mean, or the
--     overall, dropped by more than the threshold: fail; a side with no mean: inconclusive; a run
--     cancelled or abandoned: fail) and work_quality_compare_v2 with work_quality_is_regression_v2
--     (overall or value_for_money dropped by more than the tolerance: fail);
--   significant: fail only when a gated row's paired interval lies wholly beyond the threshold
--     (its upper end below -threshold);
--   possible: fail when any part of it does (its lower end below -threshold).
-- The gated rows: every dimension and the overall for takes-quality, overall and value_for_money for
-- work-quality (the rows the seeds' gates read); the paired rows are takes_quality_paired_v1's and
-- work_quality_paired_v2's. In significant and possible a gated row without an interval (fewer than
-- two shared judges) is unmeasurable: no row regressed and one unmeasurable is inconclusive, never a
-- pass, and the reasons name each and why. A takes-quality run cancelled or abandoned fails in every
-- mode. The threshold is the seed's default when NULL (takes_quality_threshold_v1; the work-quality
-- rubric's regress_tolerance, as the seed's tol <= 0). A work-quality gate is decided under the
-- work-quality rubric given (p_rubric_id: its dimensions, same band and tolerance, by
-- work_quality_policy_v2), never whichever is active when it is asked: the admission trigger gives
-- the one active then and stores it (eval_gate_decision.work_quality_rubric_id), and the ledger's
-- recompute re-decides under that stored one, whatever was activated since. A takes-quality gate
-- reads its run's own rubric and ignores p_rubric_id. Returns {"mode", "threshold", "decision",
-- "reasons", "seed", "paired"}, each paired row with "gated" and "regressed".
CREATE FUNCTION evalledger.gate_decide_v2(
    p_suite text, p_mode text, p_threshold numeric, baseline jsonb, current_doc jsonb, p_run_id bigint,
    p_rubric_id bigint)
RETURNS jsonb
LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    seed jsonb;
    policy jsonb;
    paired jsonb;
    gated text[];
    t numeric;
    seed_fails boolean;
    seed_inconclusive boolean := false;
    closed text;
    now_receipt jsonb;
    dims text[];
    delta jsonb;
    seed_reasons text[];
    reasons text[] := '{}';
    unmeasured text[] := '{}';
    decision text;
    row_ jsonb;
    marked jsonb := '[]';
    hit boolean;
BEGIN
    IF p_mode IS NULL OR p_mode NOT IN ('default', 'significant', 'possible') THEN
        RAISE EXCEPTION 'evalledger: a gate is default, significant or possible, not %', p_mode
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF p_suite = 'takes-quality' THEN
        seed := evalledger.takes_quality_regression_v1(baseline, p_run_id, p_threshold);
        t := (seed ->> 'threshold')::numeric;
        SELECT coalesce(r.receipt_json, evalledger.takes_quality_receipt_v4(r.id)),
               ARRAY(SELECT d ->> 'key' FROM jsonb_array_elements(b.definition -> 'dimensions') WITH ORDINALITY x(d, n)
                      ORDER BY n)
          INTO now_receipt, dims
          FROM evalledger.eval_takes_quality_runs r JOIN evalledger.rubric b USING (rubric_id)
         WHERE r.id = p_run_id;
        paired := evalledger.takes_quality_paired_v1(baseline, now_receipt, dims);
        gated := ARRAY(SELECT p ->> 'dimension' FROM jsonb_array_elements(paired) p);
        seed_fails := seed ->> 'outcome' = 'regression';
        seed_inconclusive := seed ->> 'outcome' = 'inconclusive';
        -- A regression with no dimension dropped is a run cancelled or abandoned: its warning says so.
        IF seed_fails AND jsonb_array_length(seed -> 'regressed') = 0 THEN
            closed := seed -> 'warnings' ->> 0;
        END IF;
        seed_reasons := CASE WHEN closed IS NOT NULL THEN ARRAY[closed]
                             ELSE ARRAY(SELECT format('%s dropped by more than %s', x, t)
                                          FROM jsonb_array_elements_text(seed -> 'regressed') x) END;
        IF seed_inconclusive AND NOT seed_fails THEN
            seed_reasons := ARRAY['a side has no mean to compare (an inconclusive run)'];
        END IF;
    ELSIF p_suite = 'work-quality' THEN
        IF jsonb_typeof(baseline) IS DISTINCT FROM 'object' OR jsonb_typeof(current_doc) IS DISTINCT FROM 'object' THEN
            RAISE EXCEPTION 'evalledger: a work-quality gate compares two Snapshot documents'
                USING ERRCODE = 'invalid_parameter_value';
        END IF;
        policy := evalledger.work_quality_policy_v2(p_rubric_id);
        t := CASE WHEN p_threshold IS NULL OR p_threshold <= 0
                  THEN (policy ->> 'regress_tolerance')::numeric ELSE p_threshold END;
        delta := evalledger.work_quality_compare_v2(coalesce(baseline -> 'aggregate' -> 'mean_scores', '{}'),
                                                    coalesce(current_doc -> 'aggregate' -> 'mean_scores', '{}'),
                                                    baseline ->> 'run_id', policy);
        seed_reasons := evalledger.work_quality_is_regression_v2(delta, t, policy);
        seed := jsonb_build_object('comparison', delta, 'reasons', to_jsonb(seed_reasons), 'tolerance', t);
        paired := evalledger.work_quality_paired_v2(baseline, current_doc, policy);
        gated := ARRAY['overall', 'value_for_money'];
        seed_fails := cardinality(seed_reasons) > 0;
    ELSE
        RAISE EXCEPTION 'evalledger: no gate for suite %', p_suite USING ERRCODE = 'invalid_parameter_value';
    END IF;

    FOR row_ IN SELECT p FROM jsonb_array_elements(paired) p LOOP
        hit := NULL;
        IF row_ ->> 'dimension' = ANY (gated) AND p_mode <> 'default' THEN
            IF jsonb_typeof(row_ -> 'ci95') IS DISTINCT FROM 'array' THEN
                unmeasured := unmeasured || format('%s: no interval (%s shared judge%s; an interval needs 2)',
                                                   row_ ->> 'dimension', row_ ->> 'shared',
                                                   CASE WHEN row_ ->> 'shared' = '1' THEN '' ELSE 's' END);
            ELSE
                hit := CASE p_mode WHEN 'significant' THEN (row_ -> 'ci95' ->> 1)::numeric < -t
                                   ELSE (row_ -> 'ci95' ->> 0)::numeric < -t END;
                IF hit THEN
                    reasons := reasons || format('%s: 95%% CI %s to %s %s beyond -%s', row_ ->> 'dimension',
                                                 round((row_ -> 'ci95' ->> 0)::numeric, 3),
                                                 round((row_ -> 'ci95' ->> 1)::numeric, 3),
                                                 CASE p_mode WHEN 'significant' THEN 'lies wholly' ELSE 'reaches' END, t);
                END IF;
            END IF;
        END IF;
        marked := marked || jsonb_build_array(row_ || jsonb_build_object(
                      'gated', row_ ->> 'dimension' = ANY (gated), 'regressed', hit));
    END LOOP;

    IF p_mode = 'default' THEN
        decision := CASE WHEN seed_fails THEN 'fail' WHEN seed_inconclusive THEN 'inconclusive' ELSE 'pass' END;
        reasons := seed_reasons;
    ELSIF closed IS NOT NULL THEN
        decision := 'fail';
        reasons := ARRAY[closed] || reasons;
    ELSIF cardinality(reasons) > 0 THEN
        decision := 'fail';
    ELSIF cardinality(unmeasured) > 0 THEN
        decision := 'inconclusive';
        reasons := unmeasured;
    ELSE
        decision := 'pass';
    END IF;
    RETURN jsonb_build_object('mode', p_mode, 'threshold', t, 'decision', decision, 'reasons', to_jsonb(reasons),
                              'seed', seed, 'paired', marked);
END;
$$;
GRANT EXECUTE ON FUNCTION gate_decide_v2(text, text, numeric, jsonb, jsonb, bigint, bigint)
    TO evalledger_runner, evalledger_revops, evalledger_auditor;
