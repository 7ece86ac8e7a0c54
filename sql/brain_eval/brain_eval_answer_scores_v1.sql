-- brain_eval_answer_scores_v1: an answer's automatic scores, computed by the database from what the
-- analysis row holds, the same for a harness run and a recorded one: citation_rate (numerical claims
-- citing at least one source, and only sources given for the question, over numerical claims; 1 when
-- there are none), the confidence distribution (percent of claims per confidence label), and, where
-- `levers` is not NULL (the rubric maps levers for one of the run's brains), the proposed actions
-- whose action_type is not one of them. An answer that broke the contract scores nothing: 0, all
-- zero, and (where levers apply) 1 violation. Unrounded but for the stored scales (4 and 2 decimals).
CREATE FUNCTION evalledger.brain_eval_answer_scores_v1(claims jsonb, given jsonb, actions jsonb, levers text[],
                                                       broke_contract boolean) RETURNS jsonb
LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE WHEN broke_contract THEN jsonb_build_object(
                    'citation_rate', 0,
                    'confidence_distribution', jsonb_build_object('high_confidence_pct', 0, 'multi_source_pct', 0,
                                                                  'inference_pct', 0, 'speculation_pct', 0),
                    'lever_mapping_violations', CASE WHEN levers IS NOT NULL THEN 1 END)
           ELSE jsonb_build_object(
                    'citation_rate', CASE WHEN c.numerical = 0 THEN 1 ELSE round(c.cited::numeric / c.numerical, 4) END,
                    'confidence_distribution', jsonb_build_object(
                        'high_confidence_pct', CASE WHEN c.total = 0 THEN 0 ELSE round(100.0 * c.high / c.total, 2) END,
                        'multi_source_pct', CASE WHEN c.total = 0 THEN 0 ELSE round(100.0 * c.multi / c.total, 2) END,
                        'inference_pct', CASE WHEN c.total = 0 THEN 0 ELSE round(100.0 * c.inference / c.total, 2) END,
                        'speculation_pct', CASE WHEN c.total = 0 THEN 0 ELSE round(100.0 * c.speculation / c.total, 2) END),
                    'lever_mapping_violations', CASE WHEN levers IS NOT NULL THEN (
                        SELECT count(*) FROM jsonb_array_elements(
                                   CASE jsonb_typeof(actions) WHEN 'array' THEN actions ELSE '[]' END) AS p
                         WHERE (p ->> 'action_type') IS NULL OR NOT (p ->> 'action_type') = ANY (levers)) END)
           END
      FROM (SELECT count(*) FILTER (WHERE (x ->> 'numerical')::boolean) AS numerical,
                   count(*) FILTER (WHERE (x ->> 'numerical')::boolean
                                      AND jsonb_array_length(x -> 'source_ids') > 0
                                      AND NOT EXISTS (
                                          SELECT 1 FROM jsonb_array_elements_text(x -> 'source_ids') AS s(id)
                                           WHERE NOT jsonb_path_exists(coalesce(given, '[]'), '$[*] ? (@.id == $id)',
                                                                       jsonb_build_object('id', s.id)))) AS cited,
                   count(*) AS total,
                   count(*) FILTER (WHERE x ->> 'confidence' = 'high') AS high,
                   count(*) FILTER (WHERE x ->> 'confidence' = 'multi_source') AS multi,
                   count(*) FILTER (WHERE x ->> 'confidence' = 'inference') AS inference,
                   count(*) FILTER (WHERE x ->> 'confidence' = 'speculation') AS speculation
              FROM jsonb_array_elements(CASE WHEN broke_contract OR jsonb_typeof(claims) IS DISTINCT FROM 'array'
                                             THEN '[]' ELSE claims END) AS x) c
$$;
GRANT EXECUTE ON FUNCTION brain_eval_answer_scores_v1(jsonb, jsonb, jsonb, text[], boolean) TO evalledger_runner, evalledger_reviewer;

-- The owner role runs what the writing roles run (its writes pass the same triggers), and
-- nothing more.
GRANT EXECUTE ON FUNCTION brain_eval_answer_scores_v1(jsonb,jsonb,jsonb,text[],boolean) TO evalledger_owner;
