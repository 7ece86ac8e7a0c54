-- Judge agreement counts a judge once per question (issue 36, item 4): with --repeats K each judge
-- drafts K times on an answer, and brain_eval_agreement_pairs_v1 paired every repeat with the
-- reviewer's numbers, so a judge asked K times weighed K times in judge_agreement_v1/_v2, the
-- by-month agreement table and a run's agreement. Now each judge is one pair per question: its
-- number is its mean over its contributing repeats (the fold every judged verdict reads,
-- docs/statistics.md "Judge repeats"), on the reviewer's scale (a whole count; diagnosis in steps
-- of 0.5; halves rounded up). With one repeat, or repeats that agree, it is the draft's own number:
-- a run of one repeat agrees exactly as before. The agreement rows already counted for months
-- holding a completed run of K > 1 are counted again from the completed runs of those months, as
-- the purge trigger recounts a month (brain_eval_by_month_purge_v1); no other month changes.

SET LOCAL ROLE evalledger_code;
SET LOCAL search_path = evalledger, pg_temp;

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
CREATE OR REPLACE FUNCTION evalledger.brain_eval_agreement_pairs_v1(runs uuid[])
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

COMMENT ON COLUMN evalledger.judge_agreement_v2.unsupported_pairs IS 'Count of blind (draft, reviewer) pairs for unsupported claims: the draft''s quoted unsupported claims against hallucinations_detected (a judge once per question: with --repeats K its mean over its repeats).';

-- The months whose agreement counted a repeat as a judge, counted again.
DO $recount$
DECLARE
    months date[];
BEGIN
    SELECT coalesce(array_agg(DISTINCT evalledger.utc_month_v1(l.created_at)), '{}') INTO months
      FROM evalledger.brain_eval_log l
      JOIN evalledger.brain_eval_harness_run h ON h.eval_run_id = l.eval_run_id
     WHERE l.completed_at IS NOT NULL AND h.repeats > 1;
    IF cardinality(months) > 0 THEN
        DELETE FROM evalledger.brain_eval_agreement_by_month m WHERE m.recorded_month = ANY (months);
        INSERT INTO evalledger.brain_eval_agreement_by_month
        SELECT * FROM evalledger.brain_eval_agreement_facts_v1(ARRAY(
            SELECT l.eval_run_id FROM evalledger.brain_eval_log l
             WHERE l.completed_at IS NOT NULL AND evalledger.utc_month_v1(l.created_at) = ANY (months)));
    END IF;
END
$recount$;

CALL seal_tables_v2();
CALL journal_attach_v2();

RESET ROLE;
