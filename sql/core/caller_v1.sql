-- caller_v1: the role a statement runs as outside any SECURITY DEFINER function (its SET ROLE, else
-- the login), which definer code cannot read from current_user: it is how helpers refuse what the
-- caller cannot see.
CREATE FUNCTION evalledger.caller_v1() RETURNS name
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
    SELECT CASE current_setting('role') WHEN 'none' THEN session_user ELSE current_setting('role') END::name;
$$;
