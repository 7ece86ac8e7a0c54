-- journal_leaf_v1: a row's RFC 6962 leaf hash, SHA-256(0x00 || its canon-v1 bytes), from the
-- parts journal_parts_v1 made of it: '{' and the non-NULL parts joined by ',' and '}', in UTF-8.
-- STABLE, as convert_to and array_to_string are: declared IMMUTABLE it would never be inlined.
CREATE FUNCTION evalledger.journal_leaf_v1(parts text[]) RETURNS bytea
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT sha256('\x00'::bytea || convert_to('{' || array_to_string(parts, ',') || '}', 'UTF8'))
$$;
