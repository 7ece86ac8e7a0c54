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
