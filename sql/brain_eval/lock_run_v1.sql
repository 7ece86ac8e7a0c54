-- lock_run_v1: lock a run FOR SHARE so its completion cannot slip between a question row's
-- check and its write. SECURITY DEFINER because locking needs UPDATE rights no application role
-- holds (docs/guards.md, section 21); so it locks only a run the caller may read (caller_reads_v1:
-- the runner a hot run, a reviewer its own hot runs), and does nothing, as for a run that does not
-- exist, for any other: it neither blocks another's completion or purge nor reveals a run.
CREATE FUNCTION evalledger.lock_run_v1(run_id uuid) RETURNS void
LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
    SELECT FROM evalledger.brain_eval_log l
     WHERE l.eval_run_id = run_id
       AND evalledger.caller_reads_v1(l.created_at, l.reviewer_user_id)
       FOR SHARE OF l;
$$;
GRANT EXECUTE ON FUNCTION lock_run_v1(uuid) TO evalledger_runner, evalledger_reviewer;

-- The owner role runs what the writing roles run (its writes pass the same triggers), and
-- nothing more.
GRANT EXECUTE ON FUNCTION lock_run_v1(uuid) TO evalledger_owner;
