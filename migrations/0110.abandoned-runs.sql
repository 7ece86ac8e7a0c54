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

\ir ../sql/brain_eval/brain_eval_run_closure.sql
\ir ../sql/brain_eval/brain_eval_run_deadline_v1.sql
\ir ../sql/brain_eval/brain_eval_abandoned_v1.sql
\ir ../sql/brain_eval/brain_eval_overdue_v1.sql
\ir ../sql/brain_eval/brain_eval_close_v1.sql
\ir ../sql/brain_eval/brain_eval_cancel_v1.sql
\ir ../sql/brain_eval/brain_eval_run_state_v1.sql

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

\ir ../triggers/brain_eval/brain_eval_log_one_open_v1.sql

CALL seal_tables_v2();
CALL journal_attach_v2();

RESET ROLE;
