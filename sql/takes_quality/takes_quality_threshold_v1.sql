-- takes_quality_threshold_v1: the threshold `regress` compares with: the one given, else seed
-- 000's default, 0.5 (a dimension mean, or the overall, dropping by more is a regression); a
-- negative or non-finite one is refused. `regress` names it before it runs.
CREATE FUNCTION evalledger.takes_quality_threshold_v1(threshold numeric DEFAULT NULL)
RETURNS numeric LANGUAGE plpgsql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    IF threshold IS NULL THEN
        RETURN 0.5;
    END IF;
    IF NOT evalledger.finite_v1(threshold) OR threshold < 0 THEN
        RAISE EXCEPTION 'evalledger: a regress threshold is a finite number of at least 0, got %', threshold
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    RETURN threshold;
END;
$$;

-- plan_v1 reads the default as RevOps and the auditor read the plan (issue 36).
GRANT EXECUTE ON FUNCTION takes_quality_threshold_v1(numeric) TO evalledger_runner, evalledger_revops, evalledger_auditor;
