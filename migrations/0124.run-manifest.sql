-- Proofs that show a whole run, and readers that remember (issue 35, items 3 and 4). A run's
-- completion now journals a manifest: one entry, operation MANIFEST, whose key lists every row of
-- the run by table and key and whose root is the Merkle tree hash of them, so an offline proof can
-- show that no row is missing or added (docs/ledger.md, "The manifest"). Every run completed before
-- this migration gets its manifest now, from the rows it has (sealed by the next seal). Readers
-- (verify, report, dashboard, serve) read the block hashes through ledger_heads_v1, RevOps too, to
-- check the ledger still extends the newest digest they saw.

SET LOCAL ROLE evalledger_code;
SET LOCAL search_path = evalledger, pg_temp;

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
-- brain_eval_log_manifest_v1: a run's completion journals its manifest (brain_eval_manifest_v1)
-- as an entry of its own, operation MANIFEST, table brain_eval_log, in the completing transaction
-- (so in the block that seals the completion). A deferred constraint trigger: it runs at commit,
-- when every row the completing transaction wrote (a cancellation's closure, say) is there. A run
-- inserted complete (an import) gets its manifest the same way. SECURITY DEFINER: only the code
-- role writes the journal, and it reads every row of the run whatever the completing role may see.
CREATE FUNCTION evalledger.brain_eval_log_manifest_v1() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    IF NEW.completed_at IS NULL OR (TG_OP = 'UPDATE' AND OLD.completed_at IS NOT NULL) THEN
        RETURN NULL;
    END IF;
    INSERT INTO evalledger.ledger_journal (table_name, operation, row_key, row_count, rows_root, row_leaves)
    SELECT 'brain_eval_log', 'MANIFEST', m.row_key, m.row_count, m.rows_root, m.row_leaves
      FROM evalledger.brain_eval_manifest_v1(NEW.eval_run_id) m;
    RETURN NULL;
END;
$$;

CREATE CONSTRAINT TRIGGER brain_eval_log_95_manifest AFTER INSERT OR UPDATE OF completed_at ON brain_eval_log
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION brain_eval_log_manifest_v1();
-- ledger_heads_v1: what a reader of the ledger needs to check, before it reads, that the ledger
-- still extends the newest digest it saw (issue 35, item 4): the ledger's id, every sealed block's
-- hash in block order (32 bytes apiece, one bytea), how many entries the blocks cover, and the
-- newest block's sealing time. The reader hashes the ledger tree itself (docs/ledger.md, "Readers
-- that remember"): nothing here is taken on trust but the hashes, whose tree must hold the one it
-- remembered. SECURITY DEFINER, so RevOps, who reads no block, can check too; block hashes say
-- nothing of any row.
CREATE FUNCTION evalledger.ledger_heads_v1()
RETURNS TABLE (ledger_id uuid, blocks bigint, block_hashes bytea, entries numeric, sealed_at timestamptz)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
    SELECT (SELECT i.ledger_id FROM evalledger.ledger_identity i),
           count(*), coalesce(string_agg(b.block_hash, ''::bytea ORDER BY b.block_id), ''::bytea),
           coalesce(sum(b.entry_count), 0), max(b.sealed_at)
      FROM evalledger.ledger_block b
$$;

-- Every role that reads the ledger for a person: auditors and RevOps (report, dashboard, serve),
-- reviewers (serve's dashboards page) and the owner (verify).
GRANT EXECUTE ON FUNCTION ledger_heads_v1() TO evalledger_owner, evalledger_auditor, evalledger_revops,
    evalledger_reviewer;

-- Runs completed before: their manifests, in run order, from the rows they have now.
INSERT INTO ledger_journal (table_name, operation, row_key, row_count, rows_root, row_leaves)
SELECT 'brain_eval_log', 'MANIFEST', m.row_key, m.row_count, m.rows_root, m.row_leaves
  FROM brain_eval_log l CROSS JOIN LATERAL brain_eval_manifest_v1(l.eval_run_id) m
 WHERE l.completed_at IS NOT NULL
 ORDER BY l.created_at, l.eval_run_id;

REVOKE EXECUTE ON FUNCTION brain_eval_manifest_v1(uuid), brain_eval_log_manifest_v1() FROM PUBLIC;

CALL seal_tables_v2();
