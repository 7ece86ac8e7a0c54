-- Each completed brain-eval run's trend row (issue 36, item 3; migration 0164): what the trend panel
-- shows of it (its trigger, when it ran, the prompt and catalog, the decision, seed 002's seven
-- aggregates as numbers) and beside them each aggregate's 95% interval, the error bars, in one row
-- the panel reads through one index, newest first. Before, the panel read the run's row and joined
-- its stored uncertainty, taking fourteen numbers out of a JSON document for every run shown: the
-- bars cost 1.4x to 1.5x the panel without them (bench/panels.py). Every column is a copy the
-- database makes at completion from two stored rows (brain_eval_trend_of_v1: the run's own row
-- and brain_eval_run_uncertainty), never input: only the completion trigger writes it (no role holds
-- INSERT), append-only, journalled, aged with its run (the run's tier clock), and compared with
-- those rows again by the ledger's recompute (ledger_recompute_v3). The bounds are double precision,
-- one column each: canon-v1 has a form for that and none for an array of it.
CREATE TABLE brain_eval_trend (
    eval_run_id                             uuid             NOT NULL,
    brain_under_test                        varchar(16)      NOT NULL,
    run_trigger                             text             NOT NULL,
    started_at                              timestamptz      NOT NULL,
    completed_at                            timestamptz      NOT NULL,
    model_id                                varchar(64)      NOT NULL,
    system_prompt_hash                      varchar(64)      NOT NULL,
    question_catalog_version                varchar(32)      NOT NULL,
    decision                                eval_decision,
    citation_rate                           numeric,
    hallucination_rate                      numeric,
    staleness_recognition_rate              numeric,
    diagnosis_accuracy_mean                 numeric,
    lever_mapping_correctness               numeric,
    confidence_calibration_in_band          numeric,
    narrative_coherence_mean                numeric,
    citation_rate_ci95_lo                   double precision,
    citation_rate_ci95_hi                   double precision,
    hallucination_rate_ci95_lo              double precision,
    hallucination_rate_ci95_hi              double precision,
    staleness_recognition_rate_ci95_lo      double precision,
    staleness_recognition_rate_ci95_hi      double precision,
    diagnosis_accuracy_mean_ci95_lo         double precision,
    diagnosis_accuracy_mean_ci95_hi         double precision,
    lever_mapping_correctness_ci95_lo       double precision,
    lever_mapping_correctness_ci95_hi       double precision,
    confidence_calibration_in_band_ci95_lo  double precision,
    confidence_calibration_in_band_ci95_hi  double precision,
    narrative_coherence_mean_ci95_lo        double precision,
    narrative_coherence_mean_ci95_hi        double precision,
    reviewer_user_id                        uuid             NOT NULL,
    created_at                              timestamptz      NOT NULL DEFAULT now(),
    run_created_at                          timestamptz      NOT NULL,
    CONSTRAINT brain_eval_trend_pkey PRIMARY KEY (eval_run_id),
    CONSTRAINT brain_eval_trend_run_fkey FOREIGN KEY (eval_run_id) REFERENCES brain_eval_log (eval_run_id),
    CONSTRAINT brain_eval_trend_citation_rate_finite CHECK (finite_v1(citation_rate)),
    CONSTRAINT brain_eval_trend_hallucination_rate_finite CHECK (finite_v1(hallucination_rate)),
    CONSTRAINT brain_eval_trend_staleness_recognition_rate_finite CHECK (finite_v1(staleness_recognition_rate)),
    CONSTRAINT brain_eval_trend_diagnosis_accuracy_mean_finite CHECK (finite_v1(diagnosis_accuracy_mean)),
    CONSTRAINT brain_eval_trend_lever_mapping_correctness_finite CHECK (finite_v1(lever_mapping_correctness)),
    CONSTRAINT brain_eval_trend_confidence_calibration_in_band_finite CHECK (finite_v1(confidence_calibration_in_band)),
    CONSTRAINT brain_eval_trend_narrative_coherence_mean_finite CHECK (finite_v1(narrative_coherence_mean)),
    CONSTRAINT brain_eval_trend_citation_rate_ci95_lo_finite CHECK (finite_v1(citation_rate_ci95_lo::numeric)),
    CONSTRAINT brain_eval_trend_citation_rate_ci95_hi_finite CHECK (finite_v1(citation_rate_ci95_hi::numeric)),
    CONSTRAINT brain_eval_trend_hallucination_rate_ci95_lo_finite CHECK (finite_v1(hallucination_rate_ci95_lo::numeric)),
    CONSTRAINT brain_eval_trend_hallucination_rate_ci95_hi_finite CHECK (finite_v1(hallucination_rate_ci95_hi::numeric)),
    CONSTRAINT brain_eval_trend_staleness_recognition_rate_ci95_lo_finite CHECK (finite_v1(staleness_recognition_rate_ci95_lo::numeric)),
    CONSTRAINT brain_eval_trend_staleness_recognition_rate_ci95_hi_finite CHECK (finite_v1(staleness_recognition_rate_ci95_hi::numeric)),
    CONSTRAINT brain_eval_trend_diagnosis_accuracy_mean_ci95_lo_finite CHECK (finite_v1(diagnosis_accuracy_mean_ci95_lo::numeric)),
    CONSTRAINT brain_eval_trend_diagnosis_accuracy_mean_ci95_hi_finite CHECK (finite_v1(diagnosis_accuracy_mean_ci95_hi::numeric)),
    CONSTRAINT brain_eval_trend_lever_mapping_correctness_ci95_lo_finite CHECK (finite_v1(lever_mapping_correctness_ci95_lo::numeric)),
    CONSTRAINT brain_eval_trend_lever_mapping_correctness_ci95_hi_finite CHECK (finite_v1(lever_mapping_correctness_ci95_hi::numeric)),
    CONSTRAINT brain_eval_trend_confidence_calibration_in_band_ci95_lo_finite CHECK (finite_v1(confidence_calibration_in_band_ci95_lo::numeric)),
    CONSTRAINT brain_eval_trend_confidence_calibration_in_band_ci95_hi_finite CHECK (finite_v1(confidence_calibration_in_band_ci95_hi::numeric)),
    CONSTRAINT brain_eval_trend_narrative_coherence_mean_ci95_lo_finite CHECK (finite_v1(narrative_coherence_mean_ci95_lo::numeric)),
    CONSTRAINT brain_eval_trend_narrative_coherence_mean_ci95_hi_finite CHECK (finite_v1(narrative_coherence_mean_ci95_hi::numeric))
);

-- The trend reads a brain's latest runs of one trigger: the scan stops at the p_last-th the reader
-- may read. The trigger is its label as text: text equality is leakproof and an enum's is not, so
-- under RevOps' and a reviewer's row-level security only a text column can be the index's condition.
CREATE INDEX brain_eval_trend_brain_trigger_started_idx
    ON brain_eval_trend (brain_under_test, run_trigger, started_at DESC, eval_run_id DESC);

-- And its open runs past their deadline (abandoned, decided fail) from the runs' own rows: an open run
-- is rare, so its index is small, and the trend finds a brain's (none, mostly) without walking every
-- run the brain completed.
CREATE INDEX brain_eval_log_open_trend_idx
    ON brain_eval_log (brain_under_test, run_trigger, started_at DESC, eval_run_id DESC) WHERE completed_at IS NULL;

COMMENT ON TABLE brain_eval_trend IS
    'Each completed brain-eval run''s trend row: its decision and seed 002''s aggregates with their 95% intervals, copied by the database at completion from the run''s row and its stored uncertainty (brain_eval_trend_of_v1); read by brain_trend_rows_v2.';

-- The same readers as the run's own row, by the same tier clock (the run's).
CREATE POLICY brain_eval_trend_runner ON brain_eval_trend FOR SELECT TO evalledger_runner
    USING (run_created_at >= evalledger.hot_tier_start_v1());

CREATE POLICY brain_eval_trend_reviewer ON brain_eval_trend FOR SELECT TO evalledger_reviewer
    USING (run_created_at >= evalledger.hot_tier_start_v1()
           AND reviewer_user_id = (SELECT evalledger.reviewer_id_of_v1(current_user)));

CREATE POLICY brain_eval_trend_revops ON brain_eval_trend FOR SELECT TO evalledger_revops
    USING (run_created_at >= evalledger.hot_tier_start_v1());

CREATE POLICY brain_eval_trend_auditor ON brain_eval_trend FOR SELECT TO evalledger_auditor
    USING (true);
GRANT SELECT ON brain_eval_trend
    TO evalledger_runner, evalledger_reviewer, evalledger_revops, evalledger_auditor;

CALL guard_append_only_v1(ARRAY['brain_eval_trend:UPDATE OR DELETE:refuse_change_v3']);
