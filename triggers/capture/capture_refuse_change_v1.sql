-- capture_refuse_change_v1: the append-only guard of the capture tables. UPDATE and TRUNCATE are
-- always refused. DELETE passes only inside the retention purge (retention_purge_v2, through its
-- transaction-local capture marker) and only for a failure or key row recorded before the purge
-- horizon, counted in UTC from the statement's clock (purge_horizon_at_v1) as the purge counts it;
-- captured rows themselves leave only with their whole monthly partition.
CREATE FUNCTION evalledger.capture_refuse_change_v1() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    IF TG_OP = 'DELETE' AND TG_TABLE_NAME IN ('eval_capture_failures', 'eval_candidate_keys')
       AND evalledger.capture_purging_v1()
       AND (to_jsonb(OLD) ->> CASE TG_TABLE_NAME WHEN 'eval_capture_failures' THEN 'recorded_at'
                                                 ELSE 'created_at' END)::timestamptz
           < evalledger.purge_horizon_at_v1() THEN
        RETURN OLD;
    END IF;
    RAISE EXCEPTION 'evalledger: % is append-only: % refused', TG_TABLE_NAME, TG_OP
        USING ERRCODE = 'insufficient_privilege',
              HINT = 'capture rows leave only through the retention purge (evalledger retention apply), past the purge horizon';
END;
$$;

-- Append-only: every UPDATE a table does not explicitly allow (a run's or snapshot's completion),
-- every DELETE but the retention purge's (refuse_change_v3: inside retention_purge_v2, past the
-- horizon in UTC, under no hold, a brain's hold by the prompt), and every TRUNCATE are refused, for
-- every role. The journal's own tables and the run claims are never due (retention_due_v2 knows no
-- clock of theirs), so every change of theirs is refused. Row triggers are cloned
-- onto partitions; TRUNCATE triggers are not, so capture_ensure_partitions_v2 gives each capture
-- partition its own (capture_refuse_change_v1: capture rows leave with their partition).
CALL guard_append_only_v1(ARRAY[
    'eval_candidates:UPDATE OR DELETE:capture_refuse_change_v1']);
