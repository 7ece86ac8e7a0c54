-- legal_hold_release_admit_v1: a release is stamped by the database, when and by whom (the
-- session's login, not a role it acts as), so the hold's history says who let it go.
CREATE FUNCTION evalledger.legal_hold_release_admit_v1() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    NEW.released_at := now();
    NEW.released_by := session_user;
    RETURN NEW;
END;
$$;

CREATE TRIGGER legal_hold_release_10_admit BEFORE INSERT ON legal_hold_release
    FOR EACH ROW EXECUTE FUNCTION legal_hold_release_admit_v1();

-- The owner role releases holds; the release trigger (its own rights) stamps them.
GRANT EXECUTE ON FUNCTION legal_hold_release_admit_v1() TO evalledger_owner;
