-- A regression gate's decision (issue 36, item 5): `takes-quality regress` and `snapshot compare`
-- record one row per gate they decide, in the mode asked for (default: the seed's gate; significant
-- or possible: by the paired interval). The runner names the two sides (a baseline receipt and a
-- run, or two Snapshot documents), the mode and the threshold it was given; the database decides
-- (eval_gate_decision_admit_v1, by gate_decide_v2): the decision, its reasons, the comparison it
-- rests on (the seed's and the paired one), who asked and when, and the work-quality rubric active
-- then (work_quality_rubric_id, since migration 0158: a work-quality gate's dimensions, same band and
-- default tolerance are that rubric's, and the ledger's recompute re-decides it under that one,
-- whatever was activated since), and for a takes-quality gate whether its run had completed as the
-- decision read it (run_completed, since migration 0158: the receipt it compared was final, so the
-- recompute re-derives it). Supplied, those are refused.
-- Append-only: never updated; deleted only by the retention purge, by its own clock past 7 years, never
-- under a hold of its time or its run's brain nor while the takes-quality run it decided about is kept
-- (retention_gate_pinned_v1, migration 0146).
CREATE TABLE eval_gate_decision (
    gate_id      bigint      GENERATED ALWAYS AS IDENTITY,
    suite        text        NOT NULL,
    mode         text        NOT NULL,
    threshold    numeric,
    baseline_ref text        NOT NULL,
    current_ref  text        NOT NULL,
    baseline     jsonb       NOT NULL,
    current_doc  jsonb,
    run_id       bigint,
    decision     text,
    reasons      text[],
    comparison   jsonb,
    decided_by   text,
    created_at   timestamptz NOT NULL DEFAULT now(),
    -- NULL for a gate decided before migration 0158 in a ledger that had by then activated more than
    -- one work-quality rubric (which one was active then is not known exactly; the recompute leaves
    -- such a work-quality gate out), or when none was active.
    work_quality_rubric_id bigint,
    -- NULL for a work-quality gate and for a takes-quality gate decided before migration 0158.
    run_completed boolean,
    CONSTRAINT eval_gate_decision_pkey PRIMARY KEY (gate_id),
    CONSTRAINT eval_gate_decision_work_quality_rubric_fkey FOREIGN KEY (work_quality_rubric_id) REFERENCES rubric (rubric_id),
    CONSTRAINT eval_gate_decision_suite_known CHECK (suite IN ('takes-quality', 'work-quality')),
    CONSTRAINT eval_gate_decision_mode_known CHECK (mode IN ('default', 'significant', 'possible')),
    CONSTRAINT eval_gate_decision_threshold_finite CHECK (threshold >= 0 AND finite_v1(threshold)),
    CONSTRAINT eval_gate_decision_refs_bounded CHECK (
        btrim(baseline_ref) <> '' AND length(baseline_ref) <= 4000 AND btrim(current_ref) <> ''
        AND length(current_ref) <= 4000),
    CONSTRAINT eval_gate_decision_run_completed_takes_quality CHECK (suite = 'takes-quality' OR run_completed IS NULL),
    -- takes-quality: a baseline receipt and a run of the ledger; work-quality: two Snapshot documents.
    CONSTRAINT eval_gate_decision_sides_whole CHECK (
        jsonb_typeof(baseline) = 'object'
        AND ((suite = 'takes-quality' AND run_id IS NOT NULL AND current_doc IS NULL)
             OR (suite = 'work-quality' AND run_id IS NULL AND jsonb_typeof(current_doc) = 'object'))),
    CONSTRAINT eval_gate_decision_decision_known CHECK (decision IN ('pass', 'fail', 'inconclusive')),
    CONSTRAINT eval_gate_decision_decided CHECK (
        decision IS NOT NULL AND reasons IS NOT NULL AND comparison IS NOT NULL AND decided_by IS NOT NULL)
);

CREATE INDEX eval_gate_decision_created_idx ON eval_gate_decision (created_at);

CREATE POLICY eval_gate_decision_runner ON eval_gate_decision TO evalledger_runner
    USING (created_at >= evalledger.hot_tier_start_v1()) WITH CHECK (true);
GRANT SELECT ON eval_gate_decision TO evalledger_runner;

-- The runner names the sides, the mode and the threshold; the decision is the database's.
GRANT INSERT (suite, mode, threshold, baseline_ref, current_ref, baseline, current_doc, run_id)
    ON eval_gate_decision TO evalledger_runner;

CREATE POLICY eval_gate_decision_revops ON eval_gate_decision FOR SELECT TO evalledger_revops
    USING (created_at >= evalledger.hot_tier_start_v1());

CREATE POLICY eval_gate_decision_auditor ON eval_gate_decision FOR SELECT TO evalledger_auditor USING (true);
GRANT SELECT ON eval_gate_decision TO evalledger_revops, evalledger_auditor;
