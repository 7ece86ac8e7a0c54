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
