-- takes_quality_receipt_uncertainty_v1: a takes-quality receipt with each dimension's optional
-- "stderr" and "ci95" (additive at schema_version 1, seed 000): what `takes-quality show` prints, and
-- `run --json` and the receipt's disk copy carry. A completed run's are what its completion stored
-- (eval_takes_quality_run_uncertainty, since migration 0153), never computed again; an open run's
-- (a receipt so far) takes_quality_uncertainty_v1's of its verdict rows now. The stored receipt_json
-- (what the completion trigger wrote, and what the ledger re-derives) is left as it was.
CREATE FUNCTION evalledger.takes_quality_receipt_uncertainty_v1(p_run_id bigint, receipt jsonb) RETURNS jsonb
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
    SELECT CASE WHEN receipt IS NULL OR jsonb_typeof(receipt -> 'scores') IS DISTINCT FROM 'object' THEN receipt
                ELSE jsonb_set(receipt, '{scores}', coalesce((
                    SELECT jsonb_object_agg(s.key,
                               CASE WHEN jsonb_typeof(s.value) = 'object' AND u.u -> s.key IS NOT NULL
                                    THEN s.value || jsonb_build_object('stderr', u.u -> s.key -> 'stderr',
                                                                       'ci95', u.u -> s.key -> 'ci95')
                                    ELSE s.value END)
                      FROM jsonb_each(receipt -> 'scores') s,
                           (SELECT coalesce((SELECT x.uncertainty FROM evalledger.eval_takes_quality_run_uncertainty x
                                              WHERE x.run_id = p_run_id),
                                            evalledger.takes_quality_uncertainty_v1(p_run_id)) AS u) u), receipt -> 'scores')) END
$$;
GRANT EXECUTE ON FUNCTION takes_quality_receipt_uncertainty_v1(bigint, jsonb) TO evalledger_runner, evalledger_revops, evalledger_auditor;
