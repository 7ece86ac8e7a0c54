-- judge_scores_v2: the contribution rule every judged suite shares. A judge's reply contributes
-- when every dimension of the rubric is present (flat, or under "scores"), a number, and within
-- the rubric's scale: then {"scores": {dimension: number, ...}} in rubric order; otherwise
-- {"error_kind", "error_message"} saying why not (parse_failed, incomplete_scores, out_of_scale).
-- A rubric without a numeric scale admits no score: out_of_scale, never an unchecked number.
CREATE FUNCTION evalledger.judge_scores_v2(reply jsonb, policy jsonb) RETURNS jsonb
LANGUAGE plpgsql STABLE AS $$
DECLARE
    dims text[] := ARRAY(SELECT d ->> 'key'
                           FROM jsonb_array_elements(policy -> 'dimensions') WITH ORDINALITY x(d, n) ORDER BY n);
    lo numeric := (policy -> 'scale' ->> 'min')::numeric;
    hi numeric := (policy -> 'scale' ->> 'max')::numeric;
    container jsonb;
    missing text[];
    dim text;
    value jsonb;
    scores jsonb := '{}';
BEGIN
    IF lo IS NULL OR hi IS NULL THEN
        RETURN jsonb_build_object('error_kind', 'out_of_scale', 'error_message', 'the rubric has no scale');
    END IF;
    IF reply IS NULL OR jsonb_typeof(reply) <> 'object' THEN
        RETURN jsonb_build_object('error_kind', 'parse_failed', 'error_message', 'no JSON object in the reply');
    END IF;
    container := CASE WHEN jsonb_typeof(reply -> 'scores') = 'object' THEN reply -> 'scores' ELSE reply END;
    missing := ARRAY(SELECT d FROM unnest(dims) WITH ORDINALITY u(d, n)
                      WHERE coalesce(jsonb_typeof(container -> d), 'null') = 'null' ORDER BY n);
    IF cardinality(missing) > 0 THEN
        RETURN jsonb_build_object('error_kind', 'incomplete_scores',
                                  'error_message', format('missing [%s]', array_to_string(missing, ', ')));
    END IF;
    FOREACH dim IN ARRAY dims LOOP
        value := container -> dim;
        IF jsonb_typeof(value) <> 'number' OR (value #>> '{}')::numeric NOT BETWEEN lo AND hi THEN
            RETURN jsonb_build_object('error_kind', 'out_of_scale',
                                      'error_message', format('%s = %s (scale %s-%s)', dim, value::text, lo, hi));
        END IF;
        scores := scores || jsonb_build_object(dim, trim_scale((value #>> '{}')::numeric));
    END LOOP;
    RETURN jsonb_build_object('scores', scores);
END;
$$;
