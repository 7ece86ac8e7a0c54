-- The ledger's schema, owned by the code role (evalledger_code, NOLOGIN): it owns everything in it.
CREATE SCHEMA evalledger AUTHORIZATION evalledger_code;
REVOKE ALL ON SCHEMA evalledger FROM PUBLIC;
-- USAGE only: no application role, the owner role included, creates a name in the ledger's schema.
GRANT USAGE ON SCHEMA evalledger
    TO evalledger_owner, evalledger_runner, evalledger_reviewer, evalledger_revops, evalledger_auditor,
       evalledger_retention;
-- Functions are not PUBLIC: a SECURITY DEFINER function would otherwise read past RLS for anyone.
ALTER DEFAULT PRIVILEGES FOR ROLE evalledger_code REVOKE EXECUTE ON FUNCTIONS FROM PUBLIC;
