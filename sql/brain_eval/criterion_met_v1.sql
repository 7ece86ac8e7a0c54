-- criterion_met_v1: value against a rubric criterion's operator and threshold.
CREATE FUNCTION evalledger.criterion_met_v1(criterion jsonb, value numeric) RETURNS boolean
LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE criterion ->> 'op'
             WHEN '>=' THEN value >= (criterion ->> 'threshold')::numeric
             WHEN '<=' THEN value <= (criterion ->> 'threshold')::numeric
           END;
$$;
