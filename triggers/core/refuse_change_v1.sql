-- refuse_change_v1: the append-only guard. A DELETE passes only for a row past the purge horizon
-- (purge_horizon_v1) that no legal hold covers; every UPDATE it guards, and every TRUNCATE, is refused.
CREATE FUNCTION evalledger.refuse_change_v1() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        IF evalledger.purgeable_v1(TG_TABLE_NAME, to_jsonb(OLD)) THEN
            RETURN OLD;
        END IF;
        RAISE EXCEPTION 'evalledger: % is append-only: DELETE refused', TG_TABLE_NAME
            USING ERRCODE = 'insufficient_privilege',
                  HINT = format('rows are purged only after %s, and never under a legal hold',
                                evalledger.purge_horizon_v1());
    END IF;
    RAISE EXCEPTION 'evalledger: % is append-only: % refused', TG_TABLE_NAME, TG_OP
        USING ERRCODE = 'insufficient_privilege';
END;
$$;
