-- production_beside_eval_rows_v1: production beside eval (issue 40, item 3). A catalog question
-- that production also asked, matched by prompt hash: prompt_normal_hash_v1 of the catalog's
-- question_text equals prompt_normal_hash_v1 of a captured row's query (seed 001's query, stored
-- PII-scrubbed), the ledger's one identity of a prompt's text (docs/guards.md, section 29). One
-- row per prompt hash and brain version that asked it (brain, model and system prompt hash, as
-- seed 002 names what was tested), from the latest run of that version that asked it: the
-- production side (how often production asked it, when first and last, the latest captured row
-- and the slugs it retrieved) beside the eval side (the sources the catalog gives the question, in
-- its order) and their overlap, computed here by the replay's own functions: recall of
-- production's slugs among the catalog's sources (replay_recall_v1), the Jaccard index of the two
-- sets (replay_jaccard_v1) and the rank-biased overlap of the two orders (replay_rbo_v1, each slug
-- numbered by where it first appears in the two lists, with the active replay rubric's rbo_p); and,
-- where that run was judged (completed), its decision and the question's verdict. Unrounded.
-- Filters, each NULL for all: a brain, the first and last month the runs started (UTC, whole
-- months), a run trigger. Readers see what their policies show (production's rows, the runs' and
-- the questions' under each table's own policy).
CREATE FUNCTION evalledger.production_beside_eval_rows_v1(
    p_brain text, p_from_month date, p_to_month date, p_trigger text)
RETURNS TABLE (
    prompt_hash              varchar,
    question_text            text,
    brain_under_test         varchar(16),
    model_id                 varchar(64),
    system_prompt_hash       varchar(64),
    eval_runs                bigint,
    eval_run_id              uuid,
    run_trigger              text,
    question_catalog_version varchar(32),
    question_id              varchar(16),
    started_at               timestamptz,
    production_asks          bigint,
    first_asked_at           timestamptz,
    last_asked_at            timestamptz,
    capture_id               bigint,
    production_slugs         text[],
    eval_sources             text[],
    recall                   numeric,
    jaccard                  numeric,
    rbo                      numeric,
    run_decision             text,
    question_passed          boolean)
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
    WITH asked AS (
        SELECT evalledger.prompt_normal_hash_v1(cq.question_text) AS prompt_hash, cq.question_text,
               l.brain_under_test, l.model_id, l.system_prompt_hash, l.eval_run_id, l.run_trigger::text AS run_trigger,
               l.question_catalog_version, q.question_id, l.started_at, l.completed_at, l.decision::text AS decision,
               q.question_passed,
               ARRAY(SELECT s.src ->> 'id' FROM jsonb_array_elements(cq.sources) WITH ORDINALITY s(src, n)
                      ORDER BY s.n) AS eval_sources
          FROM evalledger.brain_eval_log l
          JOIN evalledger.brain_eval_question_score q ON q.eval_run_id = l.eval_run_id
          JOIN evalledger.brain_eval_catalog_question cq
            ON cq.catalog_version = l.question_catalog_version AND cq.question_id = q.question_id
         WHERE (p_brain IS NULL OR l.brain_under_test = p_brain)
           AND (p_from_month IS NULL
                OR l.started_at >= timezone('UTC', date_trunc('month', p_from_month::timestamp)))
           AND (p_to_month IS NULL
                OR l.started_at < timezone('UTC', date_trunc('month', p_to_month::timestamp) + interval '1 month'))
           AND (p_trigger IS NULL OR l.run_trigger = p_trigger::evalledger.eval_run_trigger)),
    latest AS (
        SELECT DISTINCT ON (a.prompt_hash, a.brain_under_test, a.model_id, a.system_prompt_hash) a.*,
               count(*) OVER (PARTITION BY a.prompt_hash, a.brain_under_test, a.model_id, a.system_prompt_hash) AS runs
          FROM asked a
         ORDER BY a.prompt_hash, a.brain_under_test, a.model_id, a.system_prompt_hash, a.started_at DESC,
                  a.eval_run_id DESC),
    p AS (SELECT (r.definition ->> 'rbo_p')::numeric AS rbo_p
            FROM evalledger.rubric r WHERE r.rubric_id = evalledger.active_rubric_v1('replay'))
    SELECT x.prompt_hash, x.question_text, x.brain_under_test, x.model_id, x.system_prompt_hash, x.runs,
           x.eval_run_id, x.run_trigger, x.question_catalog_version, x.question_id, x.started_at, prod.asks,
           prod.first_at, prod.last_at, cap.id, cap.retrieved_slugs, x.eval_sources,
           evalledger.replay_recall_v1(cap.retrieved_slugs, x.eval_sources),
           evalledger.replay_jaccard_v1(cap.retrieved_slugs, x.eval_sources),
           evalledger.replay_rbo_v1(
               ARRAY(SELECT array_position(cap.retrieved_slugs || x.eval_sources, u.s)::bigint
                       FROM unnest(cap.retrieved_slugs) WITH ORDINALITY u(s, i) ORDER BY u.i),
               ARRAY(SELECT array_position(cap.retrieved_slugs || x.eval_sources, u.s)::bigint
                       FROM unnest(x.eval_sources) WITH ORDINALITY u(s, i) ORDER BY u.i),
               (SELECT p.rbo_p FROM p)),
           CASE WHEN x.completed_at IS NOT NULL THEN x.decision END,
           CASE WHEN x.completed_at IS NOT NULL THEN x.question_passed END
      FROM latest x
     CROSS JOIN LATERAL (
            SELECT count(*) AS asks, min(c.created_at) AS first_at, max(c.created_at) AS last_at
              FROM evalledger.eval_candidates c
             WHERE evalledger.prompt_normal_hash_v1(c.query) = x.prompt_hash) prod
     CROSS JOIN LATERAL (
            SELECT c.id, c.retrieved_slugs
              FROM evalledger.eval_candidates c
             WHERE evalledger.prompt_normal_hash_v1(c.query) = x.prompt_hash
             ORDER BY c.created_at DESC, c.id DESC
             LIMIT 1) cap
     ORDER BY x.brain_under_test, x.prompt_hash, x.started_at DESC
$$;

-- RevOps and auditors, as the other production-versus-eval panel (prompt drift): production
-- traffic is none of a reviewer's.
GRANT EXECUTE ON FUNCTION production_beside_eval_rows_v1(text, date, date, text) TO evalledger_revops, evalledger_auditor;
