-- An answer whose claims cannot be scored names the claim by its JSON path and the field and value
-- that are wrong (found by a newcomer: "claim 2 needs numerical, source_ids and confidence" named
-- neither which of the three was wrong nor that claim 2 counts from 0, and brain-eval record could
-- only point at the question's line). brain_eval_claims_problem_v1 now says, e.g.,
-- `claims[2].confidence is "sure", not one of high, multi_source, inference or speculation`, which
-- the runner maps to the line of that field in the file it records.

SET LOCAL ROLE evalledger_code;
SET LOCAL search_path = evalledger, pg_temp;

CREATE OR REPLACE FUNCTION evalledger.brain_eval_claims_problem_v1(claims jsonb) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE
             WHEN jsonb_typeof(claims) IS DISTINCT FROM 'array' THEN 'claims is not an array'
             ELSE (SELECT CASE
                            WHEN jsonb_typeof(c) IS DISTINCT FROM 'object'
                                THEN format('claims[%s] is %s, not an object', n - 1, left(c::text, 60))
                            WHEN jsonb_typeof(c -> 'numerical') IS DISTINCT FROM 'boolean'
                                THEN format('claims[%s].numerical is %s, not true or false', n - 1,
                                            coalesce(left((c -> 'numerical')::text, 60), 'missing'))
                            WHEN jsonb_typeof(c -> 'source_ids') IS DISTINCT FROM 'array'
                                 OR jsonb_path_exists(c, '$.source_ids[*] ? (@.type() != "string")')
                                THEN format('claims[%s].source_ids is %s, not a list of source ids (strings)', n - 1,
                                            coalesce(left((c -> 'source_ids')::text, 60), 'missing'))
                            ELSE format('claims[%s].confidence is %s, not one of high, multi_source, inference or '
                                        'speculation', n - 1, coalesce(left((c -> 'confidence')::text, 60), 'missing'))
                          END
                     FROM jsonb_array_elements(claims) WITH ORDINALITY x(c, n)
                    WHERE jsonb_typeof(c) IS DISTINCT FROM 'object'
                       OR jsonb_typeof(c -> 'numerical') IS DISTINCT FROM 'boolean'
                       OR jsonb_typeof(c -> 'source_ids') IS DISTINCT FROM 'array'
                       OR jsonb_path_exists(c, '$.source_ids[*] ? (@.type() != "string")')
                       OR coalesce(c ->> 'confidence', '') NOT IN ('high', 'multi_source', 'inference', 'speculation')
                    ORDER BY n LIMIT 1)
           END
$$;
