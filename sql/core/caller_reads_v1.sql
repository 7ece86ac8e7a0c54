-- What a definer helper may answer: only what its caller could read.
-- caller_reads_v1: whether the caller (caller_v1: its SET ROLE, else its login) may read a row of
-- the given tier clock and, for a brain-eval run's rows, of the given reviewer: what the read
-- policies say (auditors and the owner role everything; the runner and RevOps the hot tier; a
-- reviewer its own hot runs). Definer helpers read past the policies and ask this before they
-- answer, so they answer only about what their caller could read itself, and a refusal reads the
-- same for a row the caller cannot see as for one that does not exist.
CREATE FUNCTION evalledger.caller_reads_v1(clock timestamptz, reviewer uuid) RETURNS boolean
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
    SELECT clock IS NOT NULL
       AND (pg_has_role(evalledger.caller_v1(), 'evalledger_auditor', 'USAGE')
            OR pg_has_role(evalledger.caller_v1(), 'evalledger_owner', 'USAGE')
            OR (clock >= evalledger.hot_tier_start_v1()
                AND (pg_has_role(evalledger.caller_v1(), 'evalledger_runner', 'USAGE')
                     OR pg_has_role(evalledger.caller_v1(), 'evalledger_revops', 'USAGE')
                     OR (reviewer IS NOT NULL
                         AND reviewer = (SELECT r.reviewer_user_id FROM evalledger.reviewer r
                                          WHERE r.role_name = evalledger.caller_v1())))))
$$;
