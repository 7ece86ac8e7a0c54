-- Sealing that no outsider holds back (issue 35, item 5): a seal waited for the oldest transaction
-- running anywhere on the server (its snapshot's xmin), so a login with no ledger privilege, or one
-- connected to another database, holding `SELECT pg_current_xact_id()` open left every later entry
-- unsealed for as long as it liked. The seal now waits only for transactions that may write the
-- journal (ledger_writers_v1: this database's, of a login that may reach the ledger), and doctor
-- names a writer holding its own transaction open, with its age. ledger_seal_v1 is replaced in
-- place (same signature, owner and grants).

SET LOCAL ROLE evalledger_code;
SET LOCAL search_path = evalledger, pg_temp;

-- ledger_writers_v1: the transactions that may still write journal entries and have a transaction
-- id: every backend of this database (not the caller's) and every prepared transaction of it, of a
-- login that may reach the ledger (a superuser, or a member of a role with USAGE on its schema, as
-- every evalledger role has and no other login), with its 64-bit transaction id. A transaction of a
-- login that cannot reach the ledger, or in another database of the server, writes no entry: the
-- seal waits for these alone, and doctor names those held open. SECURITY INVOKER: who calls it
-- sees what pg_stat_activity shows them (every backend's id; the transaction's start only to the
-- caller's own roles and pg_read_all_stats, so doctor, as the installer, sees its age).
CREATE FUNCTION evalledger.ledger_writers_v1()
RETURNS TABLE (pid integer, login text, txid bigint, xact_start timestamptz)
LANGUAGE sql VOLATILE SET search_path = pg_catalog, pg_temp AS $$
    WITH now_ AS (SELECT pg_snapshot_xmax(pg_current_snapshot())::text::bigint AS next),
    running AS (
        SELECT a.pid, a.usesysid AS who, a.backend_xid::text::bigint AS xid, a.xact_start
          FROM pg_stat_activity a
         WHERE a.datname = current_database() AND a.backend_xid IS NOT NULL AND a.pid <> pg_backend_pid()
        UNION ALL
        SELECT NULL, r.oid, p.transaction::text::bigint, p.prepared
          FROM pg_prepared_xacts p JOIN pg_roles r ON r.rolname = p.owner
         WHERE p.database = current_database())
    -- The 32-bit id as the 64-bit one it is: the epoch of the next id, or the one before.
    SELECT x.pid, r.rolname::text,
           CASE WHEN (n.next & ~4294967295::bigint) + x.xid > n.next + 2147483648
                THEN (n.next & ~4294967295::bigint) + x.xid - 4294967296
                WHEN (n.next & ~4294967295::bigint) + x.xid < n.next - 2147483648
                THEN (n.next & ~4294967295::bigint) + x.xid + 4294967296
                ELSE (n.next & ~4294967295::bigint) + x.xid END,
           x.xact_start
      FROM running x CROSS JOIN now_ n JOIN pg_roles r ON r.oid = x.who
     WHERE r.rolsuper OR EXISTS (SELECT 1 FROM pg_roles g
                                  WHERE pg_has_role(r.oid, g.oid, 'MEMBER')
                                    AND has_schema_privilege(g.oid, 'evalledger', 'USAGE'))
$$;

-- The seal (the code role's) asks it; doctor asks it as the connecting login.
GRANT EXECUTE ON FUNCTION ledger_writers_v1() TO evalledger_owner, evalledger_auditor;

CREATE OR REPLACE FUNCTION evalledger.ledger_seal_v1(wait_seconds double precision DEFAULT 0)
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
