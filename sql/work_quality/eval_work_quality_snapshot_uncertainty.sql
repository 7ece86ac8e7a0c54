-- Each completed work-quality snapshot's uncertainty beside its comparison (issue 36, item 3), stored
-- once when the snapshot completes (a judged run's completion, or an imported history file's
-- admission, which completes it at once): work_quality_uncertainty_v1's object (per dimension the
-- judges' mean, its standard error, 95% interval, n, clusters and method), computed by the database
-- from the snapshot's stored document and the work-quality rubric's scale, never taken from input.
-- `snapshot show RUN_ID`, the Snapshot JSON's optional stderr and ci95 (`--uncertainty`), the
-- intervals view (work_quality_intervals_v1) and the history's error bars read it instead of running
-- the statistics function for every snapshot at every read. Only the completion triggers
-- (work_quality_uncertainty_complete_v1) write it (no role holds INSERT), and every column is theirs:
-- append-only, journalled, aged with its snapshot (the snapshot's tier clock, run_created_at as eval_run_closure's), and re-derived by the
-- ledger's recompute (ledger_recompute_v3).
CREATE TABLE eval_work_quality_snapshot_uncertainty (
    snapshot_id         bigint      NOT NULL,
    uncertainty         jsonb       NOT NULL,
    created_at          timestamptz NOT NULL DEFAULT now(),
    run_created_at      timestamptz NOT NULL,
    CONSTRAINT eval_work_quality_snapshot_uncertainty_pkey PRIMARY KEY (snapshot_id),
    CONSTRAINT eval_work_quality_snapshot_uncertainty_snapshot_fkey FOREIGN KEY (snapshot_id)
        REFERENCES eval_work_quality_snapshots (snapshot_id),
    CONSTRAINT eval_work_quality_snapshot_uncertainty_object CHECK (jsonb_typeof(uncertainty) = 'object')
);

COMMENT ON TABLE eval_work_quality_snapshot_uncertainty IS
    'Each completed work-quality snapshot''s uncertainty (work_quality_uncertainty_v1 of its document), computed by the database once at completion; read by work_quality_intervals_v1 and `snapshot show`.';

-- The same readers as the snapshot's own row, by the same tier clock (the snapshot's).
CREATE POLICY eval_work_quality_snapshot_uncertainty_runner ON eval_work_quality_snapshot_uncertainty FOR SELECT
    TO evalledger_runner USING (run_created_at >= evalledger.hot_tier_start_v1());

CREATE POLICY eval_work_quality_snapshot_uncertainty_revops ON eval_work_quality_snapshot_uncertainty FOR SELECT
    TO evalledger_revops USING (run_created_at >= evalledger.hot_tier_start_v1());

CREATE POLICY eval_work_quality_snapshot_uncertainty_auditor ON eval_work_quality_snapshot_uncertainty FOR SELECT
    TO evalledger_auditor USING (true);
GRANT SELECT ON eval_work_quality_snapshot_uncertainty TO evalledger_runner, evalledger_revops, evalledger_auditor;

CALL guard_append_only_v1(ARRAY['eval_work_quality_snapshot_uncertainty:UPDATE OR DELETE:refuse_change_v3']);
