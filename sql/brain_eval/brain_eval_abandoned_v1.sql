-- brain_eval_abandoned_v1: the rationale of a run closed without completing whole, by its closure
-- (or, for an open run past its deadline not yet closed, by what its closure will say). Every one
-- begins "Abandoned:", which readers filter on; times in UTC whatever the session's TimeZone.
CREATE FUNCTION evalledger.brain_eval_abandoned_v1(closure text, reason text, closed_by name) RETURNS text
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
    SELECT CASE closure
           WHEN 'cancelled' THEN format('Abandoned: cancelled by %s: %s', closed_by, reason)
           ELSE 'Abandoned: ' || reason END
$$;

GRANT EXECUTE ON FUNCTION brain_eval_abandoned_v1(text, text, name)
    TO evalledger_runner, evalledger_reviewer, evalledger_revops, evalledger_auditor;
