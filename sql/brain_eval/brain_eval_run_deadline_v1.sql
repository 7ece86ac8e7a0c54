-- brain_eval_run_deadline_v1: when an open run recorded at `recorded` (its created_at, the
-- database's clock) under rubric `rubric` is abandoned: the rubric's open_run_days (14 when it
-- names none) later, counted in seconds so that no session TimeZone's daylight-saving change moves
-- it (timestamptz + interval 'N days' is N calendar days in the session's zone).
CREATE FUNCTION evalledger.brain_eval_run_deadline_v1(recorded timestamptz, rubric bigint) RETURNS timestamptz
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
    SELECT recorded + make_interval(secs => 86400 * coalesce((r.definition ->> 'open_run_days')::numeric, 14))
      FROM evalledger.rubric r WHERE r.rubric_id = rubric
$$;

GRANT EXECUTE ON FUNCTION brain_eval_run_deadline_v1(timestamptz, bigint)
    TO evalledger_runner, evalledger_reviewer, evalledger_revops, evalledger_auditor;
