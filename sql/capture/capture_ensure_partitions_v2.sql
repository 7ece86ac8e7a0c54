-- capture_ensure_partitions_v2: create the monthly (UTC) partitions of eval_candidates from this month to months_ahead months on (capture_make_partition_v2 each); returns how many it made.
-- Creating a partition takes ACCESS EXCLUSIVE on eval_candidates, and a lock that waits queues every
-- later reader and writer behind it: one reader's open transaction would stall every capture and
-- read. So it waits at most lock_timeout for it, each time: a month ahead that cannot be made now is
-- left to a later writer (it stops there); this month's, which the writer's rows need, is tried again
-- after a pause that lets the queue through, and after 50 tries refused naming who holds the table.
CREATE FUNCTION evalledger.capture_ensure_partitions_v2(months_ahead integer DEFAULT 3) RETURNS integer
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET lock_timeout = '100ms' AS $$
DECLARE
    this_month date := date_trunc('month', clock_timestamp() AT TIME ZONE 'UTC')::date;
    month date;
    made integer := 0;
    tries integer;
    holders text;
BEGIN
    IF months_ahead IS NULL OR months_ahead NOT BETWEEN 0 AND 24 THEN
        RAISE EXCEPTION 'evalledger: months_ahead must be between 0 and 24, not %', months_ahead
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    -- Two writers starting at once would otherwise both try to create the same partition. SHARE UPDATE
    -- EXCLUSIVE conflicts with itself, not with the writers' ROW EXCLUSIVE; it is a lock on a table of
    -- the code role's, so no login can hold it to stall the writers (an advisory key anyone could).
    -- Waiting for it stalls no one else, so it is waited for as long as the other maker takes.
    PERFORM pg_catalog.set_config('lock_timeout', '0', true);
    LOCK TABLE evalledger.capture_window IN SHARE UPDATE EXCLUSIVE MODE;
    PERFORM pg_catalog.set_config('lock_timeout', '100ms', true);
    FOR month IN
        SELECT generate_series(this_month, this_month + make_interval(months => months_ahead), interval '1 month')::date
    LOOP
        tries := 0;
        LOOP
            BEGIN
                IF evalledger.capture_make_partition_v2(month) THEN
                    made := made + 1;
                END IF;
                EXIT;
            EXCEPTION WHEN lock_not_available THEN
                IF month > this_month THEN
                    RETURN made;
                END IF;
                tries := tries + 1;
                IF tries >= 50 THEN
                    SELECT string_agg(DISTINCT a.usename::text, ', ') INTO holders
                      FROM pg_catalog.pg_locks l JOIN pg_catalog.pg_stat_activity a ON a.pid = l.pid
                     WHERE l.locktype = 'relation' AND l.granted AND l.pid <> pg_catalog.pg_backend_pid()
                       AND l.relation = 'evalledger.eval_candidates'::regclass;
                    RAISE EXCEPTION 'evalledger: the capture partition of % is not made: % holds eval_candidates in an open transaction',
                            to_char(month, 'YYYY-MM'), coalesce(holders, 'another session')
                        USING ERRCODE = 'lock_not_available';
                END IF;
                PERFORM pg_catalog.pg_sleep(0.1);
            END;
        END LOOP;
    END LOOP;
    RETURN made;
END;
$$;
GRANT EXECUTE ON FUNCTION capture_ensure_partitions_v2(integer) TO evalledger_runner;

-- The owner role runs what the writing roles run (its writes pass the same triggers), and
-- nothing more.
GRANT EXECUTE ON FUNCTION capture_ensure_partitions_v2(integer) TO evalledger_owner;
