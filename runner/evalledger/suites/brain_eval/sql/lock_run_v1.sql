-- lock_run_v1: lock a run FOR SHARE so its completion cannot slip between a question row's
-- check and its write. SECURITY DEFINER because locking needs UPDATE rights a reviewer lacks;
-- it returns nothing, so it reveals nothing past the caller's own row-level security.
CREATE FUNCTION evalledger.lock_run_v1(run_id uuid) RETURNS void
LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
    SELECT FROM evalledger.brain_eval_log l WHERE l.eval_run_id = run_id FOR SHARE;
$$;
