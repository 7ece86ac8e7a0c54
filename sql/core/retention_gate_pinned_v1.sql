-- retention_gate_pinned_v1: true when the takes-quality run a gate decision decided about
-- (eval_gate_decision.run_id) is still in the ledger and not due for purge: recorded inside the purge
-- horizon (purge_horizon_at_v1, UTC, the statement's clock), or under a hold of its brain or of a range
-- holding its tier clock (retention_held_v2). The decision stays while its run stays; a kept decision
-- never pins its run (it keeps its comparison and the run's id, as a kept work-quality snapshot keeps
-- the previous one's). NULL run (a work-quality gate, two documents): false. The one home of that
-- rule for the purge, its guard and the plan.
CREATE FUNCTION evalledger.retention_gate_pinned_v1(run bigint) RETURNS boolean
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
    SELECT EXISTS (
        SELECT 1 FROM evalledger.eval_takes_quality_runs t
         WHERE t.id = run
           AND (t.created_at >= evalledger.purge_horizon_at_v1()
                OR evalledger.retention_held_v2(t.created_at, ARRAY[t.target_id::text], NULL)))
$$;
