-- brain_eval_import_admit_v1: an import is stamped by the database: who (the login), when, and
-- the transaction its historical runs must be recorded in.
CREATE FUNCTION evalledger.brain_eval_import_admit_v1() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    NEW.imported_by := session_user;
    NEW.txid := txid_current();
    NEW.created_at := now();
    RETURN NEW;
END;
$$;

CREATE TRIGGER brain_eval_import_10_admit BEFORE INSERT ON brain_eval_import
    FOR EACH ROW EXECUTE FUNCTION brain_eval_import_admit_v1();
