-- ledger_seal_v1: close a block over the journal entries not yet sealed, chained to the block
-- before. Writers never wait for it, nor it for them but as long as asked: an entry is appended
-- with an id from a sequence and its own transaction's id, and takes no lock. Ids are handed out
-- in time order but committed in any order, so a block is not a range of ids but of transaction
-- ids: [lo, hi), where hi is the oldest transaction of a login that may write the ledger still
-- running in this database (ledger_writers_v1; every such transaction older than it has finished, so
-- every entry it wrote is committed or gone for good) and lo the previous block's hi.
-- No entry can later commit into a sealed range; an entry of a transaction still running waits
-- for the next seal. Within a block, entries are in id order; its root is the RFC 6962 Merkle
-- tree hash of their leaves; its hash covers its header, the root and the previous block's hash;
-- the ledger root is the Merkle tree hash of every block hash so far (what a digest holds, and
-- what consistency proofs are about). wait_seconds: how long to wait for the transactions running
-- when the seal began (a completion that just committed is sealed by the seal its command runs
-- next, unless an older transaction is still open); held_by names the oldest transaction still
-- holding entries back. Seals serialise on the block table's lock, which no writer takes.
CREATE FUNCTION evalledger.ledger_seal_v1(wait_seconds double precision DEFAULT 0)
RETURNS TABLE (block_id bigint, entry_count bigint, first_entry_id bigint, last_entry_id bigint,
               block_hash bytea, sealed_at timestamptz, unsealed bigint, held_by bigint)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    last evalledger.ledger_block;
    made evalledger.ledger_block;
    -- This seal's own transaction id, taken first: every transaction that began before the seal has
    -- a smaller one. (A snapshot's xmax would not do: a transaction still running may have an id
    -- above every finished one, and then no snapshot lists it.)
    started bigint := txid_current();
    deadline timestamptz := clock_timestamp() + make_interval(secs => greatest(coalesce(wait_seconds, 0), 0));
    lo bigint;
    hi bigint;
    leaves bytea[];
    frontier bytea[];
    size bigint;
    carry bytea;
BEGIN
    IF current_setting('transaction_isolation') <> 'read committed' THEN
        RAISE EXCEPTION 'evalledger: the ledger is sealed under READ COMMITTED, not %',
                upper(current_setting('transaction_isolation'))
            USING ERRCODE = 'invalid_transaction_state',
                  HINT = 'each step must see what committed before it: seal in a READ COMMITTED transaction';
    END IF;
    -- One seal at a time; readers (ACCESS SHARE) pass, and no writer ever locks this table.
    LOCK TABLE evalledger.ledger_block IN EXCLUSIVE MODE;
    SELECT b.* INTO last FROM evalledger.ledger_block b ORDER BY b.block_id DESC LIMIT 1;
    lo := coalesce(last.hi_txid, 0);
    -- The oldest transaction that may still write an entry, this one included: once it is this
    -- seal's own, every transaction that began before the seal and could write the journal has
    -- finished. Only writers count (ledger_writers_v1): a login that cannot reach the ledger, or a
    -- transaction in another database of the server, holds no seal back, however long it is open.
    LOOP
        PERFORM pg_stat_clear_snapshot();
        SELECT least(started, min(w.txid)) INTO hi FROM evalledger.ledger_writers_v1() w;
        EXIT WHEN hi >= started OR clock_timestamp() >= deadline;
        PERFORM pg_sleep(0.01);
    END LOOP;
    IF hi < lo THEN
        RAISE EXCEPTION 'evalledger: transaction ids went back from % to %: this ledger was loaded into another cluster', lo, hi
            USING ERRCODE = 'data_exception',
                  HINT = 'blocks are ranges of transaction ids; restore from a base backup, which keeps them (docs/ledger.md)';
    END IF;

    made.canon := 'canon-v1';
    SELECT count(*), min(e.entry_id), max(e.entry_id), array_agg(e.leaf ORDER BY e.entry_id),
           string_agg(e.leaf, ''::bytea ORDER BY e.entry_id)
      INTO made.entry_count, made.first_entry_id, made.last_entry_id, leaves, made.leaves
      FROM (SELECT j.entry_id,
                   sha256('\x00'::bytea || convert_to(evalledger.ledger_entry_text_v1(j), 'UTF8')) AS leaf
              FROM evalledger.ledger_journal j WHERE j.txid >= lo AND j.txid < hi) e;
    IF made.entry_count > 0 THEN
        made.block_id := coalesce(last.block_id, 0) + 1;
        made.lo_txid := lo;
        made.hi_txid := hi;
        made.merkle_root := evalledger.ledger_merkle_root_v2(leaves);
        made.previous_hash := coalesce(last.block_hash, '\x0000000000000000000000000000000000000000000000000000000000000000'::bytea);
        made.sealed_at := now();
        made.sealed_by := session_user;
        made.block_hash := sha256(convert_to(evalledger.ledger_block_text_v1(made), 'UTF8'));
        -- The ledger tree over block hashes, kept as the roots of its perfect subtrees (largest
        -- first): appending a leaf merges one subtree per trailing 1-bit of the old size.
        frontier := coalesce(last.ledger_frontier, '{}');
        size := coalesce(last.block_id, 0);
        carry := sha256('\x00'::bytea || made.block_hash);
        WHILE size % 2 = 1 LOOP
            carry := sha256('\x01'::bytea || frontier[cardinality(frontier)] || carry);
            frontier := frontier[1:cardinality(frontier) - 1];
            size := size / 2;
        END LOOP;
        made.ledger_frontier := frontier || carry;
        made.ledger_root := made.ledger_frontier[cardinality(made.ledger_frontier)];
        FOR i IN REVERSE cardinality(made.ledger_frontier) - 1 .. 1 LOOP
            made.ledger_root := sha256('\x01'::bytea || made.ledger_frontier[i] || made.ledger_root);
        END LOOP;
        INSERT INTO evalledger.ledger_block SELECT made.*;
        block_id := made.block_id;
        entry_count := made.entry_count;
        first_entry_id := made.first_entry_id;
        last_entry_id := made.last_entry_id;
        block_hash := made.block_hash;
        sealed_at := made.sealed_at;
    END IF;
    SELECT count(*) INTO unsealed FROM evalledger.ledger_journal j WHERE j.txid >= hi;
    held_by := CASE WHEN hi < started THEN hi END;
    RETURN NEXT;
END;
$$;

-- Completion (the runner), the purge (the retention role), digests (the auditor, the owner) seal.
GRANT EXECUTE ON FUNCTION ledger_seal_v1(double precision) TO evalledger_runner, evalledger_owner, evalledger_retention, evalledger_auditor;
