-- agreement_measures_v1: what the dashboards and `brain-eval show` say of a judge's agreement with
-- the reviewer, from the 3x3 tables of pairs (laid out as cohen_kappa_v1's) and the total-claims
-- pairs: for unsupported claims (bins 0, 1, 2+) the pairs, the observed agreement (the share on
-- the diagonal, 0-1) and Cohen's kappa; for diagnosis accuracy (0, 0.5, 1) the pairs, the observed
-- agreement and the linearly weighted kappa; for total claims the pairs and the mean absolute
-- difference. The one home of that arithmetic.
CREATE FUNCTION evalledger.agreement_measures_v1(
    unsupported bigint[], diagnosis bigint[], claims_pairs bigint, claims_abs_difference bigint)
RETURNS TABLE (
    unsupported_pairs          bigint,
    unsupported_agreement      numeric,
    unsupported_kappa          numeric,
    diagnosis_pairs            bigint,
    diagnosis_agreement        numeric,
    diagnosis_weighted_kappa   numeric,
    claims_pairs               bigint,
    claims_mean_abs_difference numeric)
LANGUAGE sql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $$
    SELECT u.n, round((unsupported[1] + unsupported[5] + unsupported[9])::numeric / nullif(u.n, 0), 4),
           evalledger.cohen_kappa_v1(unsupported),
           d.n, round((diagnosis[1] + diagnosis[5] + diagnosis[9])::numeric / nullif(d.n, 0), 4),
           evalledger.weighted_kappa_v1(diagnosis),
           claims_pairs, round(claims_abs_difference::numeric / nullif(claims_pairs, 0), 4)
      FROM (SELECT coalesce(sum(x), 0)::bigint AS n FROM unnest(unsupported) x) u,
           (SELECT coalesce(sum(x), 0)::bigint AS n FROM unnest(diagnosis) x) d
$$;
GRANT EXECUTE ON FUNCTION agreement_measures_v1(bigint[], bigint[], bigint, bigint) TO evalledger_revops, evalledger_auditor;
