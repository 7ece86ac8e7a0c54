-- Who entered each reviewer value of a question row, when, and acting as which role: one row per
-- field changed, written only by the question row's own trigger (brain_eval_review_trail_v1).
CREATE TABLE brain_eval_review_entry (
    entry_id         bigint      GENERATED ALWAYS AS IDENTITY,
    eval_run_id      uuid        NOT NULL,
    question_id      varchar(16) NOT NULL,
    field            text        NOT NULL,
    value            jsonb       NOT NULL,
    reviewer_user_id uuid        NOT NULL,
    acting_role      name        NOT NULL,
    entered_by       name        NOT NULL,
    entered_at       timestamptz NOT NULL DEFAULT now(),
    -- Whether the judges' suggestions for this question had been shown to the reviewer before.
    suggestions_shown boolean    NOT NULL,
    run_created_at   timestamptz NOT NULL,
    CONSTRAINT brain_eval_review_entry_pkey PRIMARY KEY (entry_id),
    CONSTRAINT brain_eval_review_entry_question_fkey FOREIGN KEY (eval_run_id, question_id)
        REFERENCES brain_eval_question_score (eval_run_id, question_id),
    CONSTRAINT brain_eval_review_entry_reviewer_fkey FOREIGN KEY (reviewer_user_id) REFERENCES reviewer (reviewer_user_id),
    CONSTRAINT brain_eval_review_entry_field_known CHECK (field IN (
        'hallucinations_detected', 'total_claims', 'staleness_correctly_recognized', 'diagnosis_accuracy_score',
        'narrative_coherence_rating', 'reviewer_comments'))
);

-- Foreign keys that the seed does not index but joins and the purge walk.
CREATE INDEX brain_eval_review_entry_question_idx ON brain_eval_review_entry (eval_run_id, question_id, entered_at);

-- The reviewer reads the trail of its own entries and signs off its own runs (hours, notes).
CREATE POLICY brain_eval_review_entry_reviewer ON brain_eval_review_entry FOR SELECT TO evalledger_reviewer
    USING (run_created_at >= evalledger.hot_tier_start_v1()
           AND reviewer_user_id = (SELECT evalledger.reviewer_id_of_v1(current_user)));
GRANT SELECT ON brain_eval_review_entry TO evalledger_reviewer;

CREATE POLICY brain_eval_review_entry_revops ON brain_eval_review_entry FOR SELECT TO evalledger_revops
    USING (run_created_at >= evalledger.hot_tier_start_v1());

CREATE POLICY brain_eval_review_entry_auditor ON brain_eval_review_entry FOR SELECT TO evalledger_auditor USING (true);
GRANT SELECT ON brain_eval_review_entry TO evalledger_revops, evalledger_auditor;
