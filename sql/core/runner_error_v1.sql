-- runner_error_v1: true when the runner reports a judge call that failed or was not made (what
-- only the runner can see: provider_error, budget_exhausted); false when it reports none; raises
-- for any other kind, which is the database's to decide from the reply.
CREATE FUNCTION evalledger.runner_error_v1(error_kind text) RETURNS boolean
LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
    IF error_kind IS NOT NULL AND error_kind NOT IN ('provider_error', 'budget_exhausted') THEN
        RAISE EXCEPTION 'evalledger: error_kind % is the database''s to decide', error_kind
            USING ERRCODE = 'insufficient_privilege', COLUMN = 'error_kind';
    END IF;
    RETURN error_kind IS NOT NULL;
END;
$$;
