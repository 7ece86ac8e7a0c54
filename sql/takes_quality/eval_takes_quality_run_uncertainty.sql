-- Each completed takes-quality run's uncertainty beside its verdict (issue 36, item 3), stored once
-- when the run completes: takes_quality_uncertainty_v1's object (per rubric dimension and the overall
-- its estimate, standard error, 95% interval, n, clusters, method, and per dimension the variance of
-- a judge's score between calls), computed by the database from the run's stored verdict rows and
-- rubric, never taken from input. `takes-quality show`, the receipt's optional stderr and ci95, the
-- intervals view (takes_quality_intervals_v1) and the trend's error bars read it instead of running
-- the statistics functions for every run at every read. Only the completion trigger
-- (takes_quality_uncertainty_complete_v1) writes it (no role holds INSERT), and every column is its:
-- append-only, journalled, aged with its run (the run's tier clock), and re-derived by the ledger's
-- recompute (ledger_recompute_v3).
CREATE TABLE eval_takes_quality_run_uncertainty (
    run_id         bigint      NOT NULL,
    uncertainty    jsonb       NOT NULL,
    created_at     timestamptz NOT NULL DEFAULT now(),
    run_created_at timestamptz NOT NULL,
    CONSTRAINT eval_takes_quality_run_uncertainty_pkey PRIMARY KEY (run_id),
    CONSTRAINT eval_takes_quality_run_uncertainty_run_fkey FOREIGN KEY (run_id) REFERENCES eval_takes_quality_runs (id),
    CONSTRAINT eval_takes_quality_run_uncertainty_object CHECK (jsonb_typeof(uncertainty) = 'object')
);

COMMENT ON TABLE eval_takes_quality_run_uncertainty IS
    'Each completed takes-quality run''s uncertainty (takes_quality_uncertainty_v1 of its verdict rows), computed by the database once at completion; read by takes_quality_intervals_v1, `takes-quality show` and the receipt''s stderr and ci95.';

-- The same readers as the run's own row, by the same tier clock (the run's).
CREATE POLICY eval_takes_quality_run_uncertainty_runner ON eval_takes_quality_run_uncertainty FOR SELECT
    TO evalledger_runner USING (run_created_at >= evalledger.hot_tier_start_v1());

CREATE POLICY eval_takes_quality_run_uncertainty_revops ON eval_takes_quality_run_uncertainty FOR SELECT
    TO evalledger_revops USING (run_created_at >= evalledger.hot_tier_start_v1());

CREATE POLICY eval_takes_quality_run_uncertainty_auditor ON eval_takes_quality_run_uncertainty FOR SELECT
    TO evalledger_auditor USING (true);
GRANT SELECT ON eval_takes_quality_run_uncertainty TO evalledger_runner, evalledger_revops, evalledger_auditor;

CALL guard_append_only_v1(ARRAY['eval_takes_quality_run_uncertainty:UPDATE OR DELETE:refuse_change_v3']);
