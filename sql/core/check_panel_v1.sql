-- check_panel_v1: a judge panel is at least one provider:model id, none twice; raises naming the
-- run kind (e.g. 'takes-quality run') and the offending model otherwise.
CREATE FUNCTION evalledger.check_panel_v1(run_kind text, models text[]) RETURNS void
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
    bad text;
BEGIN
    IF cardinality(models) IS NULL OR cardinality(models) = 0 THEN
        RAISE EXCEPTION 'evalledger: a % needs a panel of at least one model', run_kind
            USING ERRCODE = 'check_violation', COLUMN = 'models';
    END IF;
    SELECT m INTO bad FROM unnest(models) m WHERE m IS NULL OR m !~ '^[a-z]+:\S+$' LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION 'evalledger: model % is not a provider:model id', coalesce(quote_literal(bad), 'NULL')
            USING ERRCODE = 'check_violation', COLUMN = 'models';
    END IF;
    SELECT m INTO bad FROM unnest(models) m GROUP BY m HAVING count(*) > 1 LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION 'evalledger: model % is on the panel twice', bad
            USING ERRCODE = 'check_violation', COLUMN = 'models';
    END IF;
END;
$$;
