-- capture_distinct_v1: the distinct elements of a text array (order not kept), for the "deduplicated" CHECKs of seed 001.
CREATE FUNCTION evalledger.capture_distinct_v1(items text[]) RETURNS text[]
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
    SELECT coalesce(array_agg(DISTINCT i), '{}') FROM unnest(items) AS i
$$;
