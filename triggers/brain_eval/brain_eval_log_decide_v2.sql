-- brain_eval_log_decide_v2: on completion, check the run is whole and write what it decided. Whole
-- means: question_count question rows; each with every field its criteria need (question_needs_v2, the
-- lever field where the rubric maps levers for a brain of the run's prompt);
-- every stale-fixture question its catalog version declares (the catalog is loaded: admission requires it); and the
-- reviewer's sign-off (brain_eval_run_review), whose hours and notes are copied onto the run. One
-- refusal lists everything missing, by question id. A run past its rubric's deadline
-- (brain_eval_run_deadline_v1, against the database's clock) is not decided on its scores: its
-- abandonment is recorded here, whoever completes it, and a run closed (abandoned or cancelled:
-- brain_eval_run_closure) need not be whole; brain_eval_decide_v2 decides it fail.
CREATE FUNCTION evalledger.brain_eval_log_decide_v2() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    policy jsonb;
    brains text[] := evalledger.run_brains_v1(NEW.brain_under_test, NEW.system_prompt_hash);
    scored int;
    missing text[] := '{}';
    stale_missing text;
    signed evalledger.brain_eval_run_review;
    computed jsonb;
    deadline timestamptz := evalledger.brain_eval_run_deadline_v1(NEW.created_at, NEW.rubric_id);
BEGIN
    PERFORM evalledger.require_fresh_snapshot_v1('run');
    IF now() >= deadline AND NOT EXISTS (SELECT 1 FROM evalledger.brain_eval_run_closure c
                                          WHERE c.eval_run_id = NEW.eval_run_id) THEN
        INSERT INTO evalledger.brain_eval_run_closure
               (eval_run_id, closure, reason, closed_by, reviewer_user_id, run_created_at)
        VALUES (NEW.eval_run_id, 'abandoned', evalledger.brain_eval_overdue_v1(deadline), evalledger.caller_v1(),
                NEW.reviewer_user_id, NEW.created_at);
    END IF;
    IF EXISTS (SELECT 1 FROM evalledger.brain_eval_run_closure c WHERE c.eval_run_id = NEW.eval_run_id) THEN
        computed := evalledger.brain_eval_decide_v2(NEW);
        NEW.aggregated_scores := computed -> 'aggregated_scores';
        NEW.hard_criteria_passed := (computed ->> 'hard_criteria_passed')::boolean;
        NEW.soft_criteria_passed_count := (computed ->> 'soft_criteria_passed_count')::int;
        NEW.decision := (computed ->> 'decision')::evalledger.eval_decision;
        NEW.decision_rationale := computed ->> 'decision_rationale';
        NEW.token_cost_usd := (computed ->> 'token_cost_usd')::numeric;
        RETURN NEW;
    END IF;
    SELECT r.definition INTO policy FROM evalledger.rubric r WHERE r.rubric_id = NEW.rubric_id;
    SELECT count(*) INTO scored FROM evalledger.brain_eval_question_score q WHERE q.eval_run_id = NEW.eval_run_id;
    IF scored <> NEW.question_count THEN
        missing := missing || format('question_count is %s but %s questions are recorded', NEW.question_count, scored);
    END IF;
    missing := missing || ARRAY(
        SELECT format('%s: %s', n.question_id, array_to_string(n.needs, ', '))
          FROM (SELECT q.question_id, evalledger.question_needs_v2(q, policy, brains) AS needs
                  FROM evalledger.brain_eval_question_score q
                 WHERE q.eval_run_id = NEW.eval_run_id) n
         WHERE cardinality(n.needs) > 0
         ORDER BY n.question_id);
    SELECT string_agg(c.question_id, ', ' ORDER BY c.position) INTO stale_missing
      FROM evalledger.brain_eval_catalog_question c
     WHERE c.catalog_version = NEW.question_catalog_version AND c.uses_stale_fixture
       AND NOT EXISTS (SELECT 1 FROM evalledger.brain_eval_question_score q
                        WHERE q.eval_run_id = NEW.eval_run_id AND q.question_id = c.question_id);
    IF stale_missing IS NOT NULL THEN
        missing := missing || format('stale-fixture questions of the catalog not in the run: %s', stale_missing);
    END IF;
    SELECT v.* INTO signed FROM evalledger.brain_eval_run_review v
     WHERE v.eval_run_id = NEW.eval_run_id ORDER BY v.created_at DESC, v.review_id DESC LIMIT 1;
    IF signed.review_id IS NULL THEN
        missing := missing || 'the reviewer''s sign-off (hours spent: evalledger review finish)'::text;
    END IF;
    IF cardinality(missing) > 0 THEN
        RAISE EXCEPTION 'evalledger: run % is not complete: %', NEW.eval_run_id, array_to_string(missing, '; ')
            USING ERRCODE = 'check_violation', CONSTRAINT = 'brain_eval_log_complete_run_is_whole',
                  HINT = 'the run''s reviewer enters what is missing (evalledger review), then complete it again';
    END IF;

    computed := evalledger.brain_eval_decide_v2(NEW);
    NEW.aggregated_scores := computed -> 'aggregated_scores';
    NEW.hard_criteria_passed := (computed ->> 'hard_criteria_passed')::boolean;
    NEW.soft_criteria_passed_count := (computed ->> 'soft_criteria_passed_count')::int;
    NEW.decision := (computed ->> 'decision')::evalledger.eval_decision;
    NEW.decision_rationale := computed ->> 'decision_rationale';
    NEW.token_cost_usd := (computed ->> 'token_cost_usd')::numeric;
    NEW.reviewer_hours_spent := signed.reviewer_hours_spent;
    NEW.calibration_notes := signed.calibration_notes;
    RETURN NEW;
END;
$$;

CREATE TRIGGER brain_eval_log_20_decide BEFORE UPDATE ON brain_eval_log
    FOR EACH ROW EXECUTE FUNCTION brain_eval_log_decide_v2();
