-- criterion_miss_v1: a missed criterion as a phrase for the rationale, e.g. "citation rate 3pp below
-- 95%", or, for a score with nothing to measure (null), what was missing: never counted as met.
CREATE FUNCTION evalledger.criterion_miss_v1(criterion jsonb, value numeric) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
    WITH c AS (
        SELECT criterion ->> 'label' AS label,
               (criterion ->> 'threshold')::numeric AS threshold,
               criterion ->> 'unit' = 'rate' AS is_rate,
               criterion ->> 'op' AS op)
    SELECT CASE
             WHEN value IS NULL THEN
                 format('%s unmeasurable (%s)', label, CASE criterion ->> 'key'
                     WHEN 'hallucination_rate' THEN 'no claims in the run'
                     WHEN 'staleness_recognition_rate' THEN 'no stale-fixture question in the run'
                     WHEN 'lever_mapping_correctness' THEN 'no lever mapping scored'
                     WHEN 'diagnosis_accuracy_mean' THEN 'no question of a diagnosis type in the run'
                     ELSE 'nothing in the run to measure it' END)
             WHEN op = '<=' AND is_rate THEN
                 format('%s %s%% above the %s%% limit', label,
                        evalledger.shown_apart_v1(value * 100, threshold * 100, 2), trim_scale(round(threshold * 100, 2)))
             WHEN op = '<=' THEN
                 format('%s %s above the %s limit', label, evalledger.shown_apart_v1(value, threshold, 2),
                        trim_scale(threshold))
             WHEN is_rate THEN
                 format('%s %spp below %s', label, evalledger.shown_apart_v1((threshold - value) * 100, 0, 1),
                        coalesce(criterion ->> 'target_label', trim_scale(round(threshold * 100, 2)) || '%'))
             ELSE
                 format('%s %s below %s', label, evalledger.shown_apart_v1(threshold - value, 0, 2),
                        coalesce(criterion ->> 'target_label', trim_scale(threshold)::text))
           END
      FROM c;
$$;
