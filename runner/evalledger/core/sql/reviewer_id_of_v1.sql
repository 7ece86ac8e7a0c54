-- reviewer_id_of_v1: the reviewer_user_id of a database role (NULL for anyone else).
CREATE FUNCTION evalledger.reviewer_id_of_v1(role_name name) RETURNS uuid
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
    SELECT r.reviewer_user_id FROM evalledger.reviewer r WHERE r.role_name = reviewer_id_of_v1.role_name;
$$;
