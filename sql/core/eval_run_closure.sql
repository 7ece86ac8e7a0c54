-- How a takes-quality run or a work-quality snapshot that was not completed whole was closed
-- (issue 37, item 2), as brain_eval_run_closure says it of a brain-eval run: abandoned (open past
-- its rubric's deadline, closed by the database) or cancelled (by the runner, with a reason). One
-- table for both suites, a row naming the one run it closes (takes_quality_run_id or snapshot_id,
-- as suite says). A stored input, so the ledger's recompute re-derives what the closure decided
-- (takes_quality_receipt_v4, ledger_recompute_work_quality_v2 read it). Only the closing function
-- (eval_run_close_v1) writes it (no role holds INSERT), and every column is its: who closed it and
-- when are the database's.
CREATE TABLE eval_run_closure (
    closure_id           bigint      GENERATED ALWAYS AS IDENTITY,
    suite                text        NOT NULL,
    takes_quality_run_id bigint,
    snapshot_id          bigint,
    closure              text        NOT NULL,
    reason               text        NOT NULL,
    closed_by            name        NOT NULL,
    created_at           timestamptz NOT NULL DEFAULT now(),
    run_created_at       timestamptz NOT NULL,
    CONSTRAINT eval_run_closure_pkey PRIMARY KEY (closure_id),
    CONSTRAINT eval_run_closure_takes_quality_key UNIQUE (takes_quality_run_id),
    CONSTRAINT eval_run_closure_snapshot_key UNIQUE (snapshot_id),
    CONSTRAINT eval_run_closure_takes_quality_fkey FOREIGN KEY (takes_quality_run_id)
        REFERENCES eval_takes_quality_runs (id),
    CONSTRAINT eval_run_closure_snapshot_fkey FOREIGN KEY (snapshot_id)
        REFERENCES eval_work_quality_snapshots (snapshot_id),
    CONSTRAINT eval_run_closure_suite_names_its_run CHECK (
        (suite = 'takes-quality' AND takes_quality_run_id IS NOT NULL AND snapshot_id IS NULL)
        OR (suite = 'work-quality' AND snapshot_id IS NOT NULL AND takes_quality_run_id IS NULL)),
    CONSTRAINT eval_run_closure_kind CHECK (closure IN ('abandoned', 'cancelled')),
    CONSTRAINT eval_run_closure_reason_given CHECK (reason ~ '\S')
);

-- The same readers as the runs' own rows, by the same tier clock (the run's).
CREATE POLICY eval_run_closure_runner ON eval_run_closure FOR SELECT TO evalledger_runner
    USING (run_created_at >= evalledger.hot_tier_start_v1());

CREATE POLICY eval_run_closure_revops ON eval_run_closure FOR SELECT TO evalledger_revops
    USING (run_created_at >= evalledger.hot_tier_start_v1());

CREATE POLICY eval_run_closure_auditor ON eval_run_closure FOR SELECT TO evalledger_auditor USING (true);
GRANT SELECT ON eval_run_closure TO evalledger_runner, evalledger_revops, evalledger_auditor;

CALL guard_append_only_v1(ARRAY['eval_run_closure:UPDATE OR DELETE:refuse_change_v3']);
