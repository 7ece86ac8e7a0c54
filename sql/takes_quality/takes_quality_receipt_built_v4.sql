-- takes_quality_receipt_built_v4: the receipt takes_quality_receipt_v4 gives, built for any run whoever
-- asks (over takes_quality_receipt_built_v3): granted to no role, so only the ledger's own functions
-- call it: takes_quality_receipt_v4 once it asked caller_reads_v1, and the completion's decision
-- (takes_quality_run_decide_v2), which writes the receipt of the run it decides whatever its age.
CREATE FUNCTION evalledger.takes_quality_receipt_built_v4(p_run_id bigint) RETURNS jsonb
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    run evalledger.eval_takes_quality_runs;
    rub evalledger.rubric;
    closed evalledger.eval_run_closure;
    receipt jsonb;
BEGIN
    SELECT c.* INTO closed FROM evalledger.eval_run_closure c WHERE c.takes_quality_run_id = p_run_id;
    IF closed.closure_id IS NULL THEN
        RETURN evalledger.takes_quality_receipt_built_v3(p_run_id);
    END IF;
    IF EXISTS (SELECT 1 FROM evalledger.eval_takes_quality_judge_verdicts v WHERE v.run_id = p_run_id) THEN
        receipt := evalledger.takes_quality_receipt_built_v3(p_run_id);
    ELSE
        SELECT * INTO run FROM evalledger.eval_takes_quality_runs r
         WHERE r.id = p_run_id;
        IF NOT FOUND THEN
            RAISE EXCEPTION 'evalledger: no takes-quality run %', p_run_id USING ERRCODE = 'no_data_found';
        END IF;
        SELECT * INTO rub FROM evalledger.rubric r WHERE r.rubric_id = run.rubric_id;
        receipt := evalledger.takes_quality_receipt_identity_v1(run, rub) || jsonb_build_object(
            'cycles_run', 0,
            'successes_per_cycle', '[]'::jsonb,
            'scores', '{}'::jsonb,
            'overall_score', NULL,
            'cost_usd', 0,
            'improvements', '[]'::jsonb,
            'errors', '[]'::jsonb,
            'judges', coalesce(run.judges, 'live'));
    END IF;
    RETURN receipt || jsonb_build_object(
        'verdict', 'fail',
        'verdictMessage', evalledger.brain_eval_abandoned_v1(closed.closure, closed.reason, closed.closed_by),
        'final', true,
        'closure', closed.closure);
END;
$$;
