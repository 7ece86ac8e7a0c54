-- The capture retention purge v1: the one deliberate way capture rows leave the database.
-- Installed by migrations/0004.capture.sql as the user who migrates (a superuser where the DDL
-- event triggers exist), after RESET ROLE: these objects belong to that user, not to
-- evalledger_owner, so the owner (and every role it is granted to for migrating) cannot write the
-- marker and cannot purge. What the purge allows, exactly:
--   * DROP of an eval_candidates monthly partition whose whole month ended more than
--     capture_retention_v1() (7 years) ago, with the triggers on it (drop_guard_v2 checks each
--     dropped object against that rule, not only the marker);
--   * DELETE of eval_capture_failures rows recorded, and eval_candidate_keys rows created, before
--     that horizon (capture_refuse_change_v1 checks the age of every row).
-- Nothing younger, no other table, and no UPDATE or TRUNCATE. The marker is a row keyed by the
-- purging transaction's id, deleted before the function returns; xids are never reused.

-- =============================================================================================
-- Marker
-- =============================================================================================
-- capture_purge_marker: the transaction id of a running capture_purge_v1(); written by that function alone.
CREATE TABLE evalledger.capture_purge_marker (
    txid bigint NOT NULL,
    CONSTRAINT capture_purge_marker_pkey PRIMARY KEY (txid)
);
REVOKE ALL ON evalledger.capture_purge_marker FROM PUBLIC;
-- Privileges keep everyone but this table's owner out; the policy lets that owner through FORCE.
CREATE POLICY capture_purge_marker_table_owner ON evalledger.capture_purge_marker
    USING (true) WITH CHECK (true);
ALTER TABLE evalledger.capture_purge_marker ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY;

-- capture_purging_v1: true inside a capture_purge_v1() call of the current transaction.
CREATE FUNCTION evalledger.capture_purging_v1() RETURNS boolean
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = evalledger, pg_catalog, pg_temp AS $$
    SELECT EXISTS (SELECT 1 FROM evalledger.capture_purge_marker m
                    WHERE m.txid = txid_current_if_assigned())
$$;

-- =============================================================================================
-- Purge
-- =============================================================================================
-- capture_purge_v1: drop the eval_candidates partitions past the retention horizon and delete the failure and key rows past it; returns what went and how many rows.
CREATE FUNCTION evalledger.capture_purge_v1() RETURNS TABLE (purged text, row_count bigint)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = evalledger, pg_catalog, pg_temp AS $$
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
        EXECUTE format('SELECT count(*) FROM evalledger.%I', part) INTO row_count;
        EXECUTE format('DROP TABLE evalledger.%I', part);
        purged := part;
        RETURN NEXT;
    END LOOP;
    DELETE FROM evalledger.eval_candidate_keys
     WHERE created_at < now() - evalledger.capture_retention_v1();
    GET DIAGNOSTICS row_count = ROW_COUNT;
    purged := 'eval_candidate_keys';
    RETURN NEXT;
    DELETE FROM evalledger.eval_capture_failures
     WHERE recorded_at < now() - evalledger.capture_retention_v1();
    GET DIAGNOSTICS row_count = ROW_COUNT;
    purged := 'eval_capture_failures';
    RETURN NEXT;
    DELETE FROM evalledger.capture_purge_marker WHERE txid = txid_current();
END;
$$;
