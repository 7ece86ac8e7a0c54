-- ledger_digest_v1: seal, then say what a digest holds of the newest block: the ledger's id, the
-- block's number and hash, the ledger root over every block hash up to it (the Merkle tree size
-- is the block number), how many entries the blocks cover, and when; the digest taken is logged
-- (ledger_digest) so doctor can tell when none was. The digest is worth something only kept
-- where the database's superuser cannot reach it: the caller writes it out (evalledger ledger digest).
CREATE FUNCTION evalledger.ledger_digest_v1(wait_seconds double precision DEFAULT 5)
RETURNS TABLE (ledger_id uuid, block_id bigint, block_hash bytea, ledger_root bytea, entries numeric,
               sealed_at timestamptz, taken_at timestamptz, unsealed bigint, held_by bigint)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    newest evalledger.ledger_block;
BEGIN
    SELECT s.unsealed, s.held_by INTO unsealed, held_by FROM evalledger.ledger_seal_v1(wait_seconds) s;
    SELECT b.* INTO newest FROM evalledger.ledger_block b ORDER BY b.block_id DESC LIMIT 1;
    IF newest.block_id IS NULL THEN
        RAISE EXCEPTION 'evalledger: no block is sealed yet: the journal is empty'
            USING ERRCODE = 'no_data_found';
    END IF;
    SELECT i.ledger_id INTO ledger_id FROM evalledger.ledger_identity i;
    INSERT INTO evalledger.ledger_digest (block_id) VALUES (newest.block_id) RETURNING ledger_digest.taken_at INTO taken_at;
    block_id := newest.block_id;
    block_hash := newest.block_hash;
    ledger_root := newest.ledger_root;
    sealed_at := newest.sealed_at;
    SELECT sum(b.entry_count) INTO entries FROM evalledger.ledger_block b WHERE b.block_id <= newest.block_id;
    RETURN NEXT;
END;
$$;
GRANT EXECUTE ON FUNCTION ledger_digest_v1(double precision) TO evalledger_owner, evalledger_auditor;
