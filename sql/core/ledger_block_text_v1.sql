-- ledger_block_text_v1: a block's canon-v1 header, the bytes whose SHA-256 is its block_hash:
-- {"block","canon","entries","first_entry","hi_txid","last_entry","lo_txid","previous","root",
-- "sealed_at","sealed_by"}. "previous" is the block before's hash (64 zeros for block 1): the chain.
CREATE FUNCTION evalledger.ledger_block_text_v1(b evalledger.ledger_block) RETURNS text
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT '{"block":' || b.block_id::text || ',"canon":' || to_json(b.canon)::text
           || ',"entries":' || b.entry_count::text || ',"first_entry":' || b.first_entry_id::text
           || ',"hi_txid":' || b.hi_txid::text || ',"last_entry":' || b.last_entry_id::text
           || ',"lo_txid":' || b.lo_txid::text || ',"previous":"' || encode(b.previous_hash, 'hex')
           || '","root":"' || encode(b.merkle_root, 'hex') || '","sealed_at":' || evalledger.journal_timestamp_v1(b.sealed_at)
           || ',"sealed_by":' || to_json(b.sealed_by::text)::text || '}'
$$;
