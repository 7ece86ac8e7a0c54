-- Who tunes each brain's prompt; readable by the owner alone, consulted by the independence check.
CREATE TABLE prompt_tuner (
    target_id     varchar(16) NOT NULL,
    user_id       uuid        NOT NULL,
    registered_at timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT prompt_tuner_pkey PRIMARY KEY (target_id, user_id),
    CONSTRAINT prompt_tuner_target_fkey FOREIGN KEY (target_id) REFERENCES target (target_id)
);

-- The owner role maintains this table: INSERT, and no UPDATE, DELETE or TRUNCATE, which the
-- triggers refuse anyway but which would let it LOCK the table ACCESS EXCLUSIVE and stall every
-- reader (issue 17). Owning nothing, it can alter nothing.
GRANT INSERT ON prompt_tuner TO evalledger_owner;
