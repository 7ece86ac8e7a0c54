-- capture_purge_marker: the transaction id of a running retention_purge_v2() while it drops capture
-- partitions and deletes capture keys (deleted before it returns; xids are never reused); written
-- by that function alone.
CREATE TABLE evalledger.capture_purge_marker (
    txid bigint NOT NULL,
    CONSTRAINT capture_purge_marker_pkey PRIMARY KEY (txid)
);
REVOKE ALL ON evalledger.capture_purge_marker FROM PUBLIC;

-- Privileges keep everyone but this table's owner out; the policy lets that owner through FORCE.
CREATE POLICY capture_purge_marker_table_owner ON evalledger.capture_purge_marker
    USING (true) WITH CHECK (true);
ALTER TABLE evalledger.capture_purge_marker ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY;
