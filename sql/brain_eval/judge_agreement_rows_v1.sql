-- judge_agreement_rows_v1: how each judge model's drafts agree with the reviewer's final numbers,
-- per brain (and, with p_by_quarter, per UTC quarter the runs started in), over blind pairs only
-- (brain_eval_agreement_pairs_v1: values the reviewer entered before seeing the drafts, or without
-- ever seeing them), measured by agreement_measures_v1: Cohen's kappa for unsupported claims
-- binned 0, 1, 2 or more, the linearly weighted kappa for diagnosis accuracy (0, 0.5, 1), the mean
-- absolute difference for total claims. From brain_eval_agreement_by_month, whose cells add up
-- over months, so any span costs what its months cost. Filters, each NULL for all: a brain, the
-- first and last month started (UTC; whole months), a run trigger.
CREATE FUNCTION evalledger.judge_agreement_rows_v1(
    p_brain text, p_from_month date, p_to_month date, p_trigger text, p_by_quarter boolean)
RETURNS TABLE (
    brain_under_test           varchar(16),
    judge_model                text,
    quarter                    text,
    unsupported_pairs          bigint,
    unsupported_agreement      numeric,
    unsupported_kappa          numeric,
    diagnosis_pairs            bigint,
    diagnosis_agreement        numeric,
    diagnosis_weighted_kappa   numeric,
    claims_pairs               bigint,
    claims_mean_abs_difference numeric)
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
    SELECT c.brain_under_test, c.judge_model, c.quarter, m.*
      FROM (SELECT f.brain_under_test, f.judge_model,
                   CASE WHEN p_by_quarter THEN to_char(f.started_month, 'YYYY-"Q"Q') END AS quarter,
                   ARRAY[sum(f.unsupported_j0_r0)::bigint,
                              sum(f.unsupported_j0_r1)::bigint,
                              sum(f.unsupported_j0_r2)::bigint,
                              sum(f.unsupported_j1_r0)::bigint,
                              sum(f.unsupported_j1_r1)::bigint,
                              sum(f.unsupported_j1_r2)::bigint,
                              sum(f.unsupported_j2_r0)::bigint,
                              sum(f.unsupported_j2_r1)::bigint, sum(f.unsupported_j2_r2)::bigint] AS unsupported,
                   ARRAY[sum(f.diagnosis_j0_r0)::bigint, sum(f.diagnosis_j0_r1)::bigint,
                              sum(f.diagnosis_j0_r2)::bigint, sum(f.diagnosis_j1_r0)::bigint,
                              sum(f.diagnosis_j1_r1)::bigint, sum(f.diagnosis_j1_r2)::bigint,
                              sum(f.diagnosis_j2_r0)::bigint, sum(f.diagnosis_j2_r1)::bigint,
                              sum(f.diagnosis_j2_r2)::bigint] AS diagnosis,
                   sum(f.claims_pairs)::bigint AS claims_pairs, sum(f.claims_abs_difference)::bigint AS claims_abs_difference
              FROM evalledger.brain_eval_agreement_by_month f
             WHERE (p_brain IS NULL OR f.brain_under_test = p_brain)
               AND (p_from_month IS NULL OR f.started_month >= date_trunc('month', p_from_month::timestamp)::date)
               AND (p_to_month IS NULL OR f.started_month <= p_to_month)
               AND (p_trigger IS NULL OR f.run_trigger::text = p_trigger)
             GROUP BY 1, 2, 3) c
     CROSS JOIN LATERAL evalledger.agreement_measures_v1(c.unsupported, c.diagnosis, c.claims_pairs,
                                                         c.claims_abs_difference) m
$$;
GRANT EXECUTE ON FUNCTION judge_agreement_rows_v1(text, date, date, text, boolean) TO evalledger_revops, evalledger_auditor;
