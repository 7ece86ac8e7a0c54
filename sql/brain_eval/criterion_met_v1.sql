-- criterion_met_v1: value against a rubric criterion's operator and threshold.
CREATE FUNCTION evalledger.criterion_met_v1(criterion jsonb, value numeric) RETURNS boolean
LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE criterion ->> 'op'
             WHEN '>=' THEN value >= (criterion ->> 'threshold')::numeric
             WHEN '<=' THEN value <= (criterion ->> 'threshold')::numeric
           END;
$$;

-- The panels' functions: a function a view calls runs with the reader's rights.
GRANT EXECUTE ON FUNCTION criterion_met_v1(jsonb, numeric) TO evalledger_reviewer, evalledger_revops, evalledger_auditor;
