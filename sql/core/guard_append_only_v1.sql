-- guard_append_only_v1: per 'table:EVENTS:function' spec, the <table>_00_append_only row trigger
-- BEFORE EVENTS and the <table>_00_no_truncate statement trigger, both running that function.
CREATE PROCEDURE evalledger.guard_append_only_v1(specs text[])
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    spec text;
    t text;
BEGIN
    FOREACH spec IN ARRAY specs LOOP
        t := split_part(spec, ':', 1);
        EXECUTE format('CREATE TRIGGER %I BEFORE %s ON evalledger.%I FOR EACH ROW EXECUTE FUNCTION evalledger.%I()',
                       t || '_00_append_only', split_part(spec, ':', 2), t, split_part(spec, ':', 3));
        EXECUTE format('CREATE TRIGGER %I BEFORE TRUNCATE ON evalledger.%I FOR EACH STATEMENT EXECUTE FUNCTION evalledger.%I()',
                       t || '_00_no_truncate', t, split_part(spec, ':', 3));
    END LOOP;
END;
$$;

-- Migrations' own steps (the role they act as owns them): no one else runs them.
REVOKE EXECUTE ON PROCEDURE guard_append_only_v1(text[]) FROM PUBLIC;
