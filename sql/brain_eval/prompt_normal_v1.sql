-- prompt_normal_v1: a system prompt as one identity however it is spelt (issue 37, item 1): zero-width
-- characters and byte-order marks removed (U+200B-U+200D, U+2060, U+FEFF), line ends as LF (CRLF and a
-- lone CR), every Unicode space separator as a space (U+00A0, U+1680, U+2000-U+200A, U+202F, U+205F,
-- U+3000), each line's trailing spaces and tabs removed, then Unicode NFC. What it cannot make one is
-- written in docs/guards.md (section 29): a paraphrase, homoglyphs, a space added inside a line.
-- IMMUTABLE: the ledger's database is UTF-8, and every step is a fixed mapping of characters.
CREATE FUNCTION evalledger.prompt_normal_v1(prompt text) RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE SET search_path = pg_catalog, pg_temp AS $$
    SELECT normalize(
        regexp_replace(
            regexp_replace(
                regexp_replace(
                    regexp_replace(prompt, E'[\u200B\u200C\u200D\u2060\uFEFF]', '', 'g'),
                    E'\r\n?', E'\n', 'g'),
                E'[\u00A0\u1680\u2000-\u200A\u202F\u205F\u3000]', ' ', 'g'),
            E'[ \t]+$', '', 'gn'),
        NFC)
$$;

-- The owner role registers brain versions, whose index computes it; the runner captures queries,
-- whose index computes it too (eval_candidates_prompt_idx); RevOps and auditors read production
-- beside eval, which matches a question to production's queries by it.
GRANT EXECUTE ON FUNCTION prompt_normal_v1(text) TO evalledger_owner, evalledger_runner, evalledger_revops, evalledger_auditor;
