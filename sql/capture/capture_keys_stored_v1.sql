-- capture_keys_stored_v1: which of these capture keys are stored already. The capture writer's
-- INSERT leaves them out, so replaying a spool after a crash between the INSERT and the spool's
-- truncation writes nothing twice and refuses nothing. SECURITY DEFINER: nobody but the code role
-- reads eval_candidate_keys; what this tells a writer is only whether keys it holds are taken.
CREATE FUNCTION evalledger.capture_keys_stored_v1(keys uuid[]) RETURNS SETOF uuid
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
    SELECT k.capture_key FROM evalledger.eval_candidate_keys k WHERE k.capture_key = ANY (keys);
$$;

GRANT EXECUTE ON FUNCTION capture_keys_stored_v1(uuid[]) TO evalledger_runner;
