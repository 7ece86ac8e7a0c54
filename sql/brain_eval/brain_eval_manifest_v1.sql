-- brain_eval_manifest_v1: the journal entry that says which rows make brain-eval run `run` whole
-- (issue 35, item 3): one item per row, `{"key":<the row's canon-v1 key>,"table":"<table>"}`, each
-- hashed as a row is (SHA-256(0x00 || item bytes)), the items in bytewise order of their text, their
-- RFC 6962 Merkle tree hash the entry's root and each leaf kept (journal_batch_v2, as a multi-row
-- entry). The rows: the run's own in every table that holds a run's rows (the run, question rows,
-- review trail, sign-off, suggestions and references shown, harness records, judge suggestions,
-- closure), the analyses its question rows and harness answers point at, and its rubric; not its
-- legal holds, which come and go after completion (a proof shows them beside the manifest). The
-- same tables as the proof's RUN_TABLES (a test holds them equal). PL/pgSQL: each table's
-- journal_key_v1 is made by journal_attach_v2, after this function.
CREATE FUNCTION evalledger.brain_eval_manifest_v1(run uuid)
RETURNS TABLE (row_key text, row_count integer, rows_root bytea, row_leaves bytea)
LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    RETURN QUERY
    SELECT b.row_key, b.row_count, b.rows_root, b.row_leaves
      FROM (SELECT array_agg(i.item) AS items,
                   array_agg(sha256('\x00'::bytea || convert_to(i.item, 'UTF8'))) AS leaves
              FROM (SELECT '{"key":' || m.k || ',"table":' || to_json(m.t)::text || '}' AS item
                      FROM (SELECT 'brain_eval_log' AS t, evalledger.journal_key_v1(x) AS k
                              FROM evalledger.brain_eval_log x WHERE x.eval_run_id = run
                            UNION ALL
                            SELECT 'brain_eval_question_score', evalledger.journal_key_v1(x)
                              FROM evalledger.brain_eval_question_score x WHERE x.eval_run_id = run
                            UNION ALL
                            SELECT 'brain_eval_run_review', evalledger.journal_key_v1(x)
                              FROM evalledger.brain_eval_run_review x WHERE x.eval_run_id = run
                            UNION ALL
                            SELECT 'brain_eval_review_entry', evalledger.journal_key_v1(x)
                              FROM evalledger.brain_eval_review_entry x WHERE x.eval_run_id = run
                            UNION ALL
                            SELECT 'brain_eval_suggestion_shown', evalledger.journal_key_v1(x)
                              FROM evalledger.brain_eval_suggestion_shown x WHERE x.eval_run_id = run
                            UNION ALL
                            SELECT 'brain_eval_harness_run', evalledger.journal_key_v1(x)
                              FROM evalledger.brain_eval_harness_run x WHERE x.eval_run_id = run
                            UNION ALL
                            SELECT 'brain_eval_harness_answer', evalledger.journal_key_v1(x)
                              FROM evalledger.brain_eval_harness_answer x WHERE x.eval_run_id = run
                            UNION ALL
                            SELECT 'brain_eval_judge_suggestion', evalledger.journal_key_v1(x)
                              FROM evalledger.brain_eval_judge_suggestion x WHERE x.eval_run_id = run
                            UNION ALL
                            SELECT 'brain_eval_reference_shown', evalledger.journal_key_v1(x)
                              FROM evalledger.brain_eval_reference_shown x WHERE x.eval_run_id = run
                            UNION ALL
                            SELECT 'brain_eval_run_closure', evalledger.journal_key_v1(x)
                              FROM evalledger.brain_eval_run_closure x WHERE x.eval_run_id = run
                            UNION ALL
                            SELECT 'brain_analysis_log', evalledger.journal_key_v1(x)
                              FROM evalledger.brain_analysis_log x
                             WHERE x.analysis_id IN (SELECT q.brain_analysis_id FROM evalledger.brain_eval_question_score q
                                                      WHERE q.eval_run_id = run
                                                     UNION
                                                     SELECT a.analysis_id FROM evalledger.brain_eval_harness_answer a
                                                      WHERE a.eval_run_id = run)
                            UNION ALL
                            SELECT 'rubric', evalledger.journal_key_v1(x)
                              FROM evalledger.rubric x
                             WHERE x.rubric_id = (SELECT l.rubric_id FROM evalledger.brain_eval_log l
                                                   WHERE l.eval_run_id = run)) m) i) d
     CROSS JOIN LATERAL evalledger.journal_batch_v2(d.items, d.leaves) b;
END;
$$;
