-- capture_ensure_partitions_v2: create the monthly (UTC) partitions of eval_candidates from this month to months_ahead months on (capture_make_partition_v2 each); returns how many it made.
CREATE FUNCTION evalledger.capture_ensure_partitions_v2(months_ahead integer DEFAULT 3) RETURNS integer
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    month date;
    made integer := 0;
BEGIN
    IF months_ahead IS NULL OR months_ahead NOT BETWEEN 0 AND 24 THEN
        RAISE EXCEPTION 'evalledger: months_ahead must be between 0 and 24, not %', months_ahead
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    -- Two writers starting at once would otherwise both try to create the same partition. SHARE UPDATE
    -- EXCLUSIVE conflicts with itself, not with the writers' ROW EXCLUSIVE; it is a lock on a table of
    -- the code role's, so no login can hold it to stall the writers (an advisory key anyone could).
    LOCK TABLE evalledger.capture_window IN SHARE UPDATE EXCLUSIVE MODE;
    FOR month IN
        SELECT generate_series(date_trunc('month', clock_timestamp() AT TIME ZONE 'UTC'),
                               date_trunc('month', clock_timestamp() AT TIME ZONE 'UTC')
                                   + make_interval(months => months_ahead),
                               interval '1 month')::date
    LOOP
        IF evalledger.capture_make_partition_v2(month) THEN
            made := made + 1;
        END IF;
    END LOOP;
    RETURN made;
END;
$$;
GRANT EXECUTE ON FUNCTION capture_ensure_partitions_v2(integer) TO evalledger_runner;

-- The owner role runs what the writing roles run (its writes pass the same triggers), and
-- nothing more.
GRANT EXECUTE ON FUNCTION capture_ensure_partitions_v2(integer) TO evalledger_owner;
