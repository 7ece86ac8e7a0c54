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
