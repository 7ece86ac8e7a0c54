-- retention_purge_log_admit_v1: a purge log row is written by the purge alone, stamped by the
-- database with when, who (the session's login) and the transaction.
CREATE FUNCTION evalledger.retention_purge_log_admit_v1() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    IF NOT evalledger.retention_purging_v1() THEN
        RAISE EXCEPTION 'evalledger: retention_purge_log is written by the retention purge alone'
            USING ERRCODE = 'insufficient_privilege';
    END IF;
    NEW.purged_at := now();
    NEW.purged_by := session_user;
    NEW.txid := txid_current();
    RETURN NEW;
END;
$$;

CREATE TRIGGER retention_purge_log_10_admit BEFORE INSERT ON retention_purge_log
    FOR EACH ROW EXECUTE FUNCTION retention_purge_log_admit_v1();
