-- Judge repeats (issue 36, item 4), brain-eval: `run brain-eval --repeats K` asks each judge K times
-- per answer. The harness run says K (brain_eval_harness_run.repeats, 1 to 10; every run before
-- is a run of 1) and each judge draft its repeat (brain_eval_judge_suggestion.repeat_no, 1 to the
-- run's K; every draft stored before is repeat 1): the unique key widens to hold one draft per
-- repeat, and the admit trigger refuses a repeat outside 1 to K. The drafts are the reviewer's
-- suggestions, never the decision, so a run of one repeat is decided exactly as before. A view for
-- BI and the runner: brain_eval_flaky_v1 (a judge's repeats that straddle a pass criterion's
-- threshold of the question, read from the catalog and rubric rows); and judge_agreement_v2, the
-- panel's agreement (judge_agreement_v1, kept) with the count of flaky questions beside it.

SET LOCAL ROLE evalledger_code;
SET LOCAL search_path = evalledger, pg_temp;

-- The unique key widens, past the drop guard (see 0102.journal-cost.sql).
RESET ROLE;
DO $drop_guard_off$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_event_trigger WHERE evtname = 'evalledger_drop_guard_v1') THEN
        ALTER EVENT TRIGGER evalledger_drop_guard_v1 DISABLE;
    END IF;
END
$drop_guard_off$;
SET LOCAL ROLE evalledger_code;

ALTER TABLE brain_eval_harness_run
    ADD COLUMN repeats integer NOT NULL DEFAULT 1,
    ADD CONSTRAINT brain_eval_harness_run_repeats_range CHECK (repeats BETWEEN 1 AND 10);
GRANT INSERT (repeats) ON brain_eval_harness_run TO evalledger_runner;

ALTER TABLE brain_eval_judge_suggestion
    ADD COLUMN repeat_no integer NOT NULL DEFAULT 1,
    ADD CONSTRAINT brain_eval_judge_suggestion_repeat_positive CHECK (repeat_no >= 1),
    DROP CONSTRAINT brain_eval_judge_suggestion_once,
    ADD CONSTRAINT brain_eval_judge_suggestion_once UNIQUE (eval_run_id, question_id, model, repeat_no);
GRANT INSERT (repeat_no) ON brain_eval_judge_suggestion TO evalledger_runner;

-- The drop guard back on.
RESET ROLE;
DO $drop_guard_on$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_event_trigger WHERE evtname = 'evalledger_drop_guard_v1') THEN
        ALTER EVENT TRIGGER evalledger_drop_guard_v1 ENABLE ALWAYS;
    END IF;
END
$drop_guard_on$;
SET LOCAL ROLE evalledger_code;

-- brain_eval_judge_suggestion_admit_v2: one judge's draft for the reviewer on one answer of an open
-- harness run the caller may read (brain_eval_open_harness_v2: refused alike for any other). The runner supplies what it observed (the parsed reply, or the provider failure);
-- the database reads the draft from the reply and decides whether it contributes: total claims a
-- whole number, the unsupported claims quoted as strings and no more of them than claims, diagnosis
-- accuracy 0, 0.5 or 1 exactly where the question has that criterion, staleness recognised true or
-- false exactly on a stale-fixture question. Otherwise it records why not (parse_failed,
-- incomplete, out_of_scale). It derives the judge's family and flags the brain's own family.
-- With repeats (the run's repeats, --repeats K) a judge drafts K times on each answer: repeat_no
-- is 1 to K, and each repeat is stored once (brain_eval_judge_suggestion_once refuses a second).
CREATE OR REPLACE FUNCTION evalledger.brain_eval_judge_suggestion_admit_v2() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    harness evalledger.brain_eval_harness_run;
    question evalledger.brain_eval_catalog_question;
    reply jsonb := NEW.response_json;
    wants_diagnosis boolean;
BEGIN
    PERFORM evalledger.refuse_supplied_v1('brain_eval_judge_suggestion', jsonb_build_object(
        'family', NEW.family, 'same_family', NEW.same_family, 'total_claims', NEW.total_claims,
        'unsupported_claims', NEW.unsupported_claims, 'diagnosis_accuracy', NEW.diagnosis_accuracy,
        'staleness_recognised', NEW.staleness_recognised, 'contributes', NEW.contributes));
    harness := evalledger.brain_eval_open_harness_v2(NEW.eval_run_id, 'suggestions');
    IF NEW.repeat_no IS NULL OR NEW.repeat_no < 1 OR NEW.repeat_no > harness.repeats THEN
        RAISE EXCEPTION 'evalledger: brain-eval run % asks each judge % time(s) per answer: repeat % is not one of them',
                NEW.eval_run_id, harness.repeats, NEW.repeat_no
            USING ERRCODE = 'check_violation', COLUMN = 'repeat_no';
    END IF;
    SELECT q.* INTO question FROM evalledger.brain_eval_catalog_question q
     WHERE q.catalog_version = harness.catalog_version AND q.question_id = NEW.question_id;
    wants_diagnosis := question.pass_criteria ? 'min_diagnosis_accuracy';

    NEW.family := split_part(NEW.model, ':', 1);
    NEW.same_family := NEW.family = (SELECT v.provider FROM evalledger.brain_version v
                                      WHERE v.brain_version_id = harness.brain_version_id);
    NEW.created_at := now();
    IF evalledger.runner_error_v1(NEW.error_kind) THEN
        NEW.contributes := false;
        RETURN NEW;
    END IF;

    IF reply IS NULL OR jsonb_typeof(reply) <> 'object' THEN
        NEW.error_kind := 'parse_failed';
        NEW.error_message := 'the reply is not a JSON object';
    ELSIF jsonb_typeof(reply -> 'total_claims') IS DISTINCT FROM 'number'
          OR jsonb_typeof(reply -> 'unsupported_claims') IS DISTINCT FROM 'array'
          OR (wants_diagnosis AND jsonb_typeof(reply -> 'diagnosis_accuracy') IS DISTINCT FROM 'number')
          OR (question.uses_stale_fixture AND jsonb_typeof(reply -> 'staleness_recognised') IS DISTINCT FROM 'boolean') THEN
        NEW.error_kind := 'incomplete';
        NEW.error_message := 'the reply lacks total_claims, unsupported_claims'
            || CASE WHEN wants_diagnosis THEN ', diagnosis_accuracy' ELSE '' END
            || CASE WHEN question.uses_stale_fixture THEN ', staleness_recognised' ELSE '' END || ' as they should be';
    ELSIF (reply ->> 'total_claims')::numeric <> trunc((reply ->> 'total_claims')::numeric)
          OR (reply ->> 'total_claims')::numeric < 0
          OR jsonb_array_length(reply -> 'unsupported_claims') > (reply ->> 'total_claims')::numeric
          OR jsonb_path_exists(reply, '$.unsupported_claims[*] ? (@.type() != "string")')
          OR (wants_diagnosis AND (reply ->> 'diagnosis_accuracy')::numeric NOT IN (0, 0.5, 1)) THEN
        NEW.error_kind := 'out_of_scale';
        NEW.error_message := 'total_claims, unsupported_claims or diagnosis_accuracy is out of its scale';
    ELSE
        NEW.total_claims := (reply ->> 'total_claims')::integer;
        NEW.unsupported_claims := reply -> 'unsupported_claims';
        NEW.diagnosis_accuracy := CASE WHEN wants_diagnosis THEN (reply ->> 'diagnosis_accuracy')::numeric END;
        NEW.staleness_recognised := CASE WHEN question.uses_stale_fixture THEN (reply ->> 'staleness_recognised')::boolean END;
        IF jsonb_typeof(reply -> 'notes') = 'string' THEN
            NEW.notes := reply ->> 'notes';
        END IF;
    END IF;
    NEW.contributes := NEW.error_kind IS NULL;
    RETURN NEW;
END;
$$;


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

-- judge_agreement_v2: judge_agreement_v1 (per brain, judge model and quarter, how the judges' drafts
-- agree with the reviewer's final numbers, over blind pairs) and, beside it, how many questions of
-- the quarter's completed runs the judge was flaky on: its repeated drafts (--repeats K) straddle a
-- threshold of the question's pass criteria (brain_eval_flaky_v1, docs/statistics.md "Judge
-- repeats"). A judge with no row in v1 (no draft on a completed run) has none here either.
CREATE VIEW evalledger.judge_agreement_v2 AS
    SELECT a.*, coalesce(f.flaky_questions, 0) AS flaky_questions
      FROM evalledger.judge_agreement_v1 a
      LEFT JOIN (SELECT f.brain_under_test, f.judge_model,
                        to_char(f.started_at AT TIME ZONE 'UTC', 'YYYY-"Q"Q') AS quarter,
                        count(DISTINCT (f.eval_run_id, f.question_id)) AS flaky_questions
                   FROM evalledger.brain_eval_flaky_v1 f
                   JOIN evalledger.brain_eval_log l ON l.eval_run_id = f.eval_run_id
                  WHERE l.completed_at IS NOT NULL
                  GROUP BY 1, 2, 3) f
        ON f.brain_under_test = a.brain_under_test AND f.judge_model = a.judge_model AND f.quarter = a.quarter;
COMMENT ON VIEW evalledger.judge_agreement_v2 IS
    'judge_agreement_v1 (per brain, judge model and UTC quarter, how the judge''s drafts agree with the reviewer''s final numbers, over blind entries) with flaky_questions: the questions of completed runs on which the judge''s repeated drafts (--repeats K) straddle a pass criterion''s threshold (brain_eval_flaky_v1). RevOps: whole months of the hot tier.';
COMMENT ON COLUMN evalledger.judge_agreement_v2.brain_under_test IS 'The brain (target_id) whose answers were judged.';
COMMENT ON COLUMN evalledger.judge_agreement_v2.judge_model IS 'The judge model, provider:model (e.g. openai:gpt-4o).';
COMMENT ON COLUMN evalledger.judge_agreement_v2.quarter IS 'Text YYYY-QN: the UTC quarter the runs started in.';
COMMENT ON COLUMN evalledger.judge_agreement_v2.unsupported_pairs IS 'Count of blind (draft, reviewer) pairs for unsupported claims: the draft''s quoted unsupported claims against hallucinations_detected (each repeat a draft).';
COMMENT ON COLUMN evalledger.judge_agreement_v2.unsupported_agreement IS 'Rate, 0-1, four decimals: share of those pairs in the same bin (0, 1, 2 or more unsupported claims).';
COMMENT ON COLUMN evalledger.judge_agreement_v2.unsupported_kappa IS 'Cohen''s kappa, -1 to 1 (1 = perfect, 0 = chance), four decimals, over the bins 0/1/2+; NULL when undefined (no pairs, or both sides used one same bin).';
COMMENT ON COLUMN evalledger.judge_agreement_v2.diagnosis_pairs IS 'Count of blind pairs for diagnosis accuracy (questions of a diagnosis type).';
COMMENT ON COLUMN evalledger.judge_agreement_v2.diagnosis_agreement IS 'Rate, 0-1, four decimals: share of those pairs with the same score (0, 0.5 or 1).';
COMMENT ON COLUMN evalledger.judge_agreement_v2.diagnosis_weighted_kappa IS 'Linearly weighted kappa, -1 to 1, four decimals (a 0.5 difference weighs half a 1.0 difference); NULL when undefined.';
COMMENT ON COLUMN evalledger.judge_agreement_v2.claims_pairs IS 'Count of blind pairs for total claims.';
COMMENT ON COLUMN evalledger.judge_agreement_v2.claims_mean_abs_difference IS 'Claims (a count), four decimals: mean of |judge total_claims - reviewer total_claims| over those pairs.';
COMMENT ON COLUMN evalledger.judge_agreement_v2.flaky_questions IS 'Count: the questions of the quarter''s completed runs whose repeated drafts by this judge straddle a pass criterion''s threshold (brain_eval_flaky_v1); 0 without repeats.';

REVOKE ALL ON judge_agreement_v2 FROM PUBLIC;
GRANT SELECT ON judge_agreement_v2 TO evalledger_revops, evalledger_auditor;

DO $invoker$
BEGIN
    IF current_setting('server_version_num')::int >= 150000 THEN
        ALTER VIEW evalledger.judge_agreement_v2 SET (security_invoker = true);
    END IF;
END
$invoker$;

CALL seal_tables_v2();
CALL journal_attach_v2();

RESET ROLE;
