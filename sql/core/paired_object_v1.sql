-- paired_object_v1: one row of a paired comparison as the CLIs show it and a gate reads it:
-- paired_difference_v1 of two runs' values over the items they share, as
--   {"dimension", "shared", "only_a", "only_b", "mean_difference", "stderr", "ci95": [lo, hi], "mcnemar_p"}
-- ci95 null when there is no standard error (fewer than 2 shared items): no interval, which a gate
-- reads as unmeasurable, never as a pass. docs/statistics.md, "Paired comparisons and gates".
-- Its numbers are float8 turned into jsonb, whose digits follow the session's extra_float_digits
-- (at 0 or below, fewer than it takes to read back the same value): pinned to 1, the shortest exact
-- digits, so no caller's setting changes what a completion stores or what a recompute compares.
CREATE FUNCTION evalledger.paired_object_v1(
    dimension text, a_items text[], a_values double precision[], b_items text[], b_values double precision[])
RETURNS jsonb
LANGUAGE sql IMMUTABLE PARALLEL SAFE SET search_path = pg_catalog, pg_temp SET extra_float_digits = 1 AS $$
    SELECT jsonb_build_object(
               'dimension', dimension, 'shared', p.shared,
               'only_a', to_jsonb(coalesce(p.only_a, '{}')), 'only_b', to_jsonb(coalesce(p.only_b, '{}')),
               'mean_difference', p.mean_difference, 'stderr', p.stderr,
               'ci95', CASE WHEN p.ci_lo IS NOT NULL AND p.ci_hi IS NOT NULL THEN jsonb_build_array(p.ci_lo, p.ci_hi) END,
               'mcnemar_p', p.mcnemar_p)
      FROM evalledger.paired_difference_v1(coalesce(a_items, '{}'), coalesce(a_values, '{}'),
                                           coalesce(b_items, '{}'), coalesce(b_values, '{}')) p
$$;
GRANT EXECUTE ON FUNCTION paired_object_v1(text, text[], double precision[], text[], double precision[])
    TO evalledger_runner, evalledger_revops, evalledger_auditor;
