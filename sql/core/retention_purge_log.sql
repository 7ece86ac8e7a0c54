-- What the purge deleted: one row per table and run (or capture partition) per purge, stamped by
-- the database with who and when. Append-only and never purged; auditors read it.
CREATE TABLE retention_purge_log (
    purge_log_id   bigint      GENERATED ALWAYS AS IDENTITY,
    purged_at      timestamptz NOT NULL DEFAULT now(),
    purged_by      name        NOT NULL DEFAULT session_user,
    txid           bigint      NOT NULL DEFAULT txid_current(),
    table_name     text        NOT NULL,
    row_count      bigint      NOT NULL,
    eval_run_id    uuid,
    partition_name text,
    CONSTRAINT retention_purge_log_pkey PRIMARY KEY (purge_log_id),
    CONSTRAINT retention_purge_log_row_count_positive CHECK (row_count >= 0)
);

CREATE INDEX retention_purge_log_txid_idx ON retention_purge_log (txid);

-- The purge log: auditors read it.
CREATE POLICY retention_purge_log_auditor ON retention_purge_log FOR SELECT TO evalledger_auditor USING (true);
GRANT SELECT ON retention_purge_log TO evalledger_auditor;
