CREATE TABLE brain_eval_agreement_by_month (
    brain_under_test         varchar(16)      NOT NULL,
    run_trigger              eval_run_trigger NOT NULL,
    started_month            date             NOT NULL,
    recorded_month           date             NOT NULL,
    judge_model              text             NOT NULL,
    unsupported_j0_r0        bigint           NOT NULL,
    unsupported_j0_r1        bigint           NOT NULL,
    unsupported_j0_r2        bigint           NOT NULL,
    unsupported_j1_r0        bigint           NOT NULL,
    unsupported_j1_r1        bigint           NOT NULL,
    unsupported_j1_r2        bigint           NOT NULL,
    unsupported_j2_r0        bigint           NOT NULL,
    unsupported_j2_r1        bigint           NOT NULL,
    unsupported_j2_r2        bigint           NOT NULL,
    diagnosis_j0_r0          bigint           NOT NULL,
    diagnosis_j0_r1          bigint           NOT NULL,
    diagnosis_j0_r2          bigint           NOT NULL,
    diagnosis_j1_r0          bigint           NOT NULL,
    diagnosis_j1_r1          bigint           NOT NULL,
    diagnosis_j1_r2          bigint           NOT NULL,
    diagnosis_j2_r0          bigint           NOT NULL,
    diagnosis_j2_r1          bigint           NOT NULL,
    diagnosis_j2_r2          bigint           NOT NULL,
    claims_pairs             bigint           NOT NULL,
    claims_abs_difference    bigint           NOT NULL,
    CONSTRAINT brain_eval_agreement_by_month_pkey PRIMARY KEY (brain_under_test, run_trigger, started_month, recorded_month, judge_model)
);

CREATE POLICY brain_eval_agreement_by_month_auditor ON brain_eval_agreement_by_month FOR SELECT TO evalledger_auditor
    USING (true);

CREATE POLICY brain_eval_agreement_by_month_revops ON brain_eval_agreement_by_month FOR SELECT TO evalledger_revops
    USING (recorded_month >= evalledger.whole_hot_months_from_v1());
GRANT SELECT ON brain_eval_agreement_by_month TO evalledger_revops, evalledger_auditor;
COMMENT ON COLUMN brain_eval_agreement_by_month.brain_under_test IS 'The brain (target_id), e.g. AGT-902.';
COMMENT ON COLUMN brain_eval_agreement_by_month.run_trigger IS 'Why the runs happened (seed 002''s run_trigger).';
COMMENT ON COLUMN brain_eval_agreement_by_month.started_month IS 'Date: the first day of the UTC month the runs started in.';
COMMENT ON COLUMN brain_eval_agreement_by_month.recorded_month IS 'Date: the first day of the UTC month the runs were recorded in (their tier clock''s month).';
COMMENT ON COLUMN brain_eval_agreement_by_month.judge_model IS 'The judge model, provider:model.';
COMMENT ON COLUMN brain_eval_agreement_by_month.unsupported_j0_r0 IS 'Count of blind pairs: the judge quoted 0 unsupported claims, the reviewer found 0 hallucinations.';
COMMENT ON COLUMN brain_eval_agreement_by_month.unsupported_j0_r1 IS 'Count of blind pairs: the judge quoted 0 unsupported claims, the reviewer found 1 hallucinations.';
COMMENT ON COLUMN brain_eval_agreement_by_month.unsupported_j0_r2 IS 'Count of blind pairs: the judge quoted 0 unsupported claims, the reviewer found 2 or more hallucinations.';
COMMENT ON COLUMN brain_eval_agreement_by_month.unsupported_j1_r0 IS 'Count of blind pairs: the judge quoted 1 unsupported claims, the reviewer found 0 hallucinations.';
COMMENT ON COLUMN brain_eval_agreement_by_month.unsupported_j1_r1 IS 'Count of blind pairs: the judge quoted 1 unsupported claims, the reviewer found 1 hallucinations.';
COMMENT ON COLUMN brain_eval_agreement_by_month.unsupported_j1_r2 IS 'Count of blind pairs: the judge quoted 1 unsupported claims, the reviewer found 2 or more hallucinations.';
COMMENT ON COLUMN brain_eval_agreement_by_month.unsupported_j2_r0 IS 'Count of blind pairs: the judge quoted 2 or more unsupported claims, the reviewer found 0 hallucinations.';
COMMENT ON COLUMN brain_eval_agreement_by_month.unsupported_j2_r1 IS 'Count of blind pairs: the judge quoted 2 or more unsupported claims, the reviewer found 1 hallucinations.';
COMMENT ON COLUMN brain_eval_agreement_by_month.unsupported_j2_r2 IS 'Count of blind pairs: the judge quoted 2 or more unsupported claims, the reviewer found 2 or more hallucinations.';
COMMENT ON COLUMN brain_eval_agreement_by_month.diagnosis_j0_r0 IS 'Count of blind pairs: the judge drafted diagnosis accuracy 0, the reviewer scored 0.';
COMMENT ON COLUMN brain_eval_agreement_by_month.diagnosis_j0_r1 IS 'Count of blind pairs: the judge drafted diagnosis accuracy 0, the reviewer scored 0.5.';
COMMENT ON COLUMN brain_eval_agreement_by_month.diagnosis_j0_r2 IS 'Count of blind pairs: the judge drafted diagnosis accuracy 0, the reviewer scored 1.';
COMMENT ON COLUMN brain_eval_agreement_by_month.diagnosis_j1_r0 IS 'Count of blind pairs: the judge drafted diagnosis accuracy 0.5, the reviewer scored 0.';
COMMENT ON COLUMN brain_eval_agreement_by_month.diagnosis_j1_r1 IS 'Count of blind pairs: the judge drafted diagnosis accuracy 0.5, the reviewer scored 0.5.';
COMMENT ON COLUMN brain_eval_agreement_by_month.diagnosis_j1_r2 IS 'Count of blind pairs: the judge drafted diagnosis accuracy 0.5, the reviewer scored 1.';
COMMENT ON COLUMN brain_eval_agreement_by_month.diagnosis_j2_r0 IS 'Count of blind pairs: the judge drafted diagnosis accuracy 1, the reviewer scored 0.';
COMMENT ON COLUMN brain_eval_agreement_by_month.diagnosis_j2_r1 IS 'Count of blind pairs: the judge drafted diagnosis accuracy 1, the reviewer scored 0.5.';
COMMENT ON COLUMN brain_eval_agreement_by_month.diagnosis_j2_r2 IS 'Count of blind pairs: the judge drafted diagnosis accuracy 1, the reviewer scored 1.';
COMMENT ON COLUMN brain_eval_agreement_by_month.claims_pairs IS 'Count of blind pairs of total claims (judge''s against reviewer''s).';
COMMENT ON COLUMN brain_eval_agreement_by_month.claims_abs_difference IS 'Claims (a count): the sum of |judge total_claims - reviewer total_claims| over those pairs.';
