-- brain_eval_overdue_v1: the reason an open run past its deadline is abandoned, in UTC.
CREATE FUNCTION evalledger.brain_eval_overdue_v1(deadline timestamptz) RETURNS text
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
    SELECT format('open past its deadline, %s UTC; closed by the database',
                  to_char(deadline AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS'))
$$;

GRANT EXECUTE ON FUNCTION brain_eval_overdue_v1(timestamptz)
    TO evalledger_runner, evalledger_reviewer, evalledger_revops, evalledger_auditor;
