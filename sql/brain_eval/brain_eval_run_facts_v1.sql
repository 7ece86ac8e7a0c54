-- brain_eval_run_facts_v1: what the given runs add to brain_eval_runs_by_month, one row per month
-- key (brain, trigger, month started, month recorded, reviewer): counts of completed runs and of
-- their decisions, token cost and reviewer hours summed, stale-fixture questions and recognitions,
-- runs whose stale-fixture questions were all recognised and runs with a miss (seed 002's sev-2),
-- and the reviewer's narrative-coherence ratings counted per value. Open runs add nothing. Read
-- as the caller (the code role, for the completion trigger and the recount). Plain SQL without
-- SET, every operator schema-qualified, so the statement that calls it inlines it: completion
-- plans one statement, not a function call in it.
CREATE FUNCTION evalledger.brain_eval_run_facts_v1(runs uuid[])
RETURNS TABLE (
    brain_under_test     varchar(16),
    run_trigger          evalledger.eval_run_trigger,
    started_month        date,
    recorded_month       date,
    reviewer_user_id     uuid,
    runs                 bigint,
    runs_pass            bigint,
    runs_pass_with_notes bigint,
    runs_conditional     bigint,
    runs_fail            bigint,
    token_cost_usd       numeric,
    reviewer_hours_spent numeric,
    runs_with_hours      bigint,
    stale_questions      bigint,
    stale_recognised     bigint,
    runs_with_stale      bigint,
    runs_all_recognised  bigint,
    sev2_runs            bigint,
    rating_1             bigint,
    rating_2             bigint,
    rating_3             bigint,
    rating_4             bigint,
    rating_5             bigint)
LANGUAGE sql STABLE AS $$
    SELECT l.brain_under_test, l.run_trigger, evalledger.utc_month_v1(l.started_at),
           evalledger.utc_month_v1(l.created_at), l.reviewer_user_id,
           count(*), count(*) FILTER (WHERE l.decision OPERATOR(pg_catalog.=) 'pass'),
           count(*) FILTER (WHERE l.decision OPERATOR(pg_catalog.=) 'pass_with_notes'),
           count(*) FILTER (WHERE l.decision OPERATOR(pg_catalog.=) 'conditional'), count(*) FILTER (WHERE l.decision OPERATOR(pg_catalog.=) 'fail'),
           sum(l.token_cost_usd), coalesce(sum(l.reviewer_hours_spent), 0), count(l.reviewer_hours_spent),
           sum(q.stale_questions)::bigint, sum(q.stale_recognised)::bigint,
           count(*) FILTER (WHERE q.stale_questions OPERATOR(pg_catalog.>) 0),
           count(*) FILTER (WHERE q.stale_questions OPERATOR(pg_catalog.>) 0 AND q.stale_missed OPERATOR(pg_catalog.=) 0),
           count(*) FILTER (WHERE q.stale_missed OPERATOR(pg_catalog.>) 0),
           sum(q.rating_1)::bigint, sum(q.rating_2)::bigint, sum(q.rating_3)::bigint, sum(q.rating_4)::bigint,
           sum(q.rating_5)::bigint
      FROM evalledger.brain_eval_log l
     CROSS JOIN LATERAL (
            SELECT count(*) FILTER (WHERE x.uses_stale_fixture) AS stale_questions,
                   count(*) FILTER (WHERE x.uses_stale_fixture AND x.staleness_correctly_recognized) AS stale_recognised,
                   count(*) FILTER (WHERE x.uses_stale_fixture AND NOT x.staleness_correctly_recognized) AS stale_missed,
                   count(*) FILTER (WHERE x.narrative_coherence_rating OPERATOR(pg_catalog.=) 1) AS rating_1,
                   count(*) FILTER (WHERE x.narrative_coherence_rating OPERATOR(pg_catalog.=) 2) AS rating_2,
                   count(*) FILTER (WHERE x.narrative_coherence_rating OPERATOR(pg_catalog.=) 3) AS rating_3,
                   count(*) FILTER (WHERE x.narrative_coherence_rating OPERATOR(pg_catalog.=) 4) AS rating_4,
                   count(*) FILTER (WHERE x.narrative_coherence_rating OPERATOR(pg_catalog.=) 5) AS rating_5
              FROM evalledger.brain_eval_question_score x
             WHERE x.eval_run_id OPERATOR(pg_catalog.=) l.eval_run_id) q
     WHERE l.eval_run_id OPERATOR(pg_catalog.=) ANY (SELECT pg_catalog.unnest(runs)) AND l.completed_at IS NOT NULL
     GROUP BY 1, 2, 3, 4, 5
$$;
