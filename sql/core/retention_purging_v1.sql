-- retention_purging_v1: true inside a retention_purge_v2() call of the current transaction (its
-- marker row, keyed by the transaction id, which only that function writes).
CREATE FUNCTION evalledger.retention_purging_v1() RETURNS boolean
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
    SELECT EXISTS (SELECT 1 FROM evalledger.retention_purge_marker m
                    WHERE m.txid = txid_current_if_assigned())
$$;
