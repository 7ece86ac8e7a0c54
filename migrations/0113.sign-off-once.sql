-- A sign-off made once (issue 39, item 3). After a killed `review finish` the reviewer could not
-- tell whether it committed and ran it again: a second identical brain_eval_run_review row was
-- appended, while `review score` run again with the same values added nothing; and a run could be
-- signed off before any of its questions was scored. The admit trigger now refuses a sign-off
-- while a question still needs the reviewer's numbers (naming them), stores nothing for one that
-- repeats the run's latest sign-off, and takes a run's sign-offs one at a time under READ
-- COMMITTED. brain_eval_run_review_admit_v1 is replaced in place (same signature, owner, grants
-- and trigger).

SET LOCAL ROLE evalledger_code;
SET LOCAL search_path = evalledger, pg_temp;

-- brain_eval_run_review_admit_v1: a run's reviewer signs off an open run of theirs with the hours
-- spent and calibration notes keyed by the rubric's dimensions; who, when and the tier clock are
-- the database's. A sign-off is made once (issue 39, item 3):
--   * only once every question the run asks has its row and every reviewer's field its criteria
--     need (question_needs_v2, less the automatic lever field): the refusal names what is missing,
--     by question id, as completion's does;
--   * the same hours and notes as the run's latest sign-off are that sign-off, not a second one:
--     the row is not stored (the INSERT affects no row), so a sign-off run again after a kill, or
--     a double submit, leaves one row; different values are a correction, a new row that the next
--     completion copies (the earlier stays in the ledger).
-- Sign-offs of one run are taken one at a time (the run's row locked FOR NO KEY UPDATE, as the
-- run's reviewer only), under READ COMMITTED (require_read_committed_v2), so the second of two at
-- once reads the first once it committed. SECURITY DEFINER (reads the run and its rubric past the
-- reviewer's policies); the caller is caller_v1(), the role the statement runs as.
CREATE OR REPLACE FUNCTION evalledger.brain_eval_run_review_admit_v1() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    run evalledger.brain_eval_log;
    unknown text;
    policy jsonb;
    brains text[];
    missing text[];
    latest evalledger.brain_eval_run_review;
BEGIN
    IF NEW.eval_run_id IS NULL THEN
        RETURN NEW;  -- the column's NOT NULL refuses it
    END IF;
    SELECT l.* INTO run FROM evalledger.brain_eval_log l WHERE l.eval_run_id = NEW.eval_run_id;
    IF run.eval_run_id IS NULL
       OR evalledger.reviewer_id_of_v1(evalledger.caller_v1()) IS DISTINCT FROM run.reviewer_user_id THEN
        RAISE EXCEPTION 'evalledger: only the run''s reviewer signs off run %', NEW.eval_run_id
            USING ERRCODE = 'insufficient_privilege';
    END IF;
    PERFORM evalledger.require_read_committed_v2('a reviewer''s sign-off');
    -- The run's reviewer only gets here: its run, locked against a completion and another sign-off
    -- (a completion that came first is read here once it committed).
    SELECT l.* INTO run FROM evalledger.brain_eval_log l WHERE l.eval_run_id = NEW.eval_run_id FOR NO KEY UPDATE OF l;
    IF run.completed_at IS NOT NULL THEN
        RAISE EXCEPTION 'evalledger: run % is complete: its review is final', run.eval_run_id
            USING ERRCODE = 'insufficient_privilege';
    END IF;
    SELECT string_agg(k, ', ' ORDER BY k) INTO unknown
      FROM jsonb_object_keys(coalesce(NEW.calibration_notes, '{}')) AS k
     WHERE NOT EXISTS (SELECT 1 FROM evalledger.rubric r, jsonb_array_elements(r.definition -> 'dimensions') d
                        WHERE r.rubric_id = run.rubric_id AND d ->> 'key' = k);
    IF unknown IS NOT NULL THEN
        RAISE EXCEPTION 'evalledger: calibration notes name no dimension of the run''s rubric: %', unknown
            USING ERRCODE = 'check_violation', COLUMN = 'calibration_notes',
                  HINT = 'key notes by dimension: citation_rate, hallucination_rate, ...';
    END IF;

    SELECT r.definition INTO policy FROM evalledger.rubric r WHERE r.rubric_id = run.rubric_id;
    brains := evalledger.run_brains_v1(run.brain_under_test, run.system_prompt_hash);
    missing := ARRAY(
        SELECT format('%s: no answer yet', q.id)
          FROM evalledger.brain_eval_harness_run h, unnest(h.question_ids) WITH ORDINALITY AS q(id, position)
         WHERE h.eval_run_id = run.eval_run_id
           AND NOT EXISTS (SELECT 1 FROM evalledger.brain_eval_question_score s
                            WHERE s.eval_run_id = run.eval_run_id AND s.question_id = q.id)
         ORDER BY q.position);
    IF cardinality(missing) = 0 AND (SELECT count(*) FROM evalledger.brain_eval_question_score s
                                      WHERE s.eval_run_id = run.eval_run_id) < run.question_count THEN
        missing := ARRAY[format('question_count is %s but %s questions are recorded', run.question_count,
                                (SELECT count(*) FROM evalledger.brain_eval_question_score s
                                  WHERE s.eval_run_id = run.eval_run_id))];
    END IF;
    missing := missing || ARRAY(
        SELECT format('%s: %s', n.question_id, array_to_string(n.needs, ', '))
          FROM (SELECT s.question_id,
                       array_remove(evalledger.question_needs_v2(s, policy, brains), 'lever_mapping_violations') AS needs
                  FROM evalledger.brain_eval_question_score s
                 WHERE s.eval_run_id = run.eval_run_id) n
         WHERE cardinality(n.needs) > 0
         ORDER BY n.question_id);
    IF cardinality(missing) > 0 THEN
        RAISE EXCEPTION 'evalledger: run % cannot be signed off before its questions are scored: %',
                run.eval_run_id, array_to_string(missing, '; ')
            USING ERRCODE = 'check_violation',
                  HINT = format('enter them first (evalledger review %s), then sign off', run.eval_run_id);
    END IF;

    SELECT v.* INTO latest FROM evalledger.brain_eval_run_review v
     WHERE v.eval_run_id = run.eval_run_id ORDER BY v.created_at DESC, v.review_id DESC LIMIT 1;
    IF latest.review_id IS NOT NULL AND latest.reviewer_hours_spent = NEW.reviewer_hours_spent
       AND latest.calibration_notes IS NOT DISTINCT FROM NEW.calibration_notes THEN
        RETURN NULL;  -- the run's latest sign-off already says this: it is not made twice
    END IF;
    NEW.reviewer_user_id := run.reviewer_user_id;
    NEW.entered_by := session_user;
    NEW.created_at := now();
    NEW.run_created_at := run.created_at;
    RETURN NEW;
END;
$$;
