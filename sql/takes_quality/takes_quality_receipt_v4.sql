-- takes_quality_receipt_v4: the receipt of a run as takes_quality_receipt_v3 builds it, and for a run
-- closed without completing whole (eval_run_closure: abandoned past its rubric's deadline, or
-- cancelled by the runner; issue 37, item 2) the suite's failing decision: verdict fail, a
-- verdictMessage that begins "Abandoned:" (brain_eval_abandoned_v1, the one wording of every suite),
-- final, and the additive field closure (abandoned or cancelled) that readers filter on. What the
-- judges had answered and cost before it was closed stays in it; a run closed before any judge
-- answered has no scores, no cycles and costs 0. The function takes_quality_run_decide_v2 writes a
-- receipt with and the ledger's recompute re-derives it with (ledger_recompute_takes_quality_v2). A
-- caller reads the receipt of a run it may read (caller_reads_v1), a trigger any (as v3).
CREATE FUNCTION evalledger.takes_quality_receipt_v4(p_run_id bigint) RETURNS jsonb
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    run evalledger.eval_takes_quality_runs;
    rub evalledger.rubric;
    closed evalledger.eval_run_closure;
    receipt jsonb;
BEGIN
    SELECT c.* INTO closed FROM evalledger.eval_run_closure c WHERE c.takes_quality_run_id = p_run_id;
    IF closed.closure_id IS NULL THEN
        RETURN evalledger.takes_quality_receipt_v3(p_run_id);
    END IF;
    IF EXISTS (SELECT 1 FROM evalledger.eval_takes_quality_judge_verdicts v WHERE v.run_id = p_run_id) THEN
        receipt := evalledger.takes_quality_receipt_v3(p_run_id);
    ELSE
        SELECT * INTO run FROM evalledger.eval_takes_quality_runs r
         WHERE r.id = p_run_id AND (evalledger.caller_reads_v1(r.created_at, NULL) OR pg_trigger_depth() > 0);
        IF NOT FOUND THEN
            RAISE EXCEPTION 'evalledger: no takes-quality run %', p_run_id USING ERRCODE = 'no_data_found';
        END IF;
        SELECT * INTO rub FROM evalledger.rubric r WHERE r.rubric_id = run.rubric_id;
        receipt := jsonb_build_object(
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
            'cycles_run', 0,
            'successes_per_cycle', '[]'::jsonb,
            'scores', '{}'::jsonb,
            'overall_score', NULL,
            'cost_usd', 0,
            'improvements', '[]'::jsonb,
            'errors', '[]'::jsonb,
            'run_id', run.id,
            'seed', run.seed,
            'judges', coalesce(run.judges, 'live'),
            'rerun', coalesce(run.rerun, 0));
    END IF;
    RETURN receipt || jsonb_build_object(
        'verdict', 'fail',
        'verdictMessage', evalledger.brain_eval_abandoned_v1(closed.closure, closed.reason, closed.closed_by),
        'final', true,
        'closure', closed.closure);
END;
$$;

-- Readers read a run's receipt too, each under its own policies.
GRANT EXECUTE ON FUNCTION takes_quality_receipt_v4(bigint) TO evalledger_runner, evalledger_revops, evalledger_auditor;

-- The owner role runs what the writing roles run (its writes pass the same triggers).
GRANT EXECUTE ON FUNCTION takes_quality_receipt_v4(bigint) TO evalledger_owner;
