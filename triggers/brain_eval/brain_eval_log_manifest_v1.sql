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
