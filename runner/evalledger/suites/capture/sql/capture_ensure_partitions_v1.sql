-- capture_ensure_partitions_v1: create the monthly (UTC) partitions of eval_candidates from this month to months_ahead months on, each with its own guards; returns how many it made.
CREATE FUNCTION evalledger.capture_ensure_partitions_v1(months_ahead integer DEFAULT 3) RETURNS integer
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    month date;
    part text;
    made integer := 0;
    enable_all text;
BEGIN
    IF months_ahead IS NULL OR months_ahead NOT BETWEEN 0 AND 24 THEN
        RAISE EXCEPTION 'evalledger: months_ahead must be between 0 and 24, not %', months_ahead
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    -- Two writers starting at once would otherwise both try to create the same partition.
    PERFORM pg_catalog.pg_advisory_xact_lock(1702257505, 2);
    FOR month IN
        SELECT generate_series(date_trunc('month', clock_timestamp() AT TIME ZONE 'UTC'),
                               date_trunc('month', clock_timestamp() AT TIME ZONE 'UTC')
                                   + make_interval(months => months_ahead),
                               interval '1 month')::date
    LOOP
        part := 'eval_candidates_p' || to_char(month, 'YYYYMM');
        CONTINUE WHEN to_regclass('evalledger.' || part) IS NOT NULL;
        EXECUTE format('CREATE TABLE evalledger.%I PARTITION OF evalledger.eval_candidates '
                       'FOR VALUES FROM (%L) TO (%L)', part,
                       to_char(month, 'YYYY-MM-DD') || ' 00:00:00+00',
                       to_char(month + interval '1 month', 'YYYY-MM-DD') || ' 00:00:00+00');
        -- A TRUNCATE trigger on the parent does not protect a partition, nor does an INSERT
        -- statement trigger on the parent fire for an INSERT naming the partition.
        EXECUTE format('CREATE TRIGGER %I BEFORE TRUNCATE ON evalledger.%I '
                       'FOR EACH STATEMENT EXECUTE FUNCTION evalledger.capture_refuse_change_v1()',
                       part || '_00_no_truncate', part);
        EXECUTE format('CREATE TRIGGER %I BEFORE INSERT ON evalledger.%I '
                       'FOR EACH STATEMENT EXECUTE FUNCTION evalledger.capture_window_lock_v1()',
                       part || '_05_window_lock', part);
        -- One ALTER TABLE, so the DDL guard sees the partition only in its final state: row level
        -- security enabled and forced (no policy: partitions are read and written through the
        -- parent) and every trigger, its own and those cloned from the parent, ENABLE ALWAYS.
        SELECT string_agg(format('ENABLE ALWAYS TRIGGER %I', t.tgname), ', ' ORDER BY t.tgname)
          INTO enable_all
          FROM pg_trigger t
         WHERE t.tgrelid = ('evalledger.' || quote_ident(part))::regclass AND NOT t.tgisinternal;
        -- The partition is the code role's like its parent: this function runs as its owner.
        EXECUTE format('ALTER TABLE evalledger.%I ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY, %s',
                       part, enable_all);
        made := made + 1;
    END LOOP;
    RETURN made;
END;
$$;
