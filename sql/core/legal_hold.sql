-- What a legal hold keeps past the purge horizon: a run, a brain, or a range of the tier clock;
-- exactly one. Insert-only: a hold is never re-pointed or edited; it is placed unreleased and
-- released by a row of legal_hold_release, with who and when. Who placed it is the database's to say.
CREATE TABLE legal_hold (
    hold_id     bigint      GENERATED ALWAYS AS IDENTITY,
    eval_run_id uuid,
    reason      text        NOT NULL,
    placed_at   timestamptz NOT NULL DEFAULT now(),
    released_at timestamptz,
    target_id   varchar(16),
    held_from   timestamptz,
    held_to     timestamptz,
    placed_by   name        NOT NULL DEFAULT session_user,
    CONSTRAINT legal_hold_pkey PRIMARY KEY (hold_id),
    CONSTRAINT legal_hold_run_fkey FOREIGN KEY (eval_run_id) REFERENCES brain_eval_log (eval_run_id),
    CONSTRAINT legal_hold_target_fkey FOREIGN KEY (target_id) REFERENCES target (target_id),
    CONSTRAINT legal_hold_one_scope CHECK (
        num_nonnulls(eval_run_id, target_id, held_from) = 1 AND (held_from IS NULL) = (held_to IS NULL)),
    CONSTRAINT legal_hold_range_ordered CHECK (held_from <= held_to),
    CONSTRAINT legal_hold_reason_not_blank CHECK (btrim(reason) <> ''),
    CONSTRAINT legal_hold_released_by_a_release_row CHECK (released_at IS NULL)
);

CREATE INDEX legal_hold_run_idx ON legal_hold (eval_run_id);

-- The owner role maintains this table: INSERT, and no UPDATE, DELETE or TRUNCATE, which the
-- triggers refuse anyway but which would let it LOCK the table ACCESS EXCLUSIVE and stall every
-- reader (issue 17). Owning nothing, it can alter nothing.
GRANT INSERT ON legal_hold TO evalledger_owner;

CREATE POLICY legal_hold_auditor ON legal_hold FOR SELECT TO evalledger_auditor USING (true);
GRANT SELECT ON legal_hold TO evalledger_auditor;
