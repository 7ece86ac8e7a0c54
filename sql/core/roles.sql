-- The ledger's roles. Roles are cluster-wide, so they are created only where missing: several
-- databases on one server share them. None is superuser, none bypasses row-level security.
-- Roles are cluster-wide, so they are created only where missing: several databases on one
-- server share them. None is superuser, none bypasses row-level security.
DO $roles$
DECLARE
    wanted text[] := ARRAY['evalledger_code:NOLOGIN', 'evalledger_owner:NOLOGIN', 'evalledger_runner:LOGIN',
                           'evalledger_reviewer:LOGIN', 'evalledger_revops:LOGIN',
                           'evalledger_auditor:LOGIN', 'evalledger_agent:LOGIN'];
    spec text;
BEGIN
    FOREACH spec IN ARRAY wanted LOOP
        IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = split_part(spec, ':', 1)) THEN
            EXECUTE format('CREATE ROLE %I %s NOSUPERUSER NOBYPASSRLS NOCREATEDB NOCREATEROLE',
                           split_part(spec, ':', 1), split_part(spec, ':', 2));
        END IF;
    END LOOP;
END
$roles$;

-- A superuser acts as the code role (and the owner role, for the registries) without being a
-- member, so no login is the code role's; anyone else must be a member of both, and is then the
-- installer that owns the code (doctor says so).
DO $code$
BEGIN
    IF NOT (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) THEN
        EXECUTE format('GRANT evalledger_code, evalledger_owner TO %I', current_user);
    END IF;
END
$code$;

-- The retention role: -- Only it (and a superuser) runs the purge. Cluster-wide, created where missing; NOLOGIN: the
-- installer acts as it (a superuser without membership; anyone else is made its member, as the
-- baseline makes the installer a member of the code and owner roles).
DO $roles$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'evalledger_retention') THEN
        CREATE ROLE evalledger_retention NOLOGIN NOSUPERUSER NOBYPASSRLS NOCREATEDB NOCREATEROLE;
    END IF;
    IF NOT (SELECT rolsuper FROM pg_roles WHERE rolname = current_user)
       AND NOT pg_has_role(current_user, 'evalledger_retention', 'MEMBER') THEN
        BEGIN
            EXECUTE format('GRANT evalledger_retention TO %I', current_user);
        EXCEPTION WHEN insufficient_privilege THEN
            -- A role created before by someone else, without the ADMIN option for the installer.
            RAISE NOTICE 'evalledger: % may not purge until it is granted evalledger_retention', current_user;
        END;
    END IF;
END
$roles$;
