-- reviewer_id_of_v1: the reviewer_user_id of a database role, asked about itself (NULL for
-- anyone else, and for another role than the caller's: reviewers do not look each other up).
CREATE FUNCTION evalledger.reviewer_id_of_v1(role_name name) RETURNS uuid
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
    SELECT r.reviewer_user_id FROM evalledger.reviewer r
     WHERE r.role_name = reviewer_id_of_v1.role_name AND r.role_name = evalledger.caller_v1();
$$;
GRANT EXECUTE ON FUNCTION reviewer_id_of_v1(name) TO evalledger_reviewer;

-- The owner role runs what the writing roles run (its writes pass the same triggers), and
-- nothing more.
GRANT EXECUTE ON FUNCTION reviewer_id_of_v1(name) TO evalledger_owner;
