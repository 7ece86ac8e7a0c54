-- brain_eval_agreement_pairs_v1: for every contributing judge draft on a question of the given
-- runs, the judge's numbers beside the reviewer's final ones, and for each of the three reviewer
-- fields whether that final value was entered blind: the trail entry that set it (the latest for
-- the field) says the judges' suggestions had not been shown (brain_eval_review_entry's
-- suggestions_shown, read when the value was entered), and no committed record of their showing
-- (brain_eval_suggestion_shown) is as old as that entry. A value entered after the reviewer saw
-- the drafts, or with no trail entry behind it, is not blind and counts in no agreement figure:
-- only drafts the reviewer saw after scoring, or never saw, measure the judges.
--   unsupported: the draft's quoted unsupported claims (their count) against hallucinations_detected;
--   diagnosis:   the draft's diagnosis_accuracy against diagnosis_accuracy_score (0, 0.5, 1);
--   claims:      the draft's total_claims against the reviewer's total_claims.
CREATE FUNCTION evalledger.brain_eval_agreement_pairs_v1(runs uuid[])
RETURNS TABLE (
    eval_run_id          uuid,
    question_id          varchar(16),
    judge_model          text,
    judge_unsupported    integer,
    reviewer_unsupported integer,
    unsupported_blind    boolean,
    judge_diagnosis      numeric,
    reviewer_diagnosis   numeric,
    diagnosis_blind      boolean,
    judge_claims         integer,
    reviewer_claims      integer,
    claims_blind         boolean)
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
    WITH reviewed AS (
        SELECT q.eval_run_id, q.question_id, q.hallucinations_detected, q.diagnosis_accuracy_score, q.total_claims,
               bool_or(e.field = 'hallucinations_detected' AND e.blind) AS unsupported_blind,
               bool_or(e.field = 'diagnosis_accuracy_score' AND e.blind) AS diagnosis_blind,
               bool_or(e.field = 'total_claims' AND e.blind) AS claims_blind
          FROM evalledger.brain_eval_question_score q
          LEFT JOIN evalledger.brain_eval_suggestion_shown w
            ON w.eval_run_id = q.eval_run_id AND w.question_id = q.question_id
          LEFT JOIN LATERAL (
                SELECT DISTINCT ON (t.field) t.field,
                       NOT t.suggestions_shown AND (w.shown_at IS NULL OR w.shown_at > t.entered_at) AS blind
                  FROM evalledger.brain_eval_review_entry t
                 WHERE t.eval_run_id = q.eval_run_id AND t.question_id = q.question_id
                   AND t.field IN ('hallucinations_detected', 'diagnosis_accuracy_score', 'total_claims')
                 ORDER BY t.field, t.entered_at DESC, t.entry_id DESC) e ON true
         WHERE q.eval_run_id = ANY (runs)
         GROUP BY q.eval_run_id, q.question_id, q.hallucinations_detected, q.diagnosis_accuracy_score, q.total_claims
    )
    SELECT s.eval_run_id, s.question_id, s.model,
           jsonb_array_length(s.unsupported_claims), r.hallucinations_detected, coalesce(r.unsupported_blind, false),
           s.diagnosis_accuracy, r.diagnosis_accuracy_score, coalesce(r.diagnosis_blind, false),
           s.total_claims, r.total_claims, coalesce(r.claims_blind, false)
      FROM evalledger.brain_eval_judge_suggestion s
      JOIN reviewed r ON r.eval_run_id = s.eval_run_id AND r.question_id = s.question_id
     WHERE s.eval_run_id = ANY (runs) AND s.contributes
$$;
