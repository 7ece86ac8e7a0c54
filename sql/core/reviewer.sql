-- Human reviewers: a database role name mapped to the reviewer_user_id that runs carry.
CREATE TABLE reviewer (
    reviewer_user_id uuid        NOT NULL,
    role_name        name        NOT NULL,
    display_name     text        NOT NULL,
    created_at       timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT reviewer_pkey PRIMARY KEY (reviewer_user_id),
    CONSTRAINT reviewer_role_name_key UNIQUE (role_name)
);

-- The owner role maintains this table: INSERT, and no UPDATE, DELETE or TRUNCATE, which the
-- triggers refuse anyway but which would let it LOCK the table ACCESS EXCLUSIVE and stall every
-- reader (issue 17). Owning nothing, it can alter nothing.
GRANT INSERT ON reviewer TO evalledger_owner;

CREATE POLICY reviewer_runner ON reviewer FOR SELECT TO evalledger_runner USING (true);
GRANT SELECT ON reviewer TO evalledger_runner;

CREATE POLICY reviewer_self ON reviewer FOR SELECT TO evalledger_reviewer USING (role_name = current_user);
GRANT SELECT ON reviewer TO evalledger_reviewer;

-- The auditor reads the reviewer registry: who reviewed (display names) is part of the audit.
-- RevOps reads reviewer ids (the runs'); a reviewer reads itself (reviewer_self).
CREATE POLICY reviewer_auditor ON reviewer FOR SELECT TO evalledger_auditor USING (true);
GRANT SELECT ON reviewer TO evalledger_auditor;
