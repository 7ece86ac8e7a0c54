-- What is under test: a brain, bot or feature is a row here, not a CHECK list.
CREATE TABLE target (
    target_id    varchar(16) NOT NULL,
    kind         text        NOT NULL,
    display_name text        NOT NULL,
    model_family text,
    created_at   timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT target_pkey PRIMARY KEY (target_id),
    CONSTRAINT target_id_format CHECK (target_id ~ '^[A-Za-z0-9][A-Za-z0-9._-]{0,15}$'),
    CONSTRAINT target_kind_known CHECK (kind IN ('brain', 'bot', 'feature', 'corpus'))
);

-- The owner role maintains this table: INSERT, and no UPDATE, DELETE or TRUNCATE, which the
-- triggers refuse anyway but which would let it LOCK the table ACCESS EXCLUSIVE and stall every
-- reader (issue 17). Owning nothing, it can alter nothing.
GRANT INSERT ON target TO evalledger_owner;

-- Reference data every reading role needs.
CREATE POLICY target_read ON target FOR SELECT
    TO evalledger_runner, evalledger_reviewer, evalledger_revops, evalledger_auditor USING (true);
GRANT SELECT ON target TO evalledger_runner, evalledger_reviewer, evalledger_revops, evalledger_auditor;
