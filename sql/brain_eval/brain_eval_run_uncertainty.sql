-- Each completed brain-eval run's uncertainty beside its decision (issue 36, item 3), stored once when
-- the run completes: brain_eval_uncertainty_v1's object (per aggregate of seed 002 its estimate,
-- standard error, 95% interval, n, clusters, method, and the bound a hard criterion reads),
-- computed by the database from the run's stored question rows and rubric, never taken from input.
-- The trend panels' error bars and a run's page read it (brain_eval_intervals_v1) instead of running
-- the statistics functions for every run at every read. Only the completion trigger
-- (brain_eval_uncertainty_complete_v1) writes it (no role holds INSERT), and every column is its:
-- append-only, journalled, aged with its run (the run's tier clock), and re-derived by the ledger's
-- recompute (ledger_recompute_v3).
CREATE TABLE brain_eval_run_uncertainty (
    eval_run_id      uuid        NOT NULL,
    uncertainty      jsonb       NOT NULL,
    reviewer_user_id uuid        NOT NULL,
    created_at       timestamptz NOT NULL DEFAULT now(),
    run_created_at   timestamptz NOT NULL,
    CONSTRAINT brain_eval_run_uncertainty_pkey PRIMARY KEY (eval_run_id),
    CONSTRAINT brain_eval_run_uncertainty_run_fkey FOREIGN KEY (eval_run_id) REFERENCES brain_eval_log (eval_run_id),
    CONSTRAINT brain_eval_run_uncertainty_object CHECK (jsonb_typeof(uncertainty) = 'object')
);

COMMENT ON TABLE brain_eval_run_uncertainty IS
    'Each completed brain-eval run''s uncertainty (brain_eval_uncertainty_v1 of its question rows), computed by the database once at completion; read by brain_eval_intervals_v1.';

-- The same readers as the run's own row, by the same tier clock (the run's).
CREATE POLICY brain_eval_run_uncertainty_runner ON brain_eval_run_uncertainty FOR SELECT TO evalledger_runner
    USING (run_created_at >= evalledger.hot_tier_start_v1());

CREATE POLICY brain_eval_run_uncertainty_reviewer ON brain_eval_run_uncertainty FOR SELECT TO evalledger_reviewer
    USING (run_created_at >= evalledger.hot_tier_start_v1()
           AND reviewer_user_id = (SELECT evalledger.reviewer_id_of_v1(current_user)));

CREATE POLICY brain_eval_run_uncertainty_revops ON brain_eval_run_uncertainty FOR SELECT TO evalledger_revops
    USING (run_created_at >= evalledger.hot_tier_start_v1());

CREATE POLICY brain_eval_run_uncertainty_auditor ON brain_eval_run_uncertainty FOR SELECT TO evalledger_auditor
    USING (true);
GRANT SELECT ON brain_eval_run_uncertainty
    TO evalledger_runner, evalledger_reviewer, evalledger_revops, evalledger_auditor;

CALL guard_append_only_v1(ARRAY['brain_eval_run_uncertainty:UPDATE OR DELETE:refuse_change_v3']);
