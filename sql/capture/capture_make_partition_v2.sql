-- capture_make_partition_v2: the eval_candidates partition of one UTC month (its first day), with
-- its own guards, unless it exists; whether it made it. Writers reach it through
-- capture_ensure_partitions_v2 (this month on); tests and backfills name an earlier month. Each
-- partition's own window-lock trigger runs capture_window_lock_v2 (a lock only writers take).
CREATE FUNCTION evalledger.capture_make_partition_v2(month date) RETURNS boolean
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    part text;
    enable_all text;
BEGIN
    IF month IS NULL OR month <> date_trunc('month', month)::date THEN
        RAISE EXCEPTION 'evalledger: a partition month is the first day of a month, not %', month
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    part := 'eval_candidates_p' || to_char(month, 'YYYYMM');
    IF to_regclass('evalledger.' || part) IS NOT NULL THEN
        RETURN false;
    END IF;
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
                   'FOR EACH STATEMENT EXECUTE FUNCTION evalledger.capture_window_lock_v2()',
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
    RETURN true;
END;
$$;
