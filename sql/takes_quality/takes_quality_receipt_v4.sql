-- takes_quality_receipt_v4: the receipt of a run as takes_quality_receipt_v3 builds it, and for a run
-- closed without completing whole (eval_run_closure: abandoned past its rubric's deadline, or
-- cancelled by the runner; issue 37, item 2) the suite's failing decision: verdict fail, a
-- verdictMessage that begins "Abandoned:" (brain_eval_abandoned_v1, the one wording of every suite),
-- final, and the additive field closure (abandoned or cancelled) that readers filter on. What the
-- judges had answered and cost before it was closed stays in it; a run closed before any judge
-- answered has no scores, no cycles and costs 0. The function takes_quality_run_decide_v2 writes a
-- receipt with and the ledger's recompute re-derives it with (ledger_recompute_takes_quality_v2). A
-- caller reads the receipt of a run it may read (caller_reads_v1); takes_quality_receipt_built_v4
-- builds it.
CREATE FUNCTION evalledger.takes_quality_receipt_v4(p_run_id bigint) RETURNS jsonb
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM evalledger.eval_takes_quality_runs r
                    WHERE r.id = p_run_id AND evalledger.caller_reads_v1(r.created_at, NULL)) THEN
        RAISE EXCEPTION 'evalledger: no takes-quality run %', p_run_id USING ERRCODE = 'no_data_found';
    END IF;
    RETURN evalledger.takes_quality_receipt_built_v4(p_run_id);
END;
$$;

-- Readers read a run's receipt too, each under its own policies.
GRANT EXECUTE ON FUNCTION takes_quality_receipt_v4(bigint) TO evalledger_runner, evalledger_revops, evalledger_auditor;

-- The owner role runs what the writing roles run (its writes pass the same triggers).
GRANT EXECUTE ON FUNCTION takes_quality_receipt_v4(bigint) TO evalledger_owner;
