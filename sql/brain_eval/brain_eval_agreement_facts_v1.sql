-- brain_eval_agreement_facts_v1: what the given completed runs add to brain_eval_agreement_by_month,
-- one row per month key and judge model: the 3x3 tables of blind pairs (judge's category first,
-- the reviewer's second) for unsupported claims binned 0, 1, 2 or more (unsupported_j<judge>_r<reviewer>)
-- and for diagnosis accuracy 0, 0.5, 1 as categories 0, 1, 2 (diagnosis_j<judge>_r<reviewer>), and
-- the blind pairs of total claims with the sum of their absolute differences. Pairs from
-- brain_eval_agreement_pairs_v1, so only values entered blind count. Open runs add nothing.
-- Inlined where it is called, as brain_eval_run_facts_v1.
CREATE FUNCTION evalledger.brain_eval_agreement_facts_v1(runs uuid[])
RETURNS TABLE (
    brain_under_test      varchar(16),
    run_trigger           evalledger.eval_run_trigger,
    started_month         date,
    recorded_month        date,
    judge_model           text,
    unsupported_j0_r0 bigint,
    unsupported_j0_r1 bigint,
    unsupported_j0_r2 bigint,
    unsupported_j1_r0 bigint,
    unsupported_j1_r1 bigint,
    unsupported_j1_r2 bigint,
    unsupported_j2_r0 bigint,
    unsupported_j2_r1 bigint,
    unsupported_j2_r2 bigint,
    diagnosis_j0_r0   bigint,
    diagnosis_j0_r1   bigint,
    diagnosis_j0_r2   bigint,
    diagnosis_j1_r0   bigint,
    diagnosis_j1_r1   bigint,
    diagnosis_j1_r2   bigint,
    diagnosis_j2_r0   bigint,
    diagnosis_j2_r1   bigint,
    diagnosis_j2_r2   bigint,
    claims_pairs          bigint,
    claims_abs_difference bigint)
LANGUAGE sql STABLE AS $$
    SELECT l.brain_under_test, l.run_trigger, evalledger.utc_month_v1(l.started_at),
           evalledger.utc_month_v1(l.created_at), p.judge_model,
           count(*) FILTER (WHERE p.unsupported_blind AND least(p.judge_unsupported, 2) OPERATOR(pg_catalog.=) 0 AND least(p.reviewer_unsupported, 2) OPERATOR(pg_catalog.=) 0),
           count(*) FILTER (WHERE p.unsupported_blind AND least(p.judge_unsupported, 2) OPERATOR(pg_catalog.=) 0 AND least(p.reviewer_unsupported, 2) OPERATOR(pg_catalog.=) 1),
           count(*) FILTER (WHERE p.unsupported_blind AND least(p.judge_unsupported, 2) OPERATOR(pg_catalog.=) 0 AND least(p.reviewer_unsupported, 2) OPERATOR(pg_catalog.=) 2),
           count(*) FILTER (WHERE p.unsupported_blind AND least(p.judge_unsupported, 2) OPERATOR(pg_catalog.=) 1 AND least(p.reviewer_unsupported, 2) OPERATOR(pg_catalog.=) 0),
           count(*) FILTER (WHERE p.unsupported_blind AND least(p.judge_unsupported, 2) OPERATOR(pg_catalog.=) 1 AND least(p.reviewer_unsupported, 2) OPERATOR(pg_catalog.=) 1),
           count(*) FILTER (WHERE p.unsupported_blind AND least(p.judge_unsupported, 2) OPERATOR(pg_catalog.=) 1 AND least(p.reviewer_unsupported, 2) OPERATOR(pg_catalog.=) 2),
           count(*) FILTER (WHERE p.unsupported_blind AND least(p.judge_unsupported, 2) OPERATOR(pg_catalog.=) 2 AND least(p.reviewer_unsupported, 2) OPERATOR(pg_catalog.=) 0),
           count(*) FILTER (WHERE p.unsupported_blind AND least(p.judge_unsupported, 2) OPERATOR(pg_catalog.=) 2 AND least(p.reviewer_unsupported, 2) OPERATOR(pg_catalog.=) 1),
           count(*) FILTER (WHERE p.unsupported_blind AND least(p.judge_unsupported, 2) OPERATOR(pg_catalog.=) 2 AND least(p.reviewer_unsupported, 2) OPERATOR(pg_catalog.=) 2),
           count(*) FILTER (WHERE p.diagnosis_blind AND p.judge_diagnosis OPERATOR(pg_catalog.*) 2 OPERATOR(pg_catalog.=) 0 AND p.reviewer_diagnosis OPERATOR(pg_catalog.*) 2 OPERATOR(pg_catalog.=) 0),
           count(*) FILTER (WHERE p.diagnosis_blind AND p.judge_diagnosis OPERATOR(pg_catalog.*) 2 OPERATOR(pg_catalog.=) 0 AND p.reviewer_diagnosis OPERATOR(pg_catalog.*) 2 OPERATOR(pg_catalog.=) 1),
           count(*) FILTER (WHERE p.diagnosis_blind AND p.judge_diagnosis OPERATOR(pg_catalog.*) 2 OPERATOR(pg_catalog.=) 0 AND p.reviewer_diagnosis OPERATOR(pg_catalog.*) 2 OPERATOR(pg_catalog.=) 2),
           count(*) FILTER (WHERE p.diagnosis_blind AND p.judge_diagnosis OPERATOR(pg_catalog.*) 2 OPERATOR(pg_catalog.=) 1 AND p.reviewer_diagnosis OPERATOR(pg_catalog.*) 2 OPERATOR(pg_catalog.=) 0),
           count(*) FILTER (WHERE p.diagnosis_blind AND p.judge_diagnosis OPERATOR(pg_catalog.*) 2 OPERATOR(pg_catalog.=) 1 AND p.reviewer_diagnosis OPERATOR(pg_catalog.*) 2 OPERATOR(pg_catalog.=) 1),
           count(*) FILTER (WHERE p.diagnosis_blind AND p.judge_diagnosis OPERATOR(pg_catalog.*) 2 OPERATOR(pg_catalog.=) 1 AND p.reviewer_diagnosis OPERATOR(pg_catalog.*) 2 OPERATOR(pg_catalog.=) 2),
           count(*) FILTER (WHERE p.diagnosis_blind AND p.judge_diagnosis OPERATOR(pg_catalog.*) 2 OPERATOR(pg_catalog.=) 2 AND p.reviewer_diagnosis OPERATOR(pg_catalog.*) 2 OPERATOR(pg_catalog.=) 0),
           count(*) FILTER (WHERE p.diagnosis_blind AND p.judge_diagnosis OPERATOR(pg_catalog.*) 2 OPERATOR(pg_catalog.=) 2 AND p.reviewer_diagnosis OPERATOR(pg_catalog.*) 2 OPERATOR(pg_catalog.=) 1),
           count(*) FILTER (WHERE p.diagnosis_blind AND p.judge_diagnosis OPERATOR(pg_catalog.*) 2 OPERATOR(pg_catalog.=) 2 AND p.reviewer_diagnosis OPERATOR(pg_catalog.*) 2 OPERATOR(pg_catalog.=) 2),
           count(*) FILTER (WHERE p.claims_blind AND p.judge_claims IS NOT NULL AND p.reviewer_claims IS NOT NULL),
           coalesce(sum(abs(p.judge_claims OPERATOR(pg_catalog.-) p.reviewer_claims)) FILTER (WHERE p.claims_blind), 0)
      FROM evalledger.brain_eval_log l
      JOIN evalledger.brain_eval_agreement_pairs_v1(runs) p ON p.eval_run_id OPERATOR(pg_catalog.=) l.eval_run_id
     WHERE l.eval_run_id OPERATOR(pg_catalog.=) ANY (SELECT pg_catalog.unnest(runs)) AND l.completed_at IS NOT NULL
     GROUP BY 1, 2, 3, 4, 5
$$;
GRANT EXECUTE ON FUNCTION brain_eval_agreement_facts_v1(uuid[]) TO evalledger_revops, evalledger_auditor;
