-- complete_once_v1: the only UPDATE a run accepts is its completion: completed_at set once, from
-- NULL, to a time not in the future, with every other column as it was. Every suite's run table uses it; its
-- trigger arguments are how a message names a run ('run', 'takes-quality run'), the run's key
-- column and, optionally, a text[] of the columns the database computes, a change to which is
-- refused as a value the caller may not supply.
CREATE FUNCTION evalledger.complete_once_v1() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    changed text;
BEGIN
    IF OLD.completed_at IS NOT NULL THEN
        RAISE EXCEPTION 'evalledger: % % is complete: % is append-only',
                TG_ARGV[0], to_jsonb(OLD) ->> TG_ARGV[1], TG_TABLE_NAME
            USING ERRCODE = 'insufficient_privilege';
    END IF;
    changed := evalledger.changed_columns_v1(to_jsonb(NEW), to_jsonb(OLD), ARRAY['completed_at']);
    IF changed IS NOT NULL THEN
        IF TG_NARGS > 2 AND string_to_array(changed, ', ') && TG_ARGV[2]::text[] THEN
            PERFORM evalledger.refuse_supplied_v1(TG_TABLE_NAME, jsonb_build_object(changed, true));
        END IF;
        RAISE EXCEPTION 'evalledger: % is append-only: only completed_at may be set, not %', TG_TABLE_NAME, changed
            USING ERRCODE = 'insufficient_privilege';
    END IF;
    IF NEW.completed_at IS NULL THEN
        RAISE EXCEPTION 'evalledger: completed_at is set once, to a time'
            USING ERRCODE = 'not_null_violation', COLUMN = 'completed_at';
    END IF;
    IF NEW.completed_at > clock_timestamp() THEN
        RAISE EXCEPTION 'evalledger: completed_at % is in the future', NEW.completed_at
            USING ERRCODE = 'check_violation', COLUMN = 'completed_at';
    END IF;
    RETURN NEW;
END;
$$;
