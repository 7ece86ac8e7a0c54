-- The readers' named queries (runner/evalledger/bi/): the dashboards' panels with their filters,
-- the drill-down from a run to its evidence, the report's ledger state. Every one runs as the
-- reader (the signed-in login, or the CLI's --as role): row-level security decides what each
-- returns. Each starts with a "-- name: <name>" line and a comment that says what it does.

-- name: run_agreement
-- How each judge's drafts on one completed run agree with its reviewer's final numbers, blind entries only (agreement_measures_v1).
SELECT f.judge_model, m.unsupported_pairs, m.unsupported_agreement, m.unsupported_kappa, m.diagnosis_pairs,
       m.diagnosis_agreement, m.diagnosis_weighted_kappa, m.claims_pairs, m.claims_mean_abs_difference
  FROM evalledger.brain_eval_agreement_facts_v1(ARRAY[%(eval_run_id)s::uuid]) f
 CROSS JOIN LATERAL evalledger.agreement_measures_v1(
        ARRAY[f.unsupported_j0_r0, f.unsupported_j0_r1, f.unsupported_j0_r2, f.unsupported_j1_r0, f.unsupported_j1_r1, f.unsupported_j1_r2, f.unsupported_j2_r0, f.unsupported_j2_r1, f.unsupported_j2_r2],
        ARRAY[f.diagnosis_j0_r0, f.diagnosis_j0_r1, f.diagnosis_j0_r2, f.diagnosis_j1_r0, f.diagnosis_j1_r1, f.diagnosis_j1_r2, f.diagnosis_j2_r0, f.diagnosis_j2_r1, f.diagnosis_j2_r2],
        f.claims_pairs, f.claims_abs_difference) m
 ORDER BY f.judge_model;
