-- lock_run_v1: lock a run FOR SHARE so its completion cannot slip between a question row's
-- check and its write. SECURITY DEFINER because locking needs UPDATE rights a reviewer lacks; so
-- it locks only a run the caller may see (a reviewer: its own), and does nothing, like for a run
-- that does not exist, for any other: it neither blocks another's completion nor reveals a run.
CREATE FUNCTION evalledger.lock_run_v1(run_id uuid) RETURNS void
LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
    SELECT FROM evalledger.brain_eval_log l
     WHERE l.eval_run_id = run_id
       AND (pg_has_role(evalledger.caller_v1(), 'evalledger_runner', 'MEMBER')
            OR pg_has_role(evalledger.caller_v1(), 'evalledger_owner', 'MEMBER')
            OR l.reviewer_user_id = (SELECT r.reviewer_user_id FROM evalledger.reviewer r
                                      WHERE r.role_name = evalledger.caller_v1()))
       FOR SHARE OF l;
$$;
