-- capture_purge_v1: the one deliberate way capture rows leave the database (docs/guards.md): drop
-- the eval_candidates partitions whose whole month is past the purge horizon (drop_guard_v1 checks
-- each dropped object against that rule, not only the marker) and delete the failure and key rows
-- recorded before it (capture_refuse_change_v1 checks each row's age); nothing younger, no other
-- table, no UPDATE or TRUNCATE. The code role's, executable by no application role, so the
-- owner role can neither write the marker nor purge. Returns what went and how many rows.
CREATE FUNCTION evalledger.capture_purge_v1() RETURNS TABLE (purged text, row_count bigint)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    part text;
BEGIN
    INSERT INTO evalledger.capture_purge_marker (txid) VALUES (txid_current());
    FOR part IN
        SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
         WHERE i.inhparent = 'evalledger.eval_candidates'::regclass
           AND evalledger.capture_partition_expired_v1(c.relname)
         ORDER BY c.relname
    LOOP
        -- Counted through the parent: a partition has no policy of its own, so FORCE hides its rows.
        SELECT count(*) INTO row_count FROM evalledger.eval_candidates c
         WHERE c.tableoid = ('evalledger.' || quote_ident(part))::regclass;
        EXECUTE format('DROP TABLE evalledger.%I', part);
        purged := part;
        RETURN NEXT;
    END LOOP;
    DELETE FROM evalledger.eval_candidate_keys
     WHERE created_at < now() - evalledger.purge_horizon_v1();
    GET DIAGNOSTICS row_count = ROW_COUNT;
    purged := 'eval_candidate_keys';
    RETURN NEXT;
    DELETE FROM evalledger.eval_capture_failures
     WHERE recorded_at < now() - evalledger.purge_horizon_v1();
    GET DIAGNOSTICS row_count = ROW_COUNT;
    purged := 'eval_capture_failures';
    RETURN NEXT;
    DELETE FROM evalledger.capture_purge_marker WHERE txid = txid_current();
END;
$$;
