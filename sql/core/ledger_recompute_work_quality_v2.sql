-- ledger_recompute_work_quality_v2: a completed work-quality run's computed columns, re-derived from
-- its verdict rows by work_quality_decide_v1, the function its completion trigger decides with (a
-- skipped judge is noted by its current row, and a call its runner lost counts its estimate). The one
-- place the ledger's recompute names work-quality's decision.
CREATE FUNCTION evalledger.ledger_recompute_work_quality_v2(snap evalledger.eval_work_quality_snapshots) RETURNS jsonb
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    s evalledger.eval_work_quality_snapshots := evalledger.work_quality_decide_v1(snap);
BEGIN
    RETURN jsonb_build_object('mean_scores', s.mean_scores, 'disagreement', s.disagreement, 'note', s.note,
                              'comparison', s.comparison, 'judges_cost_usd', s.judges_cost_usd,
                              'snapshot_json', s.snapshot_json);
END;
$$;
