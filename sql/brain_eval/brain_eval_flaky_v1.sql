-- brain_eval_flaky_v1: the questions whose judge repeats straddle a threshold (docs/statistics.md,
-- "Judge repeats"). With --repeats K each judge drafts K times on each answer; a judge's
-- contributing repeats straddle a threshold of the question's pass criteria (the catalog
-- question's own over the rubric's question_pass defaults, read from the rubric and catalog rows,
-- as question_passes_v2 reads them) when one repeat would pass the question on that criterion and
-- another would not: max_hallucinations against the count of unsupported claims the draft quotes
-- (lowest at or under it, highest over it), min_diagnosis_accuracy against the draft's diagnosis
-- accuracy (lowest under it, highest at or over it). A straddle tells the reviewer that the
-- judge's draft on that question could have gone the other way on another asking. One row per
-- run, question, judge and criterion straddled; the drafts are suggestions, so no decision changes.
-- Read by RevOps and auditors under their own row-level security.
CREATE VIEW evalledger.brain_eval_flaky_v1 AS
    SELECT l.eval_run_id, l.brain_under_test, l.started_at, s.question_id, s.model AS judge_model,
           t.criterion, t.threshold, count(*) AS repeats, min(t.value) AS lowest, max(t.value) AS highest
      FROM evalledger.brain_eval_log l
      JOIN evalledger.brain_eval_harness_run h ON h.eval_run_id = l.eval_run_id
      JOIN evalledger.rubric r ON r.rubric_id = l.rubric_id
      JOIN evalledger.brain_eval_judge_suggestion s ON s.eval_run_id = l.eval_run_id AND s.contributes
      JOIN evalledger.brain_eval_catalog_question q
        ON q.catalog_version = h.catalog_version AND q.question_id = s.question_id
     CROSS JOIN LATERAL (SELECT (r.definition -> 'question_pass') || coalesce(nullif(q.pass_criteria, 'null'::jsonb), '{}') AS c) p
     CROSS JOIN LATERAL (VALUES
               ('max_hallucinations', (p.c ->> 'max_hallucinations')::numeric,
                jsonb_array_length(s.unsupported_claims)::numeric),
               ('min_diagnosis_accuracy', CASE WHEN q.pass_criteria ? 'min_diagnosis_accuracy'
                                               THEN (p.c ->> 'min_diagnosis_accuracy')::numeric END,
                s.diagnosis_accuracy)) t(criterion, threshold, value)
     WHERE h.repeats > 1 AND t.threshold IS NOT NULL AND t.value IS NOT NULL
     GROUP BY l.eval_run_id, l.brain_under_test, l.started_at, s.question_id, s.model, t.criterion, t.threshold
    HAVING count(*) >= 2
       AND CASE t.criterion WHEN 'max_hallucinations' THEN min(t.value) <= t.threshold AND max(t.value) > t.threshold
                            ELSE min(t.value) < t.threshold AND max(t.value) >= t.threshold END;
COMMENT ON VIEW evalledger.brain_eval_flaky_v1 IS
    'Per brain-eval run, question, judge and pass criterion: a flaky question, where the judge''s repeated drafts (--repeats K) straddle the criterion''s threshold (one repeat would pass the question on it, another would not). Thresholds are the catalog question''s pass criteria over the rubric''s question_pass (docs/statistics.md, "Judge repeats").';
COMMENT ON COLUMN evalledger.brain_eval_flaky_v1.eval_run_id IS 'The run (brain_eval_log.eval_run_id).';
COMMENT ON COLUMN evalledger.brain_eval_flaky_v1.brain_under_test IS 'The brain (target_id) whose answer was judged.';
COMMENT ON COLUMN evalledger.brain_eval_flaky_v1.started_at IS 'When the run started (timestamptz).';
COMMENT ON COLUMN evalledger.brain_eval_flaky_v1.question_id IS 'The catalog question, e.g. EVAL-Q01.';
COMMENT ON COLUMN evalledger.brain_eval_flaky_v1.judge_model IS 'The judge model, provider:model (e.g. openai:gpt-4o).';
COMMENT ON COLUMN evalledger.brain_eval_flaky_v1.criterion IS 'Which pass criterion: max_hallucinations (unsupported claims quoted) or min_diagnosis_accuracy.';
COMMENT ON COLUMN evalledger.brain_eval_flaky_v1.threshold IS 'That criterion''s threshold for the question, as the catalog and rubric rows hold it: a count of claims, or a score 0-1.';
COMMENT ON COLUMN evalledger.brain_eval_flaky_v1.repeats IS 'Count: the judge''s contributing repeats on the question.';
COMMENT ON COLUMN evalledger.brain_eval_flaky_v1.lowest IS 'The lowest of those repeats'' values (claims, or a score 0-1).';
COMMENT ON COLUMN evalledger.brain_eval_flaky_v1.highest IS 'The highest of those repeats'' values (claims, or a score 0-1).';

REVOKE ALL ON brain_eval_flaky_v1 FROM PUBLIC;
GRANT SELECT ON brain_eval_flaky_v1 TO evalledger_runner, evalledger_revops, evalledger_auditor;

DO $invoker$
BEGIN
    IF current_setting('server_version_num')::int >= 150000 THEN
        ALTER VIEW evalledger.brain_eval_flaky_v1 SET (security_invoker = true);
    END IF;
END
$invoker$;
