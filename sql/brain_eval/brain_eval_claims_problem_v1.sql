-- Automatic scores: one computation for harness and recorded runs.
-- brain_eval_claims_problem_v1: what keeps the database from scoring an answer's claims (NULL when
-- nothing): the answer contract's claims are an array of objects, each with `numerical` true or
-- false, `source_ids` an array of source ids (strings), and `confidence` one of high, multi_source,
-- inference or speculation. Citation rate and the confidence distribution are computed from exactly
-- these, so an answer that lacks them cannot be scored, and is not taken. The first problem is
-- named by its JSON path in the answer (claims[0] the first claim) and the value found (migration 0168).
CREATE FUNCTION evalledger.brain_eval_claims_problem_v1(claims jsonb) RETURNS text
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
GRANT EXECUTE ON FUNCTION brain_eval_claims_problem_v1(jsonb) TO evalledger_runner, evalledger_reviewer;

-- The owner role runs what the writing roles run (its writes pass the same triggers), and
-- nothing more.
GRANT EXECUTE ON FUNCTION brain_eval_claims_problem_v1(jsonb) TO evalledger_owner;
