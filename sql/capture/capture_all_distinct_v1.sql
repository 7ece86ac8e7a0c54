-- capture_all_distinct_v1: whether no element of a text array occurs twice, for the "deduplicated"
-- CHECKs of seed 001 (retrieved_slugs, source_ids; their CHECKs refuse a NULL element apart).
-- Elements are compared with text's =, as DISTINCT compares them. It replaces counting the
-- elements capture_distinct_v1 gave back: a SQL function with an aggregate is never inlined, and
-- running it took a quarter of a captured row's server time (bench/capture.py). Short arrays, the
-- usual ones, compare each pair in a loop; a longer one counts its distinct elements once.
-- search_path pinned, so no operator of a session's own schema takes the place of text's =.
CREATE FUNCTION evalledger.capture_all_distinct_v1(items text[]) RETURNS boolean
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    n integer := cardinality(items);
BEGIN
    IF n > 32 THEN
        RETURN n = (SELECT count(DISTINCT i) FROM unnest(items) AS i);
    END IF;
    FOR i IN 2 .. n LOOP
        FOR j IN 1 .. i - 1 LOOP
            IF items[i] = items[j] THEN
                RETURN false;
            END IF;
        END LOOP;
    END LOOP;
    RETURN true;
END;
$$;

GRANT EXECUTE ON FUNCTION capture_all_distinct_v1(text[])
    TO evalledger_runner, evalledger_revops, evalledger_auditor, evalledger_owner;
