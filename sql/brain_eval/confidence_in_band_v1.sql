-- confidence_in_band_v1: a question's confidence distribution lies inside the rubric's band.
CREATE FUNCTION evalledger.confidence_in_band_v1(dist jsonb, band jsonb) RETURNS boolean
LANGUAGE sql IMMUTABLE AS $$
    SELECT (dist ->> 'high_confidence_pct')::numeric
               BETWEEN (band -> 'high_confidence_pct' ->> 0)::numeric AND (band -> 'high_confidence_pct' ->> 1)::numeric
       AND (dist ->> 'speculation_pct')::numeric <= (band ->> 'speculation_pct_max')::numeric;
$$;
