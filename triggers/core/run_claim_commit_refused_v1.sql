-- A run claim is an uncommitted row: committing one is refused.
-- run_claim_commit_refused_v1: a run claim is a row no transaction commits. A runner inserts its
-- claim in a transaction it keeps open while it judges the run and then rolls back; a second
-- runner inserting the same claim waits on the first's transaction, so two identical runs never
-- make the same call twice. The claim ends with its transaction, whether it rolls back, its
-- connection drops or its process is killed, so no claim outlives its runner; this deferred
-- trigger refuses the commit that would leave one behind. Only roles with INSERT on the table
-- (the runner, the owner) can take a claim: unlike an advisory lock, no reader can hold one up.
CREATE FUNCTION evalledger.run_claim_commit_refused_v1() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    RAISE EXCEPTION 'evalledger: a run claim lasts as long as its transaction: roll it back, never commit it'
        USING ERRCODE = 'invalid_transaction_termination';
END;
$$;

CREATE CONSTRAINT TRIGGER run_claim_90_commit_refused AFTER INSERT ON run_claim
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION run_claim_commit_refused_v1();
