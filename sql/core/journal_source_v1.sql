-- journal_source_v1: the SQL of a table's two canon-v1 functions, generated from its columns.
-- parts: one element per column, in code-point order of the column names, each '"name":' and the
-- value's canonical form, NULL for a NULL value (canon-v1 leaves NULL columns out, so a column
-- added later leaves older rows' hashes as they were). key: the primary key's columns as one
-- canonical JSON object. fingerprints: hashtext of each part, by position (journal_row_v1 stores
-- them so that verify can name the columns that changed). A jsonb value is written as jsonb writes itself (jsonb_out: keys shorter
-- first, then bytewise; ", " and ": " between items): that is a canonical form already, stable since
-- jsonb exists, and costs nothing to make, where re-sorting every document's keys in PL/pgSQL cost
-- every row with a document a tenth of its write. A column of a type canon-v1 has no form for is
-- refused here, at migration time, rather than hashed in some form nobody wrote down.
CREATE FUNCTION evalledger.journal_source_v1(rel regclass, OUT parts text, OUT key text, OUT fingerprints text)
LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    col record;
    part text;
    all_parts text[] := '{}';
    key_parts text[] := '{}';
BEGIN
    FOR col IN
        SELECT a.attname::text AS name, format('r.%I', a.attname) AS ref, t.typname::text AS typ, t.typtype,
               e.typname::text AS elem,
               coalesce(a.attnum = ANY (i.indkey), false) AS in_key
          FROM pg_attribute a
          JOIN pg_type t ON t.oid = a.atttypid
          LEFT JOIN pg_type e ON e.oid = t.typelem AND t.typcategory = 'A'
          LEFT JOIN pg_index i ON i.indrelid = a.attrelid AND i.indisprimary
         WHERE a.attrelid = rel AND a.attnum > 0 AND NOT a.attisdropped
         ORDER BY a.attname COLLATE "C"
    LOOP
        part := CASE
            WHEN col.typ = 'bool' THEN format('CASE WHEN %1$s THEN ''true'' WHEN NOT %1$s THEN ''false'' END', col.ref)
            WHEN col.typ IN ('int2', 'int4', 'int8') THEN format('%s::text', col.ref)
            WHEN col.typ = 'numeric' THEN format('evalledger.journal_number_v1(%s)', col.ref)
            WHEN col.typ = 'float8' THEN format('evalledger.journal_float_v1(%s)', col.ref)
            WHEN col.typ IN ('text', 'varchar', 'bpchar', 'name') OR col.typtype = 'e'
                THEN format('to_json(%s)::text', col.ref)
            WHEN col.typ = 'uuid' THEN format('''"'' || %s::text || ''"''', col.ref)
            WHEN col.typ = 'timestamptz' THEN format('evalledger.journal_timestamp_v1(%s)', col.ref)
            WHEN col.typ = 'date' THEN format('evalledger.journal_date_v1(%s)', col.ref)
            WHEN col.typ = 'jsonb' THEN format('%s::text', col.ref)
            WHEN col.elem IN ('text', 'varchar', 'bpchar', 'name', 'int2', 'int4', 'int8', 'bool')
                THEN format('array_to_json(%s)::text', col.ref)
        END;
        IF part IS NULL THEN
            RAISE EXCEPTION 'evalledger: canon-v1 has no form for column %.% of type %', rel, col.name,
                    format_type((SELECT a.atttypid FROM pg_attribute a WHERE a.attrelid = rel AND a.attname = col.name), NULL)
                USING ERRCODE = 'feature_not_supported',
                      HINT = 'use a type docs/ledger.md gives a canonical form, or define the next canon version';
        END IF;
        part := format('%L || %s', to_json(col.name)::text || ':', part);
        all_parts := all_parts || part;
        IF col.in_key THEN
            key_parts := key_parts || part;
        END IF;
    END LOOP;
    IF cardinality(key_parts) = 0 THEN
        RAISE EXCEPTION 'evalledger: % has no primary key: its journal entries would name no row', rel
            USING ERRCODE = 'feature_not_supported';
    END IF;
    parts := format('SELECT ARRAY[%s]', array_to_string(all_parts, ', '));
    -- One hashtext per part, NULL for a NULL column, by position: an array the planner builds without
    -- a subquery (the trigger's cheapest way to fingerprint each column).
    fingerprints := format('SELECT ARRAY[%s]', (SELECT string_agg(format('hashtext(parts[%s])', n), ', ' ORDER BY n)
                                                  FROM generate_series(1, cardinality(all_parts)) n));
    key := format('SELECT ''{'' || %s || ''}''', array_to_string(key_parts, ' || '','' || '));
END;
$$;
