-- One explicit, audited import of historical runs: a run that started more than a day before it
-- is recorded names the import made in its own transaction (brain_eval_log_admit_v2), so a
-- backdated run is never an accident and always says who brought it in, when and why.
CREATE TABLE brain_eval_import (
    import_id   bigint      GENERATED ALWAYS AS IDENTITY,
    reason      text        NOT NULL,
    source_file text,
    imported_by name        NOT NULL DEFAULT session_user,
    txid        bigint      NOT NULL DEFAULT txid_current(),
    created_at  timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT brain_eval_import_pkey PRIMARY KEY (import_id),
    CONSTRAINT brain_eval_import_reason_not_blank CHECK (btrim(reason) <> '' AND reason !~ '[[:cntrl:]]'),
    CONSTRAINT brain_eval_import_source_file_not_blank CHECK (btrim(source_file) <> '')
);

CREATE INDEX brain_eval_import_txid_idx ON brain_eval_import (txid);

-- The owner role maintains this table: INSERT, and no UPDATE, DELETE or TRUNCATE, which the
-- triggers refuse anyway but which would let it LOCK the table ACCESS EXCLUSIVE and stall every
-- reader (issue 17). Owning nothing, it can alter nothing.
GRANT INSERT ON brain_eval_import TO evalledger_owner;

CREATE POLICY brain_eval_import_auditor ON brain_eval_import FOR SELECT TO evalledger_auditor USING (true);
GRANT SELECT ON brain_eval_import TO evalledger_auditor;
