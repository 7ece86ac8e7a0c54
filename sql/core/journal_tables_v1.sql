-- journal_tables_v1: the tables the journal covers: every table of the ledger's schema (a
-- partitioned one as itself, not its partitions) but journal_exempt_v1's; the one list that
-- journal_attach_v2, journal_coverage_v2 and verify read.
CREATE FUNCTION evalledger.journal_tables_v1()
RETURNS TABLE (rel oid, table_name text, row_type oid)
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
    SELECT c.oid, c.relname::text, c.reltype
      FROM pg_catalog.pg_class c
     WHERE c.relnamespace = 'evalledger'::regnamespace AND c.relkind IN ('r', 'p') AND NOT c.relispartition
       AND NOT evalledger.journal_exempt_v1(c.relname)
     ORDER BY c.relname
$$;
GRANT EXECUTE ON FUNCTION journal_tables_v1() TO evalledger_owner, evalledger_auditor;
