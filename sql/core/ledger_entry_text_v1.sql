-- ledger_entry_text_v1: a journal entry's canon-v1 form, the bytes its block's Merkle tree hashes
-- (as the leaf SHA-256(0x00 || these bytes)): {"canon","entry","key","op","recorded_at","rows",
-- "rows_root","table"}, keys in code-point order, the key as the stored canonical JSON.
CREATE FUNCTION evalledger.ledger_entry_text_v1(e evalledger.ledger_journal) RETURNS text
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT '{"canon":' || to_json(e.canon)::text || ',"entry":' || e.entry_id::text || ',"key":' || e.row_key
           || ',"op":' || to_json(e.operation)::text || ',"recorded_at":' || evalledger.journal_timestamp_v1(e.recorded_at)
           || ',"rows":' || e.row_count::text || ',"rows_root":"' || encode(e.rows_root, 'hex')
           || '","table":' || to_json(e.table_name)::text || '}'
$$;
