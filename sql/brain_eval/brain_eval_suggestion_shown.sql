-- When a reviewer first asked to see the judges' suggestions on a question (blind review: the
-- suggestions stay hidden until then); written only by brain_eval_show_suggestions_v2. The reveal
-- carries its transaction's id: the reviewer reads the suggestions only in a later transaction
-- (brain_eval_judge_suggestion_readers), so a rolled-back reveal showed nothing.
CREATE TABLE brain_eval_suggestion_shown (
    eval_run_id      uuid        NOT NULL,
    question_id      varchar(16) NOT NULL,
    reviewer_user_id uuid        NOT NULL,
    shown_by         name        NOT NULL,
    shown_at         timestamptz NOT NULL DEFAULT now(),
    run_created_at   timestamptz NOT NULL,
    shown_txid       bigint      NOT NULL DEFAULT txid_current(),
    CONSTRAINT brain_eval_suggestion_shown_pkey PRIMARY KEY (eval_run_id, question_id),
    CONSTRAINT brain_eval_suggestion_shown_question_fkey FOREIGN KEY (eval_run_id, question_id)
        REFERENCES brain_eval_question_score (eval_run_id, question_id),
    CONSTRAINT brain_eval_suggestion_shown_reviewer_fkey FOREIGN KEY (reviewer_user_id)
        REFERENCES reviewer (reviewer_user_id)
);

CREATE INDEX brain_eval_suggestion_shown_reviewer_idx ON brain_eval_suggestion_shown (reviewer_user_id);

-- The trail is written by its trigger alone, and what was shown by its function alone: not even
-- the owner role inserts into them (it holds no INSERT there).
CREATE POLICY brain_eval_suggestion_shown_reviewer ON brain_eval_suggestion_shown FOR SELECT TO evalledger_reviewer
    USING (run_created_at >= evalledger.hot_tier_start_v1()
           AND reviewer_user_id = (SELECT evalledger.reviewer_id_of_v1(current_user)));
GRANT SELECT ON brain_eval_suggestion_shown TO evalledger_reviewer;

CREATE POLICY brain_eval_suggestion_shown_revops ON brain_eval_suggestion_shown FOR SELECT TO evalledger_revops
    USING (run_created_at >= evalledger.hot_tier_start_v1());

CREATE POLICY brain_eval_suggestion_shown_auditor ON brain_eval_suggestion_shown FOR SELECT TO evalledger_auditor
    USING (true);
GRANT SELECT ON brain_eval_suggestion_shown TO evalledger_auditor;
GRANT SELECT ON brain_eval_suggestion_shown TO evalledger_revops;
