def test_scratch(admin):
    print(admin.execute("SELECT array_agg(nspname::text) FROM pg_namespace WHERE nspname NOT LIKE 'pg_%' AND nspname <> 'information_schema'").fetchone())
    print(admin.execute("SELECT prokind, count(*) FROM pg_proc WHERE pronamespace='evalledger'::regnamespace GROUP BY 1").fetchall())
    print(admin.execute("SELECT count(*) FROM pg_trigger g JOIN pg_class c ON c.oid=g.tgrelid WHERE c.relnamespace='evalledger'::regnamespace AND NOT tgisinternal").fetchall())
    print(admin.execute("SELECT count(*) FROM pg_policy").fetchall())
    print(admin.execute("SELECT evtname, evtfoid::regproc FROM pg_event_trigger").fetchall())
    print(admin.execute("SELECT datacl FROM pg_database WHERE datname=current_database()").fetchall())
