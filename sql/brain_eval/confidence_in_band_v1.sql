-- confidence_in_band_v1: a question's confidence distribution lies inside the rubric's band.
CREATE FUNCTION evalledger.confidence_in_band_v1(dist jsonb, band jsonb) RETURNS boolean
LANGUAGE sql IMMUTABLE AS $$
    SELECT (dist ->> 'high_confidence_pct')::numeric
               BETWEEN (band -> 'high_confidence_pct' ->> 0)::numeric AND (band -> 'high_confidence_pct' ->> 1)::numeric
       AND (dist ->> 'speculation_pct')::numeric <= (band ->> 'speculation_pct_max')::numeric;
$$;

-- brain_eval_uncertainty_v1 runs with its reader's rights and counts the questions in band as the
-- decision does (issue 36).
GRANT EXECUTE ON FUNCTION confidence_in_band_v1(jsonb, jsonb)
    TO evalledger_runner, evalledger_reviewer, evalledger_revops, evalledger_auditor;
