-- How a brain-eval run that was not completed whole was closed (issue 37, item 2): abandoned (open
-- past its rubric's deadline, closed by the database) or cancelled (by the runner, with a reason).
-- A stored input, so the ledger's recompute re-derives the decision the closure made
-- (brain_eval_decide_v2 reads it). Only the closing functions write it (no role holds INSERT), and
-- every column is theirs: who closed it and when are the database's.
CREATE TABLE brain_eval_run_closure (
    eval_run_id      uuid        NOT NULL,
    closure          text        NOT NULL,
    reason           text        NOT NULL,
    closed_by        name        NOT NULL,
    reviewer_user_id uuid        NOT NULL,
    created_at       timestamptz NOT NULL DEFAULT now(),
    run_created_at   timestamptz NOT NULL,
    CONSTRAINT brain_eval_run_closure_pkey PRIMARY KEY (eval_run_id),
    CONSTRAINT brain_eval_run_closure_run_fkey FOREIGN KEY (eval_run_id) REFERENCES brain_eval_log (eval_run_id),
    CONSTRAINT brain_eval_run_closure_kind CHECK (closure IN ('abandoned', 'cancelled')),
    CONSTRAINT brain_eval_run_closure_reason_given CHECK (reason ~ '\S')
);

-- The same readers as the run's own row, by the same tier clock (the run's).
CREATE POLICY brain_eval_run_closure_runner ON brain_eval_run_closure FOR SELECT TO evalledger_runner
    USING (run_created_at >= evalledger.hot_tier_start_v1());

CREATE POLICY brain_eval_run_closure_reviewer ON brain_eval_run_closure FOR SELECT TO evalledger_reviewer
    USING (run_created_at >= evalledger.hot_tier_start_v1()
           AND reviewer_user_id = (SELECT evalledger.reviewer_id_of_v1(current_user)));

CREATE POLICY brain_eval_run_closure_revops ON brain_eval_run_closure FOR SELECT TO evalledger_revops
    USING (run_created_at >= evalledger.hot_tier_start_v1());

CREATE POLICY brain_eval_run_closure_auditor ON brain_eval_run_closure FOR SELECT TO evalledger_auditor USING (true);
GRANT SELECT ON brain_eval_run_closure TO evalledger_runner, evalledger_reviewer, evalledger_revops, evalledger_auditor;

CALL guard_append_only_v1(ARRAY['brain_eval_run_closure:UPDATE OR DELETE:refuse_change_v3']);
