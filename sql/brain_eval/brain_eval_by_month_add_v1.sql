-- brain_eval_by_month_add_v1: add what the given runs contribute (brain_eval_run_facts_v1,
-- brain_eval_question_facts_v1, brain_eval_agreement_facts_v1) to the three by-month panel tables,
-- each counter summed into its month key's row (made when missing). Called by the completion
-- trigger with the run just completed, and by the purge trigger to recount the months it emptied.
-- The code role's alone (EXECUTE is nobody's): the tables take rows from here only.
CREATE FUNCTION evalledger.brain_eval_by_month_add_v1(runs uuid[]) RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    INSERT INTO evalledger.brain_eval_runs_by_month AS t
    SELECT * FROM evalledger.brain_eval_run_facts_v1(runs)
        ON CONFLICT ON CONSTRAINT brain_eval_runs_by_month_pkey DO UPDATE
           SET
               runs = t.runs + EXCLUDED.runs,
               runs_pass = t.runs_pass + EXCLUDED.runs_pass,
               runs_pass_with_notes = t.runs_pass_with_notes + EXCLUDED.runs_pass_with_notes,
               runs_conditional = t.runs_conditional + EXCLUDED.runs_conditional,
               runs_fail = t.runs_fail + EXCLUDED.runs_fail,
               token_cost_usd = t.token_cost_usd + EXCLUDED.token_cost_usd,
               reviewer_hours_spent = t.reviewer_hours_spent + EXCLUDED.reviewer_hours_spent,
               runs_with_hours = t.runs_with_hours + EXCLUDED.runs_with_hours,
               stale_questions = t.stale_questions + EXCLUDED.stale_questions,
               stale_recognised = t.stale_recognised + EXCLUDED.stale_recognised,
               runs_with_stale = t.runs_with_stale + EXCLUDED.runs_with_stale,
               runs_all_recognised = t.runs_all_recognised + EXCLUDED.runs_all_recognised,
               sev2_runs = t.sev2_runs + EXCLUDED.sev2_runs,
               rating_1 = t.rating_1 + EXCLUDED.rating_1,
               rating_2 = t.rating_2 + EXCLUDED.rating_2,
               rating_3 = t.rating_3 + EXCLUDED.rating_3,
               rating_4 = t.rating_4 + EXCLUDED.rating_4,
               rating_5 = t.rating_5 + EXCLUDED.rating_5;
    INSERT INTO evalledger.brain_eval_questions_by_month AS t
    SELECT * FROM evalledger.brain_eval_question_facts_v1(runs)
        ON CONFLICT ON CONSTRAINT brain_eval_questions_by_month_pkey DO UPDATE
           SET
               runs_seen = t.runs_seen + EXCLUDED.runs_seen,
               runs_failed = t.runs_failed + EXCLUDED.runs_failed;
    INSERT INTO evalledger.brain_eval_agreement_by_month AS t
    SELECT * FROM evalledger.brain_eval_agreement_facts_v1(runs)
        ON CONFLICT ON CONSTRAINT brain_eval_agreement_by_month_pkey DO UPDATE
           SET
               unsupported_j0_r0 = t.unsupported_j0_r0 + EXCLUDED.unsupported_j0_r0,
               unsupported_j0_r1 = t.unsupported_j0_r1 + EXCLUDED.unsupported_j0_r1,
               unsupported_j0_r2 = t.unsupported_j0_r2 + EXCLUDED.unsupported_j0_r2,
               unsupported_j1_r0 = t.unsupported_j1_r0 + EXCLUDED.unsupported_j1_r0,
               unsupported_j1_r1 = t.unsupported_j1_r1 + EXCLUDED.unsupported_j1_r1,
               unsupported_j1_r2 = t.unsupported_j1_r2 + EXCLUDED.unsupported_j1_r2,
               unsupported_j2_r0 = t.unsupported_j2_r0 + EXCLUDED.unsupported_j2_r0,
               unsupported_j2_r1 = t.unsupported_j2_r1 + EXCLUDED.unsupported_j2_r1,
               unsupported_j2_r2 = t.unsupported_j2_r2 + EXCLUDED.unsupported_j2_r2,
               diagnosis_j0_r0 = t.diagnosis_j0_r0 + EXCLUDED.diagnosis_j0_r0,
               diagnosis_j0_r1 = t.diagnosis_j0_r1 + EXCLUDED.diagnosis_j0_r1,
               diagnosis_j0_r2 = t.diagnosis_j0_r2 + EXCLUDED.diagnosis_j0_r2,
               diagnosis_j1_r0 = t.diagnosis_j1_r0 + EXCLUDED.diagnosis_j1_r0,
               diagnosis_j1_r1 = t.diagnosis_j1_r1 + EXCLUDED.diagnosis_j1_r1,
               diagnosis_j1_r2 = t.diagnosis_j1_r2 + EXCLUDED.diagnosis_j1_r2,
               diagnosis_j2_r0 = t.diagnosis_j2_r0 + EXCLUDED.diagnosis_j2_r0,
               diagnosis_j2_r1 = t.diagnosis_j2_r1 + EXCLUDED.diagnosis_j2_r1,
               diagnosis_j2_r2 = t.diagnosis_j2_r2 + EXCLUDED.diagnosis_j2_r2,
               claims_pairs = t.claims_pairs + EXCLUDED.claims_pairs,
               claims_abs_difference = t.claims_abs_difference + EXCLUDED.claims_abs_difference;
END;
$$;
