-- criterion_miss_v1: a missed criterion as a phrase for the rationale, e.g. "citation rate 3pp below 95%".
CREATE FUNCTION evalledger.criterion_miss_v1(criterion jsonb, value numeric) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
    WITH c AS (
        SELECT criterion ->> 'label' AS label,
               (criterion ->> 'threshold')::numeric AS threshold,
               criterion ->> 'unit' = 'rate' AS is_rate,
               criterion ->> 'op' AS op)
    SELECT CASE
             WHEN op = '<=' AND is_rate THEN
                 format('%s %s%% above the %s%% limit', label,
                        trim_scale(round(value * 100, 2)), trim_scale(round(threshold * 100, 2)))
             WHEN op = '<=' THEN
                 format('%s %s above the %s limit', label, trim_scale(round(value, 2)), trim_scale(threshold))
             WHEN is_rate THEN
                 format('%s %spp below %s', label, trim_scale(round((threshold - value) * 100, 1)),
                        coalesce(criterion ->> 'target_label', trim_scale(round(threshold * 100, 2)) || '%'))
             ELSE
                 format('%s %s below %s', label, trim_scale(round(threshold - value, 2)),
                        coalesce(criterion ->> 'target_label', trim_scale(threshold)::text))
           END
      FROM c;
$$;
