-- When a reviewer was first shown a question's reference answer; written only by
-- brain_eval_show_reference_v2, readable through brain_eval_reference_v2 only in a transaction
-- after the one that wrote it. entries_before: the question's last trail entry then, so every
-- reviewer value entered after seeing the reference is an entry with a higher entry_id.
CREATE TABLE brain_eval_reference_shown (
    eval_run_id      uuid        NOT NULL,
    question_id      varchar(16) NOT NULL,
    reviewer_user_id uuid        NOT NULL,
    shown_by         name        NOT NULL,
    shown_at         timestamptz NOT NULL DEFAULT now(),
    shown_txid       bigint      NOT NULL,
    entries_before   bigint      NOT NULL,
    run_created_at   timestamptz NOT NULL,
    CONSTRAINT brain_eval_reference_shown_pkey PRIMARY KEY (eval_run_id, question_id),
    -- The one CASCADE: the row goes with its question row, inside the purge only (the guard).
    CONSTRAINT brain_eval_reference_shown_question_fkey FOREIGN KEY (eval_run_id, question_id)
        REFERENCES brain_eval_question_score (eval_run_id, question_id) ON DELETE CASCADE,
    CONSTRAINT brain_eval_reference_shown_reviewer_fkey FOREIGN KEY (reviewer_user_id)
        REFERENCES reviewer (reviewer_user_id),
    CONSTRAINT brain_eval_reference_shown_entries_not_negative CHECK (entries_before >= 0)
);

CREATE INDEX brain_eval_reference_shown_reviewer_idx ON brain_eval_reference_shown (reviewer_user_id);

CREATE INDEX brain_eval_reference_shown_run_created_idx ON brain_eval_reference_shown (run_created_at);

-- Who reads what was shown: the reviewer its own (hot tier), RevOps the hot tier, auditors everything.
CREATE POLICY brain_eval_reference_shown_reviewer ON brain_eval_reference_shown FOR SELECT TO evalledger_reviewer
    USING (run_created_at >= evalledger.hot_tier_start_v1()
           AND reviewer_user_id = (SELECT evalledger.reviewer_id_of_v1(current_user)));

CREATE POLICY brain_eval_reference_shown_revops ON brain_eval_reference_shown FOR SELECT TO evalledger_revops
    USING (run_created_at >= evalledger.hot_tier_start_v1());

CREATE POLICY brain_eval_reference_shown_auditor ON brain_eval_reference_shown FOR SELECT TO evalledger_auditor
    USING (true);
GRANT SELECT ON brain_eval_reference_shown TO evalledger_reviewer, evalledger_revops, evalledger_auditor;
