-- Large objects (issue 17): no role of the ledger needs to create one, and any login could
-- (stored outside every table, unguarded and unpurged). Revoked from PUBLIC where a superuser
-- installs (the functions are pg_catalog's); elsewhere `evalledger doctor` warns. Not an object
-- of the ledger: a privilege PUBLIC loses on the server's own functions.
DO $large_objects$
BEGIN
    IF NOT (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) THEN
        RAISE NOTICE 'evalledger: not a superuser: any login may still create large objects (lo_create)';
        RETURN;
    END IF;
    REVOKE EXECUTE ON FUNCTION pg_catalog.lo_create(oid), pg_catalog.lo_creat(integer),
        pg_catalog.lo_from_bytea(oid, bytea), pg_catalog.lo_import(text), pg_catalog.lo_import(text, oid) FROM PUBLIC;
END
$large_objects$;
