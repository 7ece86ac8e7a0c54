-- journal_json_v1: a jsonb value's canon-v1 form: object keys sorted by code point (bytewise in
-- UTF-8), no whitespace, strings escaped as JSON requires and nothing more, numbers as their exact
-- decimal text. Only ever called from the journal's definer code (search_path pinned there), so it
-- sets none itself: a SET would cost every call of this recursive function.
CREATE FUNCTION evalledger.journal_json_v1(j jsonb) RETURNS text
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
DECLARE
    out text;
BEGIN
    CASE jsonb_typeof(j)
    WHEN 'object' THEN
        SELECT '{' || coalesce(string_agg(
                   to_json(e.key)::text || ':' || CASE WHEN jsonb_typeof(e.value) IN ('object', 'array')
                                                       THEN evalledger.journal_json_v1(e.value)
                                                       ELSE e.value::text END,
                   ',' ORDER BY e.key COLLATE "C"), '') || '}'
          INTO out FROM jsonb_each(j) e;
    WHEN 'array' THEN
        SELECT '[' || coalesce(string_agg(
                   CASE WHEN jsonb_typeof(e.value) IN ('object', 'array')
                        THEN evalledger.journal_json_v1(e.value) ELSE e.value::text END,
                   ',' ORDER BY e.n), '') || ']'
          INTO out FROM jsonb_array_elements(j) WITH ORDINALITY e(value, n);
    ELSE
        out := j::text;
    END CASE;
    RETURN out;
END;
$$;
