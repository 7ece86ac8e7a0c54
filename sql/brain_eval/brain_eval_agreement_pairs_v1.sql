-- brain_eval_agreement_pairs_v1: for every judge with a contributing draft on a question of the given
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
-- A judge counts once per question: with --repeats K its number is its mean over its contributing
-- repeats, the fold every judged verdict reads (docs/statistics.md, "Judge repeats"), put on the
-- reviewer's scale (a whole count; diagnosis in steps of 0.5), halves rounded up. With one repeat,
-- or K repeats that agree, it is the draft's own number, so such a run agrees exactly as a run of one.
-- Inlined where it is called (plain SQL, operators schema-qualified), as brain_eval_run_facts_v1.
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
LANGUAGE sql STABLE AS $$
    SELECT s.eval_run_id, s.question_id, s.model,
           s.unsupported, r.hallucinations_detected, r.unsupported_blind,
           s.diagnosis, r.diagnosis_accuracy_score, r.diagnosis_blind,
           s.claims, r.total_claims, r.claims_blind
      FROM (SELECT q.eval_run_id, q.question_id, q.hallucinations_detected, q.diagnosis_accuracy_score, q.total_claims,
                   coalesce(h.blind, false) AS unsupported_blind, coalesce(d.blind, false) AS diagnosis_blind,
                   coalesce(c.blind, false) AS claims_blind
              FROM evalledger.brain_eval_question_score q
              LEFT JOIN evalledger.brain_eval_suggestion_shown w
                ON w.eval_run_id OPERATOR(pg_catalog.=) q.eval_run_id AND w.question_id OPERATOR(pg_catalog.=) q.question_id
             LEFT JOIN LATERAL (
                   SELECT NOT t.suggestions_shown AND (w.shown_at IS NULL OR w.shown_at OPERATOR(pg_catalog.>) t.entered_at) AS blind
                     FROM evalledger.brain_eval_review_entry t
                    WHERE t.eval_run_id OPERATOR(pg_catalog.=) q.eval_run_id AND t.question_id OPERATOR(pg_catalog.=) q.question_id
                      AND t.field OPERATOR(pg_catalog.=) 'hallucinations_detected'
                    ORDER BY t.entered_at DESC, t.entry_id DESC
                    LIMIT 1) h ON true
             LEFT JOIN LATERAL (
                   SELECT NOT t.suggestions_shown AND (w.shown_at IS NULL OR w.shown_at OPERATOR(pg_catalog.>) t.entered_at) AS blind
                     FROM evalledger.brain_eval_review_entry t
                    WHERE t.eval_run_id OPERATOR(pg_catalog.=) q.eval_run_id AND t.question_id OPERATOR(pg_catalog.=) q.question_id
                      AND t.field OPERATOR(pg_catalog.=) 'diagnosis_accuracy_score'
                    ORDER BY t.entered_at DESC, t.entry_id DESC
                    LIMIT 1) d ON true
             LEFT JOIN LATERAL (
                   SELECT NOT t.suggestions_shown AND (w.shown_at IS NULL OR w.shown_at OPERATOR(pg_catalog.>) t.entered_at) AS blind
                     FROM evalledger.brain_eval_review_entry t
                    WHERE t.eval_run_id OPERATOR(pg_catalog.=) q.eval_run_id AND t.question_id OPERATOR(pg_catalog.=) q.question_id
                      AND t.field OPERATOR(pg_catalog.=) 'total_claims'
                    ORDER BY t.entered_at DESC, t.entry_id DESC
                    LIMIT 1) c ON true
             WHERE q.eval_run_id OPERATOR(pg_catalog.=) ANY (SELECT pg_catalog.unnest(runs))
             OFFSET 0) r  -- each question's blindness once, not once per judge
      JOIN (SELECT j.eval_run_id, j.question_id, j.model,
                   pg_catalog.round(pg_catalog.avg(pg_catalog.jsonb_array_length(j.unsupported_claims)))::integer AS unsupported,
                   pg_catalog.round(pg_catalog.avg(j.diagnosis_accuracy) OPERATOR(pg_catalog.*) 2) OPERATOR(pg_catalog./) 2 AS diagnosis,
                   pg_catalog.round(pg_catalog.avg(j.total_claims))::integer AS claims
              FROM evalledger.brain_eval_judge_suggestion j
             WHERE j.contributes AND j.eval_run_id OPERATOR(pg_catalog.=) ANY (SELECT pg_catalog.unnest(runs))
             GROUP BY j.eval_run_id, j.question_id, j.model) s  -- each judge once per question: its mean over its repeats
        ON s.eval_run_id OPERATOR(pg_catalog.=) r.eval_run_id AND s.question_id OPERATOR(pg_catalog.=) r.question_id
$$;
GRANT EXECUTE ON FUNCTION brain_eval_agreement_pairs_v1(uuid[]) TO evalledger_revops, evalledger_auditor;
