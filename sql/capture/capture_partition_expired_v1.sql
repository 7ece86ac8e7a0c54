-- capture_partition_expired_v1: true when name is a monthly eval_candidates partition whose whole month is past the purge horizon.
CREATE FUNCTION evalledger.capture_partition_expired_v1(name text) RETURNS boolean
LANGUAGE sql STABLE AS $$
    SELECT coalesce(
        name ~ '^eval_candidates_p[0-9]{4}(0[1-9]|1[0-2])$'
        AND (to_date(right(name, 6), 'YYYYMM') + interval '1 month')::timestamp AT TIME ZONE 'UTC'
            <= now() - evalledger.purge_horizon_v1(),
        false)
$$;
