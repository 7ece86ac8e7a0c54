-- active_rubric_v1: the rubric a run of the suite is judged by when it names none: the one its
-- latest activation names (never merely the newest row), NULL when none was ever activated.
CREATE FUNCTION evalledger.active_rubric_v1(suite text) RETURNS bigint
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
    SELECT a.rubric_id FROM evalledger.rubric_activation a
     WHERE a.suite = active_rubric_v1.suite
     ORDER BY a.activation_id DESC LIMIT 1;
$$;

-- Production beside eval reads the replay rubric's rbo_p as its reader: RevOps and auditors.
GRANT EXECUTE ON FUNCTION active_rubric_v1(text) TO evalledger_revops, evalledger_auditor;
