-- The reviewer's own account of a run before it completes: the hours spent (self-reported, seed
-- 002) and calibration notes per dimension. Append-only; the latest row is the sign-off that
-- completion requires and copies onto the run (brain_eval_log_decide_v2).
CREATE TABLE brain_eval_run_review (
    review_id            bigint       GENERATED ALWAYS AS IDENTITY,
    eval_run_id          uuid         NOT NULL,
    reviewer_hours_spent numeric(5,2) NOT NULL,
    calibration_notes    jsonb,
    reviewer_user_id     uuid         NOT NULL,
    entered_by           name         NOT NULL,
    created_at           timestamptz  NOT NULL DEFAULT now(),
    run_created_at       timestamptz  NOT NULL,
    CONSTRAINT brain_eval_run_review_pkey PRIMARY KEY (review_id),
    CONSTRAINT brain_eval_run_review_run_fkey FOREIGN KEY (eval_run_id) REFERENCES brain_eval_log (eval_run_id),
    CONSTRAINT brain_eval_run_review_reviewer_fkey FOREIGN KEY (reviewer_user_id) REFERENCES reviewer (reviewer_user_id),
    CONSTRAINT brain_eval_run_review_hours_range CHECK (reviewer_hours_spent >= 0),
    CONSTRAINT brain_eval_run_review_reviewer_hours_spent_finite CHECK (finite_v1(reviewer_hours_spent)),
    -- Notes per dimension: an object of non-blank strings (the admit trigger checks the keys).
    CONSTRAINT brain_eval_run_review_notes_shape CHECK (
        jsonb_typeof(calibration_notes) = 'object'
        AND NOT jsonb_path_exists(calibration_notes, '$.* ? (@.type() != "string" || @ like_regex "^\\s*$")'))
);

CREATE INDEX brain_eval_run_review_run_idx ON brain_eval_run_review (eval_run_id, created_at DESC);

CREATE POLICY brain_eval_run_review_reviewer ON brain_eval_run_review TO evalledger_reviewer
    USING (run_created_at >= evalledger.hot_tier_start_v1()
           AND reviewer_user_id = (SELECT evalledger.reviewer_id_of_v1(current_user))) WITH CHECK (true);
GRANT SELECT ON brain_eval_run_review TO evalledger_reviewer;

-- Table-wide INSERT: every column but the run, hours and notes is the admit trigger's.
GRANT INSERT ON brain_eval_run_review TO evalledger_reviewer;

CREATE POLICY brain_eval_run_review_revops ON brain_eval_run_review FOR SELECT TO evalledger_revops
    USING (run_created_at >= evalledger.hot_tier_start_v1());

CREATE POLICY brain_eval_run_review_auditor ON brain_eval_run_review FOR SELECT TO evalledger_auditor USING (true);
GRANT SELECT ON brain_eval_run_review TO evalledger_revops, evalledger_auditor;
