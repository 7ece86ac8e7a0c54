CREATE TABLE brain_eval_questions_by_month (
    brain_under_test         varchar(16)      NOT NULL,
    run_trigger              eval_run_trigger NOT NULL,
    started_month            date             NOT NULL,
    recorded_month           date             NOT NULL,
    question_catalog_version varchar(32)      NOT NULL,
    question_id              varchar(16)      NOT NULL,
    runs_seen                bigint           NOT NULL,
    runs_failed              bigint           NOT NULL,
    CONSTRAINT brain_eval_questions_by_month_pkey PRIMARY KEY (brain_under_test, run_trigger, started_month, recorded_month, question_catalog_version, question_id)
);

CREATE POLICY brain_eval_questions_by_month_auditor ON brain_eval_questions_by_month FOR SELECT TO evalledger_auditor
    USING (true);

CREATE POLICY brain_eval_questions_by_month_revops ON brain_eval_questions_by_month FOR SELECT TO evalledger_revops
    USING (recorded_month >= evalledger.whole_hot_months_from_v1());
GRANT SELECT ON brain_eval_questions_by_month TO evalledger_revops, evalledger_auditor;
COMMENT ON COLUMN brain_eval_questions_by_month.brain_under_test IS 'The brain (target_id), e.g. AGT-902.';
COMMENT ON COLUMN brain_eval_questions_by_month.run_trigger IS 'Why the runs happened (seed 002''s run_trigger).';
COMMENT ON COLUMN brain_eval_questions_by_month.started_month IS 'Date: the first day of the UTC month the runs started in.';
COMMENT ON COLUMN brain_eval_questions_by_month.recorded_month IS 'Date: the first day of the UTC month the runs were recorded in (their tier clock''s month).';
COMMENT ON COLUMN brain_eval_questions_by_month.question_catalog_version IS 'The catalog version the runs used.';
COMMENT ON COLUMN brain_eval_questions_by_month.question_id IS 'The catalog question.';
COMMENT ON COLUMN brain_eval_questions_by_month.runs_seen IS 'Count of completed runs that asked the question.';
COMMENT ON COLUMN brain_eval_questions_by_month.runs_failed IS 'Count of those in which it did not pass.';
