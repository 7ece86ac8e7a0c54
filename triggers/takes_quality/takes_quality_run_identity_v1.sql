-- takes_quality_run_identity_v1: the rest of a takes-quality run's identity, after the seed's four
-- fingerprints (takes_quality_run_admit_v2 fills in the rubric's and the panel's). scope_sha8 is
-- the database's fingerprint of where the sample was drawn from: the source, the path of an fs
-- corpus and the slug prefix (each is in the receipt, and the prefix is in the judges' prompt), so
-- a run over files never reads back a run over the database. judges says how the run is judged,
-- live or recorded, so recorded replies never occupy a live run's identity. rerun numbers the
-- judgings of one eval: 0 the first, N+1 a `--rerun` once judging N is complete, among the runs
-- that ask each judge as many times (repeats).
CREATE FUNCTION evalledger.takes_quality_run_identity_v1() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    NEW.scope_sha8 := left(encode(sha256(convert_to(
        jsonb_build_array(NEW.corpus_source, NEW.corpus_path, NEW.slug_prefix)::text, 'UTF8')), 'hex'), 8);
    NEW.rerun := coalesce(NEW.rerun, 0);
    IF NEW.rerun > 0 AND NOT EXISTS (
            SELECT 1 FROM evalledger.eval_takes_quality_runs r
             WHERE (r.corpus_sha8, r.prompt_sha8, r.models_sha8, r.rubric_sha8, r.scope_sha8, r.judges, r.rerun,
                    r.repeats)
                 = (NEW.corpus_sha8, NEW.prompt_sha8, NEW.models_sha8, NEW.rubric_sha8, NEW.scope_sha8, NEW.judges,
                    NEW.rerun - 1, NEW.repeats)
               AND r.completed_at IS NOT NULL) THEN
        RAISE EXCEPTION 'evalledger: rerun % of this takes-quality eval needs its judging % complete first',
                NEW.rerun, NEW.rerun - 1
            USING ERRCODE = 'check_violation', COLUMN = 'rerun';
    END IF;
    RETURN NEW;
END;
$$;

CREATE TRIGGER eval_takes_quality_runs_15_identity BEFORE INSERT ON eval_takes_quality_runs
    FOR EACH ROW EXECUTE FUNCTION takes_quality_run_identity_v1();
