-- retention_purge_marker: the transaction id of a running retention_purge_v2() (deleted before it
-- returns; xids are never reused); written by that function alone. Privileges keep everyone but
-- its owner out; the policy lets that owner through FORCE.
CREATE TABLE retention_purge_marker (
    txid bigint NOT NULL,
    CONSTRAINT retention_purge_marker_pkey PRIMARY KEY (txid)
);
REVOKE ALL ON retention_purge_marker FROM PUBLIC;

CREATE POLICY retention_purge_marker_table_owner ON retention_purge_marker USING (true) WITH CHECK (true);
ALTER TABLE retention_purge_marker ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY;
