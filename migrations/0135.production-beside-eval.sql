-- Production beside eval (issue 40, item 3): a catalog question that production also asked, side by
-- side by prompt hash and brain version. A captured query and a catalog question are matched by
-- prompt_normal_hash_v1 of their text (the ledger's one identity of a prompt's text), which an index
-- on eval_candidates computes once per captured row; production_beside_eval_rows_v1 and its view
-- production_beside_eval_v1 (a BI contract) read the two sides and their overlap, computed by the
-- replay's own recall, Jaccard and rank-biased overlap functions, with the eval's verdict where
-- judged. RevOps and auditors read it, as prompt drift; the runner, RevOps and auditors may call
-- the functions it and the index compute with. Nothing any role could do or read before changes.

SET LOCAL ROLE evalledger_code;
SET LOCAL search_path = evalledger, pg_temp;

-- The normal form's functions: the runner's captures compute the index, and readers match by them.
GRANT EXECUTE ON FUNCTION prompt_normal_v1(text) TO evalledger_owner, evalledger_runner, evalledger_revops, evalledger_auditor;
GRANT EXECUTE ON FUNCTION prompt_normal_hash_v1(text) TO evalledger_owner, evalledger_runner, evalledger_revops, evalledger_auditor;

-- Production beside eval (production_beside_eval_rows_v1) looks a catalog question's captured
-- queries up by the prompt hash of their normal form: one index probe per question, not a hash of
-- every captured row per read.
CREATE INDEX eval_candidates_prompt_idx ON eval_candidates (evalledger.prompt_normal_hash_v1(query));

-- Production beside eval computes the overlap with the replay's functions, as its reader.
GRANT EXECUTE ON FUNCTION replay_recall_v1(text[], text[]) TO evalledger_revops, evalledger_auditor;
GRANT EXECUTE ON FUNCTION replay_jaccard_v1(text[], text[]) TO evalledger_revops, evalledger_auditor;
GRANT EXECUTE ON FUNCTION replay_rbo_v1(bigint[], bigint[], numeric) TO evalledger_revops, evalledger_auditor;
GRANT EXECUTE ON FUNCTION active_rubric_v1(text) TO evalledger_revops, evalledger_auditor;

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

-- production_beside_eval_v1: every catalog question production also asked, side by side by prompt
-- hash and brain version (production_beside_eval_rows_v1): whether the eval still asks what
-- production asks.
CREATE VIEW evalledger.production_beside_eval_v1 AS
    SELECT * FROM evalledger.production_beside_eval_rows_v1(NULL, NULL, NULL, NULL);
COMMENT ON VIEW evalledger.production_beside_eval_v1 IS
    'Production beside eval: one row per catalog question that production also asked (a captured query of the same prompt hash) and brain version that asked it, from that version''s latest run asking it: how often production asked it, what production retrieved beside the sources the catalog gives, their overlap, and the eval''s verdict where judged (docs/bi.md). ORDER BY jaccard for the questions furthest from production.';
COMMENT ON COLUMN evalledger.production_beside_eval_v1.prompt_hash IS 'SHA-256 hex of the question''s normal form (prompt_normal_hash_v1), the same for the catalog''s question_text and the captured query: the key the two sides are matched by.';
COMMENT ON COLUMN evalledger.production_beside_eval_v1.question_text IS 'The catalog''s question text (the captured query, PII-scrubbed, reads the same in normal form).';
COMMENT ON COLUMN evalledger.production_beside_eval_v1.brain_under_test IS 'The brain the run tested (AGT-901, AGT-902).';
COMMENT ON COLUMN evalledger.production_beside_eval_v1.model_id IS 'The model of the brain version.';
COMMENT ON COLUMN evalledger.production_beside_eval_v1.system_prompt_hash IS 'SHA-256 hex of the brain version''s system prompt: with brain and model, the brain version.';
COMMENT ON COLUMN evalledger.production_beside_eval_v1.eval_runs IS 'Count of runs of this brain version that asked the question.';
COMMENT ON COLUMN evalledger.production_beside_eval_v1.eval_run_id IS 'The latest of them (brain_eval_log.eval_run_id), the run the eval side is read from.';
COMMENT ON COLUMN evalledger.production_beside_eval_v1.run_trigger IS 'That run''s trigger.';
COMMENT ON COLUMN evalledger.production_beside_eval_v1.question_catalog_version IS 'The catalog version that run asked.';
COMMENT ON COLUMN evalledger.production_beside_eval_v1.question_id IS 'The question in that catalog, e.g. EVAL-Q01.';
COMMENT ON COLUMN evalledger.production_beside_eval_v1.started_at IS 'When that run started (timestamptz).';
COMMENT ON COLUMN evalledger.production_beside_eval_v1.production_asks IS 'Count of captured rows (production queries) of the same prompt hash.';
COMMENT ON COLUMN evalledger.production_beside_eval_v1.first_asked_at IS 'When production first asked it, of the captured rows retained (timestamptz).';
COMMENT ON COLUMN evalledger.production_beside_eval_v1.last_asked_at IS 'When production last asked it (timestamptz).';
COMMENT ON COLUMN evalledger.production_beside_eval_v1.capture_id IS 'The latest captured row (eval_candidates.id; the export''s id): production''s side.';
COMMENT ON COLUMN evalledger.production_beside_eval_v1.production_slugs IS 'The slugs production retrieved for it (the latest captured row''s retrieved_slugs), in result order.';
COMMENT ON COLUMN evalledger.production_beside_eval_v1.eval_sources IS 'The source ids the catalog gives the question, in the catalog''s order.';
COMMENT ON COLUMN evalledger.production_beside_eval_v1.recall IS 'Recall, 0-1: production''s slugs found among as many of the catalog''s sources (replay_recall_v1).';
COMMENT ON COLUMN evalledger.production_beside_eval_v1.jaccard IS 'Jaccard index, 0-1, of production''s slugs and the catalog''s sources (replay_jaccard_v1).';
COMMENT ON COLUMN evalledger.production_beside_eval_v1.rbo IS 'Rank-biased overlap, 0-1, of production''s slug order and the catalog''s source order (replay_rbo_v1, the active replay rubric''s rbo_p).';
COMMENT ON COLUMN evalledger.production_beside_eval_v1.run_decision IS 'The run''s decision (pass, pass_with_notes, conditional, fail); NULL while it is open.';
COMMENT ON COLUMN evalledger.production_beside_eval_v1.question_passed IS 'Whether the question passed its criteria in that run; NULL while the run is open.';

-- RevOps and auditors, as the other production-versus-eval view (prompt_drift_v2).
REVOKE ALL ON production_beside_eval_v1 FROM PUBLIC;
GRANT SELECT ON production_beside_eval_v1 TO evalledger_revops, evalledger_auditor;

-- security_invoker where the server has it (15+), belt and braces: the rows function is
-- SECURITY INVOKER already, so each reader reads through its own row-level security.
DO $invoker$
BEGIN
    IF current_setting('server_version_num')::int >= 150000 THEN
        ALTER VIEW evalledger.production_beside_eval_v1 SET (security_invoker = true);
    END IF;
END
$invoker$;

RESET ROLE;
