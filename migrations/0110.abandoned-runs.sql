-- No abandoned brain-eval run without a trace (issue 37, item 2). A second open run of the same
-- brain, prompt and catalog was admitted while the first was open, and a run never completed was
-- never decided and counted in no pass rate: an operator could start runs until one looked good
-- and leave the others open. Now one run of a brain, prompt and catalog is open at a time (a
-- partial unique index, and a trigger naming the open run); an open run past its rubric's deadline
-- (open_run_days, 14 by default, from its created_at) is decided fail, "Abandoned: ...", by the next
-- run of its brain or any completion, and reads so before that (brain_eval_run_state_v1); the
-- runner cancels a run with a reason (brain_eval_cancel_v1). How a run was closed is a stored,
-- journalled, append-only input (brain_eval_run_closure) the ledger's recompute re-derives from.

SET LOCAL ROLE evalledger_code;
SET LOCAL search_path = evalledger, pg_temp;

-- How a brain-eval run that was not completed whole was closed (issue 37, item 2): abandoned (open
-- past its rubric's deadline, closed by the database) or cancelled (by the runner, with a reason).
-- A stored input, so the ledger's recompute re-derives the decision the closure made
-- (brain_eval_decide_v2 reads it). Only the closing functions write it (no role holds INSERT), and
-- every column is theirs: who closed it and when are the database's.
CREATE TABLE brain_eval_run_closure (
    eval_run_id      uuid        NOT NULL,
    closure          text        NOT NULL,
    reason           text        NOT NULL,
    closed_by        name        NOT NULL,
    reviewer_user_id uuid        NOT NULL,
    created_at       timestamptz NOT NULL DEFAULT now(),
    run_created_at   timestamptz NOT NULL,
    CONSTRAINT brain_eval_run_closure_pkey PRIMARY KEY (eval_run_id),
    CONSTRAINT brain_eval_run_closure_run_fkey FOREIGN KEY (eval_run_id) REFERENCES brain_eval_log (eval_run_id),
    CONSTRAINT brain_eval_run_closure_kind CHECK (closure IN ('abandoned', 'cancelled')),
    CONSTRAINT brain_eval_run_closure_reason_given CHECK (reason ~ '\S')
);

-- The same readers as the run's own row, by the same tier clock (the run's).
CREATE POLICY brain_eval_run_closure_runner ON brain_eval_run_closure FOR SELECT TO evalledger_runner
    USING (run_created_at >= evalledger.hot_tier_start_v1());

CREATE POLICY brain_eval_run_closure_reviewer ON brain_eval_run_closure FOR SELECT TO evalledger_reviewer
    USING (run_created_at >= evalledger.hot_tier_start_v1()
           AND reviewer_user_id = (SELECT evalledger.reviewer_id_of_v1(current_user)));

CREATE POLICY brain_eval_run_closure_revops ON brain_eval_run_closure FOR SELECT TO evalledger_revops
    USING (run_created_at >= evalledger.hot_tier_start_v1());

CREATE POLICY brain_eval_run_closure_auditor ON brain_eval_run_closure FOR SELECT TO evalledger_auditor USING (true);
GRANT SELECT ON brain_eval_run_closure TO evalledger_runner, evalledger_reviewer, evalledger_revops, evalledger_auditor;

CALL guard_append_only_v1(ARRAY['brain_eval_run_closure:UPDATE OR DELETE:refuse_change_v3']);
-- brain_eval_run_deadline_v1: when an open run recorded at `recorded` (its created_at, the
-- database's clock) under rubric `rubric` is abandoned: the rubric's open_run_days (14 when it
-- names none) later, counted in seconds so that no session TimeZone's daylight-saving change moves
-- it (timestamptz + interval 'N days' is N calendar days in the session's zone).
CREATE FUNCTION evalledger.brain_eval_run_deadline_v1(recorded timestamptz, rubric bigint) RETURNS timestamptz
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
    SELECT recorded + make_interval(secs => 86400 * coalesce((r.definition ->> 'open_run_days')::numeric, 14))
      FROM evalledger.rubric r WHERE r.rubric_id = rubric
$$;

GRANT EXECUTE ON FUNCTION brain_eval_run_deadline_v1(timestamptz, bigint)
    TO evalledger_runner, evalledger_reviewer, evalledger_revops, evalledger_auditor;
-- brain_eval_abandoned_v1: the rationale of a run closed without completing whole, by its closure
-- (or, for an open run past its deadline not yet closed, by what its closure will say). Every one
-- begins "Abandoned:", which readers filter on; times in UTC whatever the session's TimeZone.
CREATE FUNCTION evalledger.brain_eval_abandoned_v1(closure text, reason text, closed_by name) RETURNS text
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
    SELECT CASE closure
           WHEN 'cancelled' THEN format('Abandoned: cancelled by %s: %s', closed_by, reason)
           ELSE 'Abandoned: ' || reason END
$$;

GRANT EXECUTE ON FUNCTION brain_eval_abandoned_v1(text, text, name)
    TO evalledger_runner, evalledger_reviewer, evalledger_revops, evalledger_auditor;
-- brain_eval_overdue_v1: the reason an open run past its deadline is abandoned, in UTC.
CREATE FUNCTION evalledger.brain_eval_overdue_v1(deadline timestamptz) RETURNS text
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
    SELECT format('open past its deadline, %s UTC; closed by the database',
                  to_char(deadline AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS'))
$$;

GRANT EXECUTE ON FUNCTION brain_eval_overdue_v1(timestamptz)
    TO evalledger_runner, evalledger_reviewer, evalledger_revops, evalledger_auditor;
-- brain_eval_close_v1: close an open run without completing it whole: a cancellation records its
-- closure (with the reason and the login that closed it) first; then the run completes at the
-- database's clock, and its decision trigger (brain_eval_log_decide_v2) decides it fail as closed,
-- recording an abandonment itself for a run past its deadline. Whether it closed the run: false
-- when it was complete or closed already. The row is locked first, so a completion or a closure
-- racing with this one waits and then finds it closed.
CREATE FUNCTION evalledger.brain_eval_close_v1(run_id uuid, cancel_reason text) RETURNS boolean
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    run evalledger.brain_eval_log;
BEGIN
    SELECT l.* INTO run FROM evalledger.brain_eval_log l
     WHERE l.eval_run_id = run_id AND l.completed_at IS NULL FOR UPDATE;
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    IF cancel_reason IS NOT NULL THEN
        INSERT INTO evalledger.brain_eval_run_closure
               (eval_run_id, closure, reason, closed_by, reviewer_user_id, run_created_at)
        VALUES (run.eval_run_id, 'cancelled', cancel_reason, evalledger.caller_v1(), run.reviewer_user_id, run.created_at);
    END IF;
    UPDATE evalledger.brain_eval_log l SET completed_at = now() WHERE l.eval_run_id = run.eval_run_id;
    RETURN true;
END;
$$;
-- brain_eval_cancel_v1: the runner cancels an open run it may read, with a reason: a recorded act
-- (brain_eval_run_closure), and the run is decided fail, "Abandoned: cancelled by <login>: <reason>",
-- as an abandoned one is. Whether it cancelled it; a run complete or closed already, or one the
-- caller may not read (caller_reads_v1: a cold run is no run), is not cancelled.
CREATE FUNCTION evalledger.brain_eval_cancel_v1(run_id uuid, reason text) RETURNS boolean
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    IF reason IS NULL OR reason !~ '\S' THEN
        RAISE EXCEPTION 'evalledger: a cancellation needs a reason'
            USING ERRCODE = 'check_violation', CONSTRAINT = 'brain_eval_run_closure_reason_given';
    END IF;
    IF NOT EXISTS (SELECT 1 FROM evalledger.brain_eval_log l
                    WHERE l.eval_run_id = run_id AND evalledger.caller_reads_v1(l.created_at, NULL)) THEN
        RETURN false;
    END IF;
    RETURN evalledger.brain_eval_close_v1(run_id, reason);
END;
$$;

-- The runner's, as completion is.
GRANT EXECUTE ON FUNCTION brain_eval_cancel_v1(uuid, text) TO evalledger_runner;
-- brain_eval_run_state_rows_v1: the view's rows. SECURITY INVOKER (the default), so each reader
-- reads through its own row-level security on every server the ledger supports (a view is
-- security_invoker only from PostgreSQL 15). Inlined into the caller's query, so every operator is
-- pg_catalog's by name (an inlined function has no search_path of its own).
CREATE FUNCTION evalledger.brain_eval_run_state_rows_v1()
RETURNS TABLE (eval_run_id uuid, brain_under_test varchar, system_prompt_hash varchar,
               question_catalog_version varchar, started_at timestamptz, created_at timestamptz,
               completed_at timestamptz, deadline_at timestamptz, state text, decision evalledger.eval_decision,
               decision_rationale text)
LANGUAGE sql STABLE AS $$
SELECT l.eval_run_id, l.brain_under_test, l.system_prompt_hash, l.question_catalog_version, l.started_at,
       l.created_at, l.completed_at, d.deadline_at,
       CASE WHEN c.eval_run_id IS NOT NULL THEN c.closure
            WHEN l.completed_at IS NOT NULL THEN 'complete'
            WHEN pg_catalog.now() OPERATOR(pg_catalog.>=) d.deadline_at THEN 'abandoned'
            ELSE 'open' END AS state,
       CASE WHEN l.completed_at IS NULL AND pg_catalog.now() OPERATOR(pg_catalog.>=) d.deadline_at THEN 'fail'::evalledger.eval_decision
            ELSE l.decision END AS decision,
       CASE WHEN l.completed_at IS NULL AND pg_catalog.now() OPERATOR(pg_catalog.>=) d.deadline_at
            THEN evalledger.brain_eval_abandoned_v1('abandoned', evalledger.brain_eval_overdue_v1(d.deadline_at), NULL)
            ELSE l.decision_rationale END AS decision_rationale
  FROM evalledger.brain_eval_log l
  CROSS JOIN LATERAL (SELECT evalledger.brain_eval_run_deadline_v1(l.created_at, l.rubric_id) AS deadline_at) d
  LEFT JOIN evalledger.brain_eval_run_closure c ON c.eval_run_id OPERATOR(pg_catalog.=) l.eval_run_id
$$;

GRANT EXECUTE ON FUNCTION brain_eval_run_state_rows_v1()
    TO evalledger_runner, evalledger_reviewer, evalledger_revops, evalledger_auditor;
-- brain_eval_run_state_v1: each run as a reader should take it, whether or not anything closed it
-- yet: open, complete, cancelled or abandoned (an open run past its deadline, by the database's
-- clock, reads abandoned, decided fail, before the next write closes it), with the decision and
-- rationale it has or will have.
CREATE VIEW brain_eval_run_state_v1 AS
    SELECT * FROM evalledger.brain_eval_run_state_rows_v1();
COMMENT ON VIEW evalledger.brain_eval_run_state_v1 IS
    'Each brain-eval run as a reader should take it: open, complete, cancelled or abandoned (an open run past its rubric''s deadline reads abandoned, decided fail, before anything closes it), with the decision and rationale it has or will have.';
COMMENT ON COLUMN evalledger.brain_eval_run_state_v1.eval_run_id IS 'The run (brain_eval_log.eval_run_id).';
COMMENT ON COLUMN evalledger.brain_eval_run_state_v1.brain_under_test IS 'The brain (target_id), e.g. AGT-902.';
COMMENT ON COLUMN evalledger.brain_eval_run_state_v1.system_prompt_hash IS 'SHA-256 hex of the run''s system prompt.';
COMMENT ON COLUMN evalledger.brain_eval_run_state_v1.question_catalog_version IS 'The question catalog the run asks.';
COMMENT ON COLUMN evalledger.brain_eval_run_state_v1.started_at IS 'When the run started (timestamptz).';
COMMENT ON COLUMN evalledger.brain_eval_run_state_v1.created_at IS 'When the database recorded the run (timestamptz): its deadline counts from here.';
COMMENT ON COLUMN evalledger.brain_eval_run_state_v1.completed_at IS 'When the run was completed or closed (timestamptz; NULL while open).';
COMMENT ON COLUMN evalledger.brain_eval_run_state_v1.deadline_at IS 'When an open run is abandoned (timestamptz): created_at plus the rubric''s open_run_days (14 by default), in 24-hour days.';
COMMENT ON COLUMN evalledger.brain_eval_run_state_v1.state IS 'open, complete, cancelled (by the runner, with a reason) or abandoned (open past deadline_at, or closed so).';
COMMENT ON COLUMN evalledger.brain_eval_run_state_v1.decision IS 'The decision: the stored one, or fail for an open run past its deadline (NULL while open).';
COMMENT ON COLUMN evalledger.brain_eval_run_state_v1.decision_rationale IS 'The rationale: the stored one, or the abandonment''s for an open run past its deadline (it begins "Abandoned:").';

GRANT SELECT ON brain_eval_run_state_v1 TO evalledger_runner, evalledger_reviewer, evalledger_revops, evalledger_auditor;

-- security_invoker where the server has it (15+), belt and braces: the rows function is
-- SECURITY INVOKER already.
DO $invoker$
BEGIN
    IF current_setting('server_version_num')::int >= 150000 THEN
        ALTER VIEW evalledger.brain_eval_run_state_v1 SET (security_invoker = true);
    END IF;
END
$invoker$;

-- A closed run is decided fail by its closure (brain_eval_decide_v2, which the recompute calls too),
-- and the decision trigger records an abandonment past the deadline and decides a closed run
-- without asking that it be whole.
CREATE OR REPLACE FUNCTION evalledger.brain_eval_decide_v2(run evalledger.brain_eval_log) RETURNS jsonb
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    policy jsonb;
    brains text[] := evalledger.run_brains_v1(run.brain_under_test, run.system_prompt_hash);
    scores jsonb;
    criterion jsonb;
    value numeric;
    hard_passed boolean := true;
    hard_misses text[] := '{}';
    soft_misses text[] := '{}';
    soft_passed int := 0;
    soft_total int := 0;
    decided text;
    label text;
    rationale text;
    closed evalledger.brain_eval_run_closure;
BEGIN
    SELECT r.definition INTO policy FROM evalledger.rubric r WHERE r.rubric_id = run.rubric_id;
    scores := evalledger.brain_eval_scores_v1(run.eval_run_id, policy -> 'confidence_band');

    FOR criterion IN SELECT * FROM jsonb_array_elements(policy -> 'hard_criteria') LOOP
        CONTINUE WHEN criterion ? 'applies_to' AND NOT (criterion -> 'applies_to') ?| brains;
        value := (scores ->> (criterion ->> 'key'))::numeric;
        -- Unmeasurable (null) is not met: missing evidence never passes.
        IF NOT coalesce(evalledger.criterion_met_v1(criterion, value), false) THEN
            hard_passed := false;
            hard_misses := hard_misses || evalledger.criterion_miss_v1(criterion, value);
        END IF;
    END LOOP;

    FOR criterion IN SELECT * FROM jsonb_array_elements(policy -> 'soft_criteria') LOOP
        soft_total := soft_total + 1;
        value := (scores ->> (criterion ->> 'key'))::numeric;
        IF coalesce(evalledger.criterion_met_v1(criterion, value), false) THEN
            soft_passed := soft_passed + 1;
        ELSE
            soft_misses := soft_misses || evalledger.criterion_miss_v1(criterion, value);
        END IF;
    END LOOP;

    IF hard_passed THEN
        SELECT step ->> 'decision' INTO decided
          FROM jsonb_array_elements(policy -> 'decision_ladder') step
         WHERE (step ->> 'min_soft_passed')::int <= soft_passed
         ORDER BY (step ->> 'min_soft_passed')::int DESC LIMIT 1;
    ELSE
        decided := policy ->> 'hard_failure_decision';
    END IF;
    label := upper(left(decided, 1)) || replace(substr(decided, 2), '_', ' ');

    IF NOT hard_passed THEN
        rationale := format('%s: hard criteria missed: %s', label, array_to_string(hard_misses, '; '))
            || CASE WHEN cardinality(soft_misses) > 0
                    THEN '; also ' || array_to_string(soft_misses, '; ') ELSE '' END || '.';
    ELSIF cardinality(soft_misses) = 0 THEN
        rationale := format('%s: all hard criteria passed; all %s soft criteria within threshold.', label, soft_total);
    ELSE
        rationale := format('%s: %s; all hard criteria passed', label, array_to_string(soft_misses, '; '))
            || CASE WHEN decided = 'fail'
                    THEN format(', but only %s of %s soft criteria within threshold', soft_passed, soft_total)
                    ELSE '' END || '.';
    END IF;

    SELECT c.* INTO closed FROM evalledger.brain_eval_run_closure c WHERE c.eval_run_id = run.eval_run_id;
    IF closed.eval_run_id IS NOT NULL THEN
        hard_passed := false;
        decided := 'fail';
        rationale := evalledger.brain_eval_abandoned_v1(closed.closure, closed.reason, closed.closed_by);
    END IF;

    RETURN jsonb_build_object(
        'aggregated_scores', scores,
        'hard_criteria_passed', hard_passed,
        'soft_criteria_passed_count', soft_passed,
        'decision', decided,
        'decision_rationale', rationale,
        'token_cost_usd', (SELECT coalesce(sum(a.token_cost_usd), 0)
                             FROM evalledger.brain_eval_question_score q
                             JOIN evalledger.brain_analysis_log a ON a.analysis_id = q.brain_analysis_id
                            WHERE q.eval_run_id = run.eval_run_id));
END;
$$;

CREATE OR REPLACE FUNCTION evalledger.brain_eval_log_decide_v2() RETURNS trigger
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

-- A rubric's open_run_days is checked at admission: a number of days from 1 to 366.
CREATE OR REPLACE FUNCTION evalledger.rubric_check_v2(suite text, definition jsonb) RETURNS text
LANGUAGE plpgsql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    item jsonb;
    hard jsonb;
    field text;
    problem text;
BEGIN
    IF definition ->> 'suite' IS DISTINCT FROM suite THEN
        RETURN format('definition.suite is %s, not %s', coalesce(definition ->> 'suite', 'missing'), suite);
    END IF;
    IF jsonb_typeof(definition -> 'dimensions') IS DISTINCT FROM 'array'
       OR jsonb_array_length(definition -> 'dimensions') = 0 THEN
        RETURN 'dimensions must be a non-empty array';
    END IF;
    SELECT format('dimensions[%s].key must be a non-empty string', n - 1) INTO problem
      FROM jsonb_array_elements(definition -> 'dimensions') WITH ORDINALITY x(d, n)
     WHERE jsonb_typeof(d -> 'key') IS DISTINCT FROM 'string' OR d ->> 'key' = '' ORDER BY n LIMIT 1;
    IF problem IS NOT NULL THEN
        RETURN problem;
    END IF;
    CASE suite
    WHEN 'brain-eval' THEN
        IF definition ->> 'hard_failure_decision' IS DISTINCT FROM 'fail' THEN
            RETURN format('hard_failure_decision must be fail, not %s', coalesce(definition ->> 'hard_failure_decision', 'missing'));
        END IF;
        FOREACH field IN ARRAY ARRAY['hard_criteria', 'soft_criteria', 'decision_ladder'] LOOP
            IF jsonb_typeof(definition -> field) IS DISTINCT FROM 'array' THEN
                RETURN format('%s must be an array', field);
            END IF;
        END LOOP;
        IF jsonb_typeof(definition -> 'diagnosis_question_types') IS DISTINCT FROM 'array'
           OR jsonb_path_exists(definition, '$.diagnosis_question_types[*] ? (@.type() != "string")') THEN
            RETURN 'diagnosis_question_types must be an array of question types (which have a diagnosis to score)';
        END IF;
        -- The deadline of an open run (brain_eval_run_deadline_v1; 14 days when absent).
        IF definition ? 'open_run_days' AND (jsonb_typeof(definition -> 'open_run_days') IS DISTINCT FROM 'number'
           OR (definition ->> 'open_run_days')::numeric NOT BETWEEN 1 AND 366) THEN
            RETURN 'open_run_days must be a number of days from 1 to 366';
        END IF;
        FOR item IN SELECT c FROM jsonb_array_elements((definition -> 'hard_criteria') || (definition -> 'soft_criteria')) c LOOP
            IF jsonb_typeof(item -> 'key') IS DISTINCT FROM 'string' OR item ->> 'op' IS NULL
               OR item ->> 'op' NOT IN ('<=', '>=') OR jsonb_typeof(item -> 'threshold') IS DISTINCT FROM 'number' THEN
                RETURN format('criterion %s needs a key, an op (<= or >=) and a numeric threshold', item);
            END IF;
        END LOOP;
        FOR item IN SELECT s FROM jsonb_array_elements(definition -> 'decision_ladder') s LOOP
            IF jsonb_typeof(item -> 'min_soft_passed') IS DISTINCT FROM 'number'
               OR item ->> 'decision' IS NULL
               OR item ->> 'decision' NOT IN ('pass', 'pass_with_notes', 'conditional', 'fail') THEN
                RETURN format('decision_ladder step %s needs a numeric min_soft_passed and a decision', item);
            END IF;
        END LOOP;
        IF NOT EXISTS (SELECT 1 FROM jsonb_array_elements(definition -> 'decision_ladder') s
                        WHERE (s ->> 'min_soft_passed')::numeric = 0) THEN
            RETURN 'decision_ladder needs a step at min_soft_passed 0';
        END IF;
        FOR hard IN SELECT h::jsonb FROM unnest(ARRAY[
                '{"key": "hallucination_rate", "op": "<=", "threshold": 0.02}',
                '{"key": "staleness_recognition_rate", "op": ">=", "threshold": 1.0}',
                '{"key": "lever_mapping_correctness", "op": ">=", "threshold": 1.0, "brain": "AGT-902"}']) h LOOP
            IF NOT EXISTS (
                SELECT 1 FROM jsonb_array_elements(definition -> 'hard_criteria') c
                 WHERE c ->> 'key' = hard ->> 'key' AND c ->> 'op' = hard ->> 'op'
                   AND CASE hard ->> 'op' WHEN '<=' THEN (c ->> 'threshold')::numeric <= (hard ->> 'threshold')::numeric
                                          ELSE (c ->> 'threshold')::numeric >= (hard ->> 'threshold')::numeric END
                   AND CASE WHEN hard ? 'brain' THEN NOT c ? 'applies_to' OR (c -> 'applies_to') ? (hard ->> 'brain')
                            ELSE NOT c ? 'applies_to' END) THEN
                RETURN format('hard criterion %s %s %s is required (seed 002)', hard ->> 'key', hard ->> 'op', hard ->> 'threshold');
            END IF;
        END LOOP;
        IF jsonb_typeof(definition #> '{confidence_band,high_confidence_pct,0}') IS DISTINCT FROM 'number'
           OR jsonb_typeof(definition #> '{confidence_band,high_confidence_pct,1}') IS DISTINCT FROM 'number'
           OR jsonb_typeof(definition #> '{confidence_band,speculation_pct_max}') IS DISTINCT FROM 'number' THEN
            RETURN 'confidence_band needs numeric high_confidence_pct [low, high] and speculation_pct_max';
        END IF;
        SELECT format('question_pass.%s must be a number', k) INTO problem
          FROM unnest(ARRAY['max_hallucinations', 'min_citation_rate', 'min_diagnosis_accuracy',
                            'min_narrative_coherence', 'max_lever_violations']) k
         WHERE jsonb_typeof(definition -> 'question_pass' -> k) IS DISTINCT FROM 'number' LIMIT 1;
        RETURN problem;
    WHEN 'takes-quality' THEN
        IF jsonb_typeof(definition #> '{scale,min}') IS DISTINCT FROM 'number'
           OR jsonb_typeof(definition #> '{scale,max}') IS DISTINCT FROM 'number'
           OR (definition #>> '{scale,min}')::numeric >= (definition #>> '{scale,max}')::numeric THEN
            RETURN 'scale needs numeric min < max';
        END IF;
        IF jsonb_typeof(definition #> '{pass_rule,every_dim_mean_at_least}') IS DISTINCT FROM 'number'
           OR jsonb_typeof(definition #> '{pass_rule,every_dim_min_at_least}') IS DISTINCT FROM 'number' THEN
            RETURN 'pass_rule needs numeric every_dim_mean_at_least and every_dim_min_at_least';
        END IF;
        IF jsonb_typeof(definition #> '{quorum,min_contributing_fraction,0}') IS DISTINCT FROM 'number'
           OR jsonb_typeof(definition #> '{quorum,min_contributing_fraction,1}') IS DISTINCT FROM 'number'
           OR (definition #>> '{quorum,min_contributing_fraction,1}')::numeric <= 0 THEN
            RETURN 'quorum.min_contributing_fraction needs [numerator, positive denominator]';
        END IF;
        IF jsonb_typeof(definition #> '{panel,min_models}') IS DISTINCT FROM 'number'
           OR jsonb_typeof(definition #> '{panel,min_families}') IS DISTINCT FROM 'number'
           OR (definition #>> '{panel,min_models}')::numeric < 3
           OR (definition #>> '{panel,min_families}')::numeric < 2
           OR (definition #>> '{panel,min_families}')::numeric > (definition #>> '{panel,min_models}')::numeric
           OR (definition #>> '{panel,min_models}')::numeric <> trunc((definition #>> '{panel,min_models}')::numeric)
           OR (definition #>> '{panel,min_families}')::numeric <> trunc((definition #>> '{panel,min_families}')::numeric) THEN
            RETURN 'panel needs whole numbers min_models >= 3 (seed 000: three frontier models) and '
                   'min_families >= 2 (a cross-family panel), no more families than models';
        END IF;
        RETURN NULL;
    WHEN 'work-quality' THEN
        IF jsonb_typeof(definition #> '{scale,min}') IS DISTINCT FROM 'number'
           OR jsonb_typeof(definition #> '{scale,max}') IS DISTINCT FROM 'number'
           OR (definition #>> '{scale,min}')::numeric >= (definition #>> '{scale,max}')::numeric THEN
            RETURN 'scale needs numeric min < max';
        END IF;
        IF jsonb_typeof(definition #> '{compare,same_band}') IS DISTINCT FROM 'number'
           OR jsonb_typeof(definition #> '{compare,regress_tolerance}') IS DISTINCT FROM 'number' THEN
            RETURN 'compare needs numeric same_band and regress_tolerance';
        END IF;
        RETURN NULL;
    ELSE
        RETURN format('no suite %s', suite);
    END CASE;
END;
$$;

-- The retention functions know the closures: a closure ages with its run (its run_created_at), is
-- planned, due and purged with it, before the run its key references.
CREATE OR REPLACE FUNCTION evalledger.retention_due_v2(table_name text, r jsonb) RETURNS boolean
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    clock timestamptz;
    brain text;
    prompt text;
    run uuid;
BEGIN
    CASE table_name
    WHEN 'brain_eval_log' THEN
        clock := r ->> 'created_at';
        brain := r ->> 'brain_under_test';
        prompt := r ->> 'system_prompt_hash';
        run := r ->> 'eval_run_id';
    WHEN 'brain_eval_question_score', 'brain_eval_harness_run', 'brain_eval_harness_answer',
         'brain_eval_judge_suggestion', 'brain_eval_review_entry', 'brain_eval_run_review',
         'brain_eval_suggestion_shown', 'brain_eval_run_closure' THEN
        clock := r ->> 'run_created_at';
        run := r ->> 'eval_run_id';
        SELECT l.brain_under_test, l.system_prompt_hash INTO brain, prompt
          FROM evalledger.brain_eval_log l WHERE l.eval_run_id = run;
    WHEN 'brain_analysis_log' THEN
        clock := r ->> 'created_at';
        brain := r ->> 'brain';
        prompt := r ->> 'system_prompt_hash';
    WHEN 'brain_eval_import', 'eval_work_quality_snapshots', 'eval_candidate_keys' THEN
        clock := r ->> 'created_at';
    WHEN 'eval_takes_quality_runs' THEN
        clock := r ->> 'created_at';
        brain := r ->> 'target_id';
    WHEN 'eval_takes_quality_judge_verdicts' THEN
        clock := r ->> 'run_created_at';
        SELECT t.target_id INTO brain FROM evalledger.eval_takes_quality_runs t WHERE t.id = (r ->> 'run_id')::bigint;
    WHEN 'eval_work_quality_judge_verdicts' THEN
        clock := r ->> 'snapshot_created_at';
    WHEN 'eval_capture_failures' THEN
        clock := r ->> 'recorded_at';
    WHEN 'legal_hold' THEN
        IF r ->> 'released_at' IS NULL
           AND NOT EXISTS (SELECT 1 FROM evalledger.legal_hold_release x WHERE x.hold_id = (r ->> 'hold_id')::bigint) THEN
            RETURN false;
        END IF;
        IF r ->> 'eval_run_id' IS NOT NULL THEN
            SELECT l.created_at, l.brain_under_test, l.system_prompt_hash, l.eval_run_id INTO clock, brain, prompt, run
              FROM evalledger.brain_eval_log l WHERE l.eval_run_id = (r ->> 'eval_run_id')::uuid;
        ELSE
            SELECT coalesce((r ->> 'released_at')::timestamptz, max(x.released_at)) INTO clock
              FROM evalledger.legal_hold_release x WHERE x.hold_id = (r ->> 'hold_id')::bigint;
            RETURN clock < evalledger.purge_horizon_at_v1();
        END IF;
    WHEN 'legal_hold_release' THEN
        RETURN NOT EXISTS (SELECT 1 FROM evalledger.legal_hold h WHERE h.hold_id = (r ->> 'hold_id')::bigint);
    ELSE
        RETURN false;
    END CASE;
    RETURN coalesce(clock < evalledger.purge_horizon_at_v1()
                    AND NOT evalledger.retention_held_v2(clock, evalledger.run_brains_v1(brain, prompt), run), false);
END;
$$;

CREATE OR REPLACE FUNCTION evalledger.retention_rows_v2()
RETURNS TABLE (table_name text, tier_clock timestamptz, brains text[], run uuid, pinned boolean)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
    WITH runs AS (
        SELECT l.eval_run_id, l.brain_under_test, l.created_at, l.import_id,
               evalledger.run_brains_v1(l.brain_under_test, l.system_prompt_hash) AS brains,
               l.created_at < evalledger.purge_horizon_at_v1()
               AND NOT evalledger.retention_held_v2(l.created_at,
                                                    evalledger.run_brains_v1(l.brain_under_test, l.system_prompt_hash),
                                                    l.eval_run_id) AS goes
          FROM evalledger.brain_eval_log l
    )
    SELECT 'brain_eval_log', r.created_at, r.brains, r.eval_run_id, false FROM runs r
    UNION ALL
    SELECT 'brain_eval_question_score', q.run_created_at, r.brains, q.eval_run_id, false
      FROM evalledger.brain_eval_question_score q JOIN runs r USING (eval_run_id)
    UNION ALL
    SELECT 'brain_eval_harness_run', t.run_created_at, r.brains, t.eval_run_id, false
      FROM evalledger.brain_eval_harness_run t JOIN runs r USING (eval_run_id)
    UNION ALL
    SELECT 'brain_eval_harness_answer', t.run_created_at, r.brains, t.eval_run_id, false
      FROM evalledger.brain_eval_harness_answer t JOIN runs r USING (eval_run_id)
    UNION ALL
    SELECT 'brain_eval_judge_suggestion', t.run_created_at, r.brains, t.eval_run_id, false
      FROM evalledger.brain_eval_judge_suggestion t JOIN runs r USING (eval_run_id)
    UNION ALL
    SELECT 'brain_eval_review_entry', t.run_created_at, r.brains, t.eval_run_id, false
      FROM evalledger.brain_eval_review_entry t JOIN runs r USING (eval_run_id)
    UNION ALL
    SELECT 'brain_eval_run_review', t.run_created_at, r.brains, t.eval_run_id, false
      FROM evalledger.brain_eval_run_review t JOIN runs r USING (eval_run_id)
    UNION ALL
    SELECT 'brain_eval_suggestion_shown', t.run_created_at, r.brains, t.eval_run_id, false
      FROM evalledger.brain_eval_suggestion_shown t JOIN runs r USING (eval_run_id)
    UNION ALL
    SELECT 'brain_eval_run_closure', t.run_created_at, r.brains, t.eval_run_id, false
      FROM evalledger.brain_eval_run_closure t JOIN runs r USING (eval_run_id)
    UNION ALL
    SELECT 'brain_analysis_log', a.created_at, evalledger.run_brains_v1(a.brain, a.system_prompt_hash), NULL::uuid,
           EXISTS (SELECT 1 FROM evalledger.brain_eval_question_score q JOIN runs r USING (eval_run_id)
                    WHERE q.brain_analysis_id = a.analysis_id AND NOT r.goes)
           OR EXISTS (SELECT 1 FROM evalledger.brain_eval_harness_answer h JOIN runs r USING (eval_run_id)
                       WHERE h.analysis_id = a.analysis_id AND NOT r.goes)
      FROM evalledger.brain_analysis_log a
    UNION ALL
    SELECT 'brain_eval_import', i.created_at, NULL::text[], NULL,
           EXISTS (SELECT 1 FROM runs r WHERE r.import_id = i.import_id AND NOT r.goes)
      FROM evalledger.brain_eval_import i
    UNION ALL
    SELECT 'eval_takes_quality_runs', t.created_at, ARRAY[t.target_id::text], NULL, false
      FROM evalledger.eval_takes_quality_runs t
    UNION ALL
    SELECT 'eval_takes_quality_judge_verdicts', v.run_created_at, ARRAY[t.target_id::text], NULL, false
      FROM evalledger.eval_takes_quality_judge_verdicts v JOIN evalledger.eval_takes_quality_runs t ON t.id = v.run_id
    UNION ALL
    SELECT 'eval_work_quality_snapshots', s.created_at, NULL, NULL, false
      FROM evalledger.eval_work_quality_snapshots s
    UNION ALL
    SELECT 'eval_work_quality_judge_verdicts', v.snapshot_created_at, NULL, NULL, false
      FROM evalledger.eval_work_quality_judge_verdicts v
    UNION ALL
    SELECT 'eval_candidate_keys', k.created_at, NULL, NULL, false FROM evalledger.eval_candidate_keys k
    UNION ALL
    SELECT 'eval_capture_failures', f.recorded_at, NULL, NULL, false FROM evalledger.eval_capture_failures f
$$;

CREATE OR REPLACE FUNCTION evalledger.retention_plan_v2()
RETURNS TABLE (table_name text, hot bigint, cold bigint, due bigint, held bigint, held_by text)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
    WITH holds AS (
        SELECT h.hold_id, h.eval_run_id, h.target_id, h.held_from, h.held_to,
               CASE WHEN h.eval_run_id IS NOT NULL THEN 'run ' || h.eval_run_id
                    WHEN h.target_id IS NOT NULL THEN 'brain ' || h.target_id
                    ELSE 'range ' || to_char(h.held_from AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS')
                         || '..' || to_char(h.held_to AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS') END AS scope
          FROM evalledger.legal_hold h
         WHERE h.released_at IS NULL
           AND NOT EXISTS (SELECT 1 FROM evalledger.legal_hold_release x WHERE x.hold_id = h.hold_id)
    ),
    parts AS (
        SELECT c.relname::text AS part,
               (to_date(right(c.relname, 6), 'YYYYMM'))::timestamp AT TIME ZONE 'UTC' AS month_start,
               (to_date(right(c.relname, 6), 'YYYYMM') + interval '1 month')::timestamp AT TIME ZONE 'UTC' AS month_end,
               evalledger.capture_partition_expired_v2(c.relname) AS expired
          FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
         WHERE i.inhparent = 'evalledger.eval_candidates'::regclass
    ),
    rows AS (
        SELECT r.table_name, r.tier_clock, r.brains, r.run, r.pinned,
               r.tier_clock >= evalledger.hot_tier_start_v1() AS hot,
               r.tier_clock < evalledger.purge_horizon_at_v1() AS past
          FROM evalledger.retention_rows_v2() r
        UNION ALL
        SELECT 'eval_candidates', c.created_at, NULL::text[], NULL, false,
               c.created_at >= evalledger.hot_tier_start_v1(), p.expired
          FROM evalledger.eval_candidates c
          JOIN parts p ON c.created_at >= p.month_start AND c.created_at < p.month_end
    ),
    covered AS (
        SELECT r.table_name, h.hold_id, h.scope, count(*) AS n
          FROM rows r
          JOIN holds h ON h.eval_run_id = r.run OR h.target_id = ANY (r.brains)
                       OR (r.table_name <> 'eval_candidates' AND r.tier_clock BETWEEN h.held_from AND h.held_to)
                       OR (r.table_name = 'eval_candidates' AND EXISTS (
                               SELECT 1 FROM parts p
                                WHERE r.tier_clock >= p.month_start AND r.tier_clock < p.month_end
                                  AND h.held_from < p.month_end AND h.held_to >= p.month_start))
         WHERE r.past
         GROUP BY r.table_name, h.hold_id, h.scope
    ),
    classified AS (
        SELECT r.table_name, r.hot, r.past, r.pinned,
               r.past AND (r.pinned OR
                   CASE WHEN r.table_name = 'eval_candidates' THEN EXISTS (
                            SELECT 1 FROM parts p JOIN holds h ON h.held_from < p.month_end AND h.held_to >= p.month_start
                             WHERE r.tier_clock >= p.month_start AND r.tier_clock < p.month_end)
                        ELSE evalledger.retention_held_v2(r.tier_clock, r.brains, r.run) END) AS held
          FROM rows r
    ),
    tables AS (
        SELECT t.table_name, t.n
          FROM unnest(ARRAY['brain_eval_log', 'brain_eval_question_score', 'brain_eval_harness_run',
                            'brain_eval_harness_answer', 'brain_eval_judge_suggestion', 'brain_eval_review_entry',
                            'brain_eval_run_review', 'brain_eval_suggestion_shown', 'brain_eval_run_closure',
                            'brain_analysis_log', 'brain_eval_import',
                            'eval_takes_quality_runs', 'eval_takes_quality_judge_verdicts',
                            'eval_work_quality_snapshots', 'eval_work_quality_judge_verdicts',
                            'eval_candidates', 'eval_candidate_keys', 'eval_capture_failures'])
               WITH ORDINALITY AS t (table_name, n)
    )
    SELECT t.table_name,
           count(c.table_name) FILTER (WHERE c.hot),
           count(c.table_name) FILTER (WHERE NOT c.hot AND NOT c.past),
           count(c.table_name) FILTER (WHERE c.past AND NOT c.held),
           count(c.table_name) FILTER (WHERE c.held),
           nullif(concat_ws('; ',
               (SELECT string_agg(format('hold %s (%s): %s', v.hold_id, v.scope, v.n), '; ' ORDER BY v.hold_id)
                  FROM covered v WHERE v.table_name = t.table_name),
               CASE WHEN count(*) FILTER (WHERE c.pinned AND c.past) > 0
                    THEN format('%s referenced by kept rows', count(*) FILTER (WHERE c.pinned AND c.past)) END), '')
      FROM tables t LEFT JOIN classified c USING (table_name)
     GROUP BY t.table_name, t.n
     ORDER BY t.n
$$;

CREATE OR REPLACE FUNCTION evalledger.retention_purge_v2()
RETURNS TABLE (purged_table text, purged_rows bigint, purged_run uuid, purged_partition text)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET TimeZone = 'UTC'
SET lock_timeout = '5s' AS $$
DECLARE
    horizon timestamptz := evalledger.purge_horizon_at_v1();
    runs uuid[];
    tq_runs bigint[];
    snapshots bigint[];
    part record;
    n bigint;
    purged text;
BEGIN
    PERFORM evalledger.require_read_committed_v2('the retention purge');
    -- No hold is placed or released while the purge decides and deletes.
    BEGIN
        LOCK TABLE evalledger.legal_hold, evalledger.legal_hold_release IN SHARE MODE;
    EXCEPTION WHEN lock_not_available THEN
        SELECT string_agg(DISTINCT a.usename::text, ', ') INTO purged
          FROM pg_catalog.pg_locks l JOIN pg_catalog.pg_stat_activity a ON a.pid = l.pid
         WHERE l.locktype = 'relation' AND l.granted AND l.pid <> pg_catalog.pg_backend_pid()
           AND l.relation IN ('evalledger.legal_hold'::regclass, 'evalledger.legal_hold_release'::regclass);
        RAISE EXCEPTION 'evalledger: the purge waited 5 s for the legal holds, which % holds in an open transaction: nothing purged',
                coalesce(purged, 'another session')
            USING ERRCODE = 'lock_not_available', HINT = 'run the purge again once that transaction ends';
    END;
    INSERT INTO evalledger.retention_purge_marker (txid) VALUES (txid_current());

    -- brain-eval runs, children first
    SELECT coalesce(array_agg(l.eval_run_id), '{}') INTO runs
      FROM evalledger.brain_eval_log l
     WHERE l.created_at < horizon
       AND NOT evalledger.retention_held_v2(l.created_at, evalledger.run_brains_v1(l.brain_under_test, l.system_prompt_hash),
                                            l.eval_run_id);
    -- In foreign-key order; released holds of those runs go with them (their releases by ON DELETE
    -- CASCADE). Each table's rows, counted per run, into the log.
    FOREACH purged IN ARRAY ARRAY['brain_eval_judge_suggestion', 'brain_eval_harness_answer', 'brain_eval_review_entry',
                                  'brain_eval_suggestion_shown', 'brain_eval_run_review', 'brain_eval_run_closure',
                                  'brain_eval_question_score',
                                  'brain_eval_harness_run', 'legal_hold', 'brain_eval_log'] LOOP
        EXECUTE format('WITH gone AS (DELETE FROM evalledger.%I t WHERE t.eval_run_id = ANY ($1) RETURNING t.eval_run_id) '
                       'INSERT INTO evalledger.retention_purge_log (table_name, row_count, eval_run_id) '
                       'SELECT %L, count(*), g.eval_run_id FROM gone g GROUP BY g.eval_run_id', purged, purged)
            USING runs;
    END LOOP;

    -- Analyses (production and eval) and imports that nothing references any more.
    WITH gone AS (
        DELETE FROM evalledger.brain_analysis_log a
         WHERE a.created_at < horizon
           AND NOT evalledger.retention_held_v2(a.created_at, evalledger.run_brains_v1(a.brain, a.system_prompt_hash), NULL)
           AND NOT EXISTS (SELECT 1 FROM evalledger.brain_eval_question_score q WHERE q.brain_analysis_id = a.analysis_id)
           AND NOT EXISTS (SELECT 1 FROM evalledger.brain_eval_harness_answer h WHERE h.analysis_id = a.analysis_id)
        RETURNING 1)
    INSERT INTO evalledger.retention_purge_log (table_name, row_count)
    SELECT 'brain_analysis_log', count(*) FROM gone HAVING count(*) > 0;
    WITH gone AS (
        DELETE FROM evalledger.brain_eval_import i
         WHERE i.created_at < horizon
           AND NOT evalledger.retention_held_v2(i.created_at, NULL, NULL)
           AND NOT EXISTS (SELECT 1 FROM evalledger.brain_eval_log l WHERE l.import_id = i.import_id)
        RETURNING 1)
    INSERT INTO evalledger.retention_purge_log (table_name, row_count)
    SELECT 'brain_eval_import', count(*) FROM gone HAVING count(*) > 0;

    -- takes-quality: verdicts, then runs
    SELECT coalesce(array_agg(t.id), '{}') INTO tq_runs
      FROM evalledger.eval_takes_quality_runs t
     WHERE t.created_at < horizon AND NOT evalledger.retention_held_v2(t.created_at, ARRAY[t.target_id::text], NULL);
    WITH gone AS (DELETE FROM evalledger.eval_takes_quality_judge_verdicts v WHERE v.run_id = ANY (tq_runs) RETURNING 1)
    INSERT INTO evalledger.retention_purge_log (table_name, row_count)
    SELECT 'eval_takes_quality_judge_verdicts', count(*) FROM gone HAVING count(*) > 0;
    WITH gone AS (DELETE FROM evalledger.eval_takes_quality_runs t WHERE t.id = ANY (tq_runs) RETURNING 1)
    INSERT INTO evalledger.retention_purge_log (table_name, row_count)
    SELECT 'eval_takes_quality_runs', count(*) FROM gone HAVING count(*) > 0;

    -- work-quality: verdicts, then snapshots, each as it falls due: a snapshot that a kept one
    -- compared with does not pin it (the kept one names its run and keeps the comparison).
    SELECT coalesce(array_agg(s.snapshot_id), '{}') INTO snapshots
      FROM evalledger.eval_work_quality_snapshots s
     WHERE s.created_at < horizon AND NOT evalledger.retention_held_v2(s.created_at, NULL, NULL);
    WITH gone AS (DELETE FROM evalledger.eval_work_quality_judge_verdicts v WHERE v.snapshot_id = ANY (snapshots) RETURNING 1)
    INSERT INTO evalledger.retention_purge_log (table_name, row_count)
    SELECT 'eval_work_quality_judge_verdicts', count(*) FROM gone HAVING count(*) > 0;
    WITH gone AS (DELETE FROM evalledger.eval_work_quality_snapshots s WHERE s.snapshot_id = ANY (snapshots) RETURNING 1)
    INSERT INTO evalledger.retention_purge_log (table_name, row_count)
    SELECT 'eval_work_quality_snapshots', count(*) FROM gone HAVING count(*) > 0;

    -- Captured queries: whole monthly partitions past the horizon that no range hold overlaps
    -- (the drop guard admits them inside the capture purge's marker), then keys and failures.
    INSERT INTO evalledger.capture_purge_marker (txid) VALUES (txid_current());
    FOR part IN
        SELECT c.relname::text AS name
          FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
         WHERE i.inhparent = 'evalledger.eval_candidates'::regclass
           AND evalledger.capture_partition_expired_v2(c.relname)
           AND NOT EXISTS (
               SELECT 1 FROM evalledger.legal_hold h
                WHERE h.held_from IS NOT NULL AND h.released_at IS NULL
                  AND NOT EXISTS (SELECT 1 FROM evalledger.legal_hold_release x WHERE x.hold_id = h.hold_id)
                  AND h.held_from < (to_date(right(c.relname, 6), 'YYYYMM') + interval '1 month')::timestamp AT TIME ZONE 'UTC'
                  AND h.held_to >= (to_date(right(c.relname, 6), 'YYYYMM'))::timestamp AT TIME ZONE 'UTC')
         ORDER BY c.relname
    LOOP
        -- Counted through the parent: a partition has no policy of its own, so FORCE hides its rows.
        SELECT count(*) INTO n FROM evalledger.eval_candidates c
         WHERE c.tableoid = ('evalledger.' || quote_ident(part.name))::regclass;
        BEGIN
            PERFORM pg_catalog.set_config('lock_timeout', '100ms', true);
            EXECUTE format('DROP TABLE evalledger.%I', part.name);
            INSERT INTO evalledger.retention_purge_log (table_name, row_count, partition_name)
            VALUES ('eval_candidates', n, part.name);
        EXCEPTION WHEN lock_not_available THEN
            NULL;  -- a reader holds eval_candidates: the next purge drops it
        END;
        PERFORM pg_catalog.set_config('lock_timeout', '5s', true);
    END LOOP;
    DELETE FROM evalledger.capture_purge_marker m WHERE m.txid = txid_current();
    WITH gone AS (
        DELETE FROM evalledger.eval_candidate_keys k
         WHERE k.created_at < horizon AND NOT evalledger.retention_held_v2(k.created_at, NULL, NULL)
        RETURNING 1)
    INSERT INTO evalledger.retention_purge_log (table_name, row_count)
    SELECT 'eval_candidate_keys', count(*) FROM gone HAVING count(*) > 0;
    WITH gone AS (
        DELETE FROM evalledger.eval_capture_failures f
         WHERE f.recorded_at < horizon AND NOT evalledger.retention_held_v2(f.recorded_at, NULL, NULL)
        RETURNING 1)
    INSERT INTO evalledger.retention_purge_log (table_name, row_count)
    SELECT 'eval_capture_failures', count(*) FROM gone HAVING count(*) > 0;

    -- Brain and range holds released more than the horizon ago.
    WITH gone AS (
        DELETE FROM evalledger.legal_hold h
         WHERE h.eval_run_id IS NULL
           AND coalesce(h.released_at, (SELECT max(x.released_at) FROM evalledger.legal_hold_release x
                                          WHERE x.hold_id = h.hold_id)) < horizon
        RETURNING 1)
    INSERT INTO evalledger.retention_purge_log (table_name, row_count)
    SELECT 'legal_hold', count(*) FROM gone HAVING count(*) > 0;

    DELETE FROM evalledger.retention_purge_marker m WHERE m.txid = txid_current();
    RETURN QUERY
        SELECT p.table_name, p.row_count, p.eval_run_id, p.partition_name
          FROM evalledger.retention_purge_log p
         WHERE p.txid = txid_current()
         ORDER BY p.purge_log_id;
END;
$$;

-- A ledger may hold several open runs of one brain, prompt and catalog already: all but the latest
-- recorded are closed as abandoned, with a reason naming the run that stays open, before the index
-- that allows one is built.
DO $close_extra$
DECLARE
    extra record;
BEGIN
    FOR extra IN SELECT l.eval_run_id, l.reviewer_user_id, l.created_at, k.eval_run_id AS kept
                   FROM brain_eval_log l
                   JOIN LATERAL (SELECT o.eval_run_id FROM brain_eval_log o
                                  WHERE o.brain_under_test = l.brain_under_test
                                    AND o.system_prompt_hash = l.system_prompt_hash
                                    AND o.question_catalog_version = l.question_catalog_version
                                    AND o.completed_at IS NULL
                                  ORDER BY o.created_at DESC, o.eval_run_id DESC LIMIT 1) k ON k.eval_run_id <> l.eval_run_id
                  WHERE l.completed_at IS NULL
                  ORDER BY l.created_at, l.eval_run_id LOOP
        INSERT INTO brain_eval_run_closure (eval_run_id, closure, reason, closed_by, reviewer_user_id, run_created_at)
        VALUES (extra.eval_run_id, 'abandoned',
                format('run %s of the same brain, prompt and catalog was open beside it when one open run at a time became the rule (migration 0110)', extra.kept),
                caller_v1(), extra.reviewer_user_id, extra.created_at);
        UPDATE brain_eval_log SET completed_at = now() WHERE eval_run_id = extra.eval_run_id;
    END LOOP;
END
$close_extra$;

-- One open run per brain, prompt and catalog (see brain_eval_log.sql).
CREATE UNIQUE INDEX brain_eval_log_one_open_idx ON brain_eval_log (brain_under_test, system_prompt_hash, question_catalog_version)
    WHERE completed_at IS NULL;

-- brain_eval_log_one_open_v1: before a run is recorded, the brain's open runs past their deadline
-- are closed as abandoned (brain_eval_close_v1; the decision trigger records why), so nothing has to
-- run on a schedule: the next run of the brain closes them (admission runs under READ COMMITTED
-- only, as closing's decision does). Until then readers see them abandoned (brain_eval_run_state_v1).
-- Then a run of the same brain, prompt and
-- catalog still open is named in the refusal (brain_eval_log_one_open_idx holds the rule against
-- racing sessions, which this trigger cannot see).
CREATE FUNCTION evalledger.brain_eval_log_one_open_v1() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    overdue uuid;
    open_run evalledger.brain_eval_log;
BEGIN
    FOR overdue IN SELECT l.eval_run_id FROM evalledger.brain_eval_log l
                    WHERE l.brain_under_test = NEW.brain_under_test AND l.completed_at IS NULL
                      AND evalledger.brain_eval_run_deadline_v1(l.created_at, l.rubric_id) <= now()
                    ORDER BY l.created_at, l.eval_run_id LOOP
        PERFORM evalledger.brain_eval_close_v1(overdue, NULL);
    END LOOP;
    SELECT l.* INTO open_run FROM evalledger.brain_eval_log l
     WHERE l.brain_under_test = NEW.brain_under_test AND l.system_prompt_hash = NEW.system_prompt_hash
       AND l.question_catalog_version = NEW.question_catalog_version AND l.completed_at IS NULL;
    IF FOUND THEN
        RAISE EXCEPTION 'evalledger: run % of %, this prompt and catalog %, is open (recorded % UTC): complete or cancel it first',
                open_run.eval_run_id, open_run.brain_under_test, open_run.question_catalog_version,
                to_char(open_run.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS')
            USING ERRCODE = 'unique_violation', CONSTRAINT = 'brain_eval_log_one_open_idx',
                  HINT = 'evalledger brain-eval cancel RUN --reason "..."';
    END IF;
    RETURN NEW;
END;
$$;

CREATE TRIGGER brain_eval_log_15_one_open BEFORE INSERT ON brain_eval_log
    FOR EACH ROW EXECUTE FUNCTION brain_eval_log_one_open_v1();

CALL seal_tables_v2();
CALL journal_attach_v2();

RESET ROLE;
