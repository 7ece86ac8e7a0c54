-- capture_partition_expired_v2: true when name is a monthly eval_candidates partition whose whole month (UTC) is past the
-- purge horizon (purge_horizon_at_v1: in UTC, on the statement's clock, whatever the session's TimeZone).
CREATE FUNCTION evalledger.capture_partition_expired_v2(name text) RETURNS boolean
LANGUAGE sql STABLE AS $$
    SELECT coalesce(
        name ~ '^eval_candidates_p[0-9]{4}(0[1-9]|1[0-2])$'
        AND (to_date(right(name, 6), 'YYYYMM') + interval '1 month')::timestamp AT TIME ZONE 'UTC'
            <= evalledger.purge_horizon_at_v1(),
        false)
$$;
