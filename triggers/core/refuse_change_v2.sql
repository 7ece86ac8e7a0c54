-- refuse_change_v2: the append-only guard. A DELETE passes only inside the retention purge
-- (retention_purge_v2, its transaction's marker) and only for a row that retention_due_v1 finds
-- past the purge horizon and under no legal hold; every UPDATE it guards, and every TRUNCATE, is
-- refused, whoever asks (the owner role and a superuser included).
CREATE FUNCTION evalledger.refuse_change_v2() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        IF evalledger.retention_purging_v1() AND evalledger.retention_due_v1(TG_TABLE_NAME, to_jsonb(OLD)) THEN
            RETURN OLD;
        END IF;
        RAISE EXCEPTION 'evalledger: % is append-only: DELETE refused', TG_TABLE_NAME
            USING ERRCODE = 'insufficient_privilege',
                  HINT = format('rows leave only through the retention purge (evalledger retention apply), '
                                'after %s, and never under a legal hold', evalledger.purge_horizon_v1());
    END IF;
    RAISE EXCEPTION 'evalledger: % is append-only: % refused', TG_TABLE_NAME, TG_OP
        USING ERRCODE = 'insufficient_privilege';
END;
$$;
