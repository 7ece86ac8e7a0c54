-- takes_quality_receipt_identity_v1: what a takes-quality receipt says of the run it is of, whatever
-- became of it (seed 000's schema_version, ts, rubric, corpus, prompt and models; the optional run_id,
-- seed and rerun): the one place both receipts build it, a run's judged receipt
-- (takes_quality_receipt_built_v3) and that of a run closed before any judge answered
-- (takes_quality_receipt_built_v4).
CREATE FUNCTION evalledger.takes_quality_receipt_identity_v1(run evalledger.eval_takes_quality_runs,
                                                             rub evalledger.rubric) RETURNS jsonb
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
    SELECT jsonb_build_object(
        'schema_version', 1,
        'ts', to_char(run.started_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
        'rubric_version', rub.version,
        'rubric_sha8', run.rubric_sha8,
        'corpus', jsonb_build_object('source', run.corpus_source, 'n_takes', run.n_takes,
                                     'slug_prefix', run.slug_prefix, 'corpus_sha8', run.corpus_sha8)
                  || CASE WHEN run.corpus_path IS NULL THEN '{}'::jsonb
                          ELSE jsonb_build_object('path', run.corpus_path) END,
        'prompt_sha8', run.prompt_sha8,
        'models_sha8', run.models_sha8,
        'models', to_jsonb(run.models),
        -- Optional fields (additive at schema_version 1).
        'run_id', run.id,
        'seed', run.seed,
        'rerun', coalesce(run.rerun, 0))
$$;
