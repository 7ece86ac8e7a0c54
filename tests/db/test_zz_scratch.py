def test_scratch(admin):
    for r in admin.execute("""SELECT c.relname, array_agg(a.attname ORDER BY a.attname)
      FROM pg_class c JOIN pg_index i ON i.indrelid=c.oid AND i.indisprimary JOIN pg_attribute a ON a.attrelid=c.oid AND a.attnum = ANY(i.indkey)
      WHERE c.relnamespace='evalledger'::regnamespace AND NOT c.relispartition GROUP BY 1 ORDER BY 1"""):
        print(r)
    print(admin.execute("SELECT nspacl FROM pg_namespace WHERE nspname='evalledger'").fetchone())
    print(admin.execute("SELECT array_agg(column_name::text) FROM information_schema.columns WHERE table_name='retention_purge_log'").fetchone())
    for r in admin.execute("SELECT c.relname, array_agg(a.attname) FROM pg_class c JOIN pg_attribute a ON a.attrelid=c.oid WHERE c.relnamespace='evalledger'::regnamespace AND a.attname IN ('run_created_at','created_at','recorded_at','eval_run_id','completed_at') AND c.relkind IN ('r','p') AND NOT c.relispartition GROUP BY 1"):
        print(r)
