-- One row per answer the brain gave in a harness run, pointing at the brain_analysis_log row that
-- holds it; a question with a row is not asked again when the run resumes. The automatic scores
-- are the database's, computed from the stored answer at INSERT.
CREATE TABLE brain_eval_harness_answer (
    eval_run_id              uuid         NOT NULL,
    question_id              varchar(16)  NOT NULL,
    analysis_id              uuid         NOT NULL,
    recorded                 boolean      NOT NULL,
    contract_error           text,
    latency_ms               integer      NOT NULL DEFAULT 0,
    attempts                 integer      NOT NULL DEFAULT 0,
    citation_rate            numeric(5,4) NOT NULL,
    confidence_distribution  jsonb        NOT NULL,
    lever_mapping_violations integer,
    created_at               timestamptz  NOT NULL DEFAULT now(),
    run_created_at           timestamptz  NOT NULL,
    CONSTRAINT brain_eval_harness_answer_pkey PRIMARY KEY (eval_run_id, question_id),
    CONSTRAINT brain_eval_harness_answer_run_fkey FOREIGN KEY (eval_run_id)
        REFERENCES brain_eval_harness_run (eval_run_id),
    CONSTRAINT brain_eval_harness_answer_analysis_key UNIQUE (analysis_id),
    CONSTRAINT brain_eval_harness_answer_analysis_fkey FOREIGN KEY (analysis_id)
        REFERENCES brain_analysis_log (analysis_id),
    CONSTRAINT brain_eval_harness_answer_contract_error_not_blank CHECK (btrim(contract_error) <> ''),
    CONSTRAINT brain_eval_harness_answer_counts_not_negative CHECK (latency_ms >= 0 AND attempts >= 0),
    CONSTRAINT brain_eval_harness_answer_citation_rate_range CHECK (citation_rate BETWEEN 0 AND 1),
    CONSTRAINT brain_eval_harness_answer_citation_rate_finite CHECK (finite_v1(citation_rate)),
    CONSTRAINT brain_eval_harness_answer_lever_violations_not_negative CHECK (lever_mapping_violations >= 0)
);

CREATE POLICY brain_eval_harness_answer_runner ON brain_eval_harness_answer TO evalledger_runner
    USING (run_created_at >= evalledger.hot_tier_start_v1()) WITH CHECK (true);
GRANT SELECT ON brain_eval_harness_answer TO evalledger_runner;
GRANT INSERT (eval_run_id, question_id, analysis_id, recorded, contract_error, latency_ms, attempts)
    ON brain_eval_harness_answer TO evalledger_runner;

CREATE POLICY brain_eval_harness_answer_readers ON brain_eval_harness_answer FOR SELECT TO evalledger_reviewer
    USING (run_created_at >= evalledger.hot_tier_start_v1()
           AND eval_run_id = ANY (ARRAY(SELECT l.eval_run_id FROM evalledger.brain_eval_log l)));

CREATE POLICY brain_eval_harness_answer_revops ON brain_eval_harness_answer FOR SELECT TO evalledger_revops
    USING (run_created_at >= evalledger.hot_tier_start_v1());

CREATE POLICY brain_eval_harness_answer_auditor ON brain_eval_harness_answer FOR SELECT TO evalledger_auditor USING (true);
GRANT SELECT ON brain_eval_harness_answer TO evalledger_reviewer, evalledger_revops, evalledger_auditor;

-- A policy of brain_analysis_log, created here: it reads this table, which references that one.
-- A reviewer reads the brain's answers in its own harness runs before any question row points at
-- them (the baseline's policy shows a reviewer only analyses its question rows point at).
CREATE POLICY brain_analysis_log_reviewer_harness ON brain_analysis_log FOR SELECT TO evalledger_reviewer
    USING (created_at >= evalledger.hot_tier_start_v1()
           AND analysis_id = ANY (ARRAY(SELECT a.analysis_id FROM evalledger.brain_eval_harness_answer a)));
