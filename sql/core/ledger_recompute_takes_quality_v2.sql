-- ledger_recompute_takes_quality_v2: a takes-quality run's receipt, re-derived from its verdict rows
-- by the function its completion trigger (takes_quality_run_decide_v2) writes it
-- with (takes_quality_receipt_v4: each judge's current row, lost calls' estimates, retried failures;
-- a run closed without completing whole decided by its closure);
-- the run's cycles_run, verdict, overall_score and cost_usd are read from it as the trigger reads
-- them. The one place the ledger's recompute names takes-quality's decision.
CREATE FUNCTION evalledger.ledger_recompute_takes_quality_v2(run_id bigint) RETURNS jsonb
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
    SELECT evalledger.takes_quality_receipt_v4(run_id)
$$;
