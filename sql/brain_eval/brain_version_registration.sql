-- The lock of brain versions' registrations (brain_version_admit_v2): a registration takes it
-- EXCLUSIVE, so two registrations at once (two brains registering two spellings of one prompt)
-- wait for each other and the second, under READ COMMITTED, sees the first. It never holds a row.
-- Only the code role's functions lock it: the auditor and the owner role may read it (as every
-- journalled table: verify reads them all), which takes ACCESS SHARE, the one mode that does not
-- conflict with EXCLUSIVE, and no role holds a privilege that takes another. So no login can stall a
-- registration, as any login that knew a prompt could hold the advisory key once taken on it, and a
-- registration waits for nothing else (a lock on every brain's target row would have waited for
-- every open transaction that had written a run, a hold or any row naming a brain).
CREATE TABLE brain_version_registration (
    nothing boolean,
    CONSTRAINT brain_version_registration_pkey PRIMARY KEY (nothing),
    CONSTRAINT brain_version_registration_holds_no_rows CHECK (false)
);

CREATE POLICY brain_version_registration_auditor ON brain_version_registration FOR SELECT TO evalledger_auditor
    USING (true);
GRANT SELECT ON brain_version_registration TO evalledger_auditor;
