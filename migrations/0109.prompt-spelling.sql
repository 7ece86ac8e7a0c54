-- Issue 37, item 1: one identity per prompt text. AGT-902's prompt with a trailing space, CRLF line
-- ends, a zero-width space or a no-break space was registered as AGT-901's, and AGT-902's tuner was
-- then admitted as the reviewer of its runs: independence compared exact hashes. The database holds
-- every registered prompt's text (brain_version.system_prompt) and hashes it; it now also computes
-- its normal form (prompt_normal_v1: zero-width characters and BOMs removed, LF line ends, Unicode
-- spaces as a space, trailing whitespace per line removed, NFC) and refuses a version whose normal
-- form is another brain's prompt spelt differently, naming both brains. The exact hash stays the
-- key runs and analyses carry; across brains there is now one spelling per normal form, so every
-- rule reading the registry by it (independence, levers, holds) compares the normal form. Versions
-- registered before are not re-checked (the registry is append-only). The owner role, which
-- registers versions, may run the two functions (the index on the normal form computes them).

SET LOCAL ROLE evalledger_code;
SET LOCAL search_path = evalledger, pg_temp;

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

-- The owner role registers brain versions, whose index computes it.
GRANT EXECUTE ON FUNCTION prompt_normal_v1(text) TO evalledger_owner;

-- prompt_normal_hash_v1: the SHA-256 (hex) of a system prompt's normal form (prompt_normal_v1), the
-- identity brain versions are compared by; the exact hash (brain_version.system_prompt_hash) stays
-- recorded beside it, as the runs and analyses carry it.
CREATE FUNCTION evalledger.prompt_normal_hash_v1(prompt text) RETURNS varchar
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE SET search_path = pg_catalog, pg_temp AS $$
    SELECT encode(sha256(convert_to(evalledger.prompt_normal_v1(prompt), 'UTF8')), 'hex')::varchar
$$;

-- The owner role registers brain versions, whose index computes it.
GRANT EXECUTE ON FUNCTION prompt_normal_hash_v1(text) TO evalledger_owner;

-- A new version's prompt is looked up by its normal form among every brain's (brain_version_admit_v2).
CREATE INDEX brain_version_prompt_normal_idx ON brain_version (evalledger.prompt_normal_hash_v1(system_prompt));

-- brain_version_admit_v2: a brain under test's configuration is a new version of its target: the
-- database numbers it, hashes its system prompt (SHA-256 of the UTF-8 text) and orders its levers;
-- the caller supplies none of these. The brain then owns the prompt (brain_prompt_claim_v1), which a
-- brain may not take on while a run of that prompt under another brain is open. A prompt is one
-- identity however it is spelt (issue 37, item 1): a text whose normal form (prompt_normal_v1) is
-- another brain's prompt spelt differently is refused, naming both brains, so every rule that reads
-- the registry by the exact hash (independence, levers, holds) reads one spelling per normal form
-- across brains. The same text registered by two brains stays one prompt both own, as before. An
-- advisory lock on the normal form makes two brains registering two spellings at once wait for
-- each other, and the second, under READ COMMITTED, sees the first.
CREATE OR REPLACE FUNCTION evalledger.brain_version_admit_v2() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    normal varchar;
    other varchar;
BEGIN
    PERFORM evalledger.refuse_supplied_v1('brain_version', jsonb_build_object(
        'version', NEW.version, 'system_prompt_hash', NEW.system_prompt_hash));
    -- Locking the target serialises two versions of one brain added at once.
    PERFORM 1 FROM evalledger.target t WHERE t.target_id = NEW.target_id AND t.kind = 'brain' FOR UPDATE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'evalledger: % is not a registered brain', NEW.target_id
            USING ERRCODE = 'foreign_key_violation', COLUMN = 'target_id',
                  CONSTRAINT = 'brain_version_target_fkey';
    END IF;
    NEW.version := coalesce((SELECT max(v.version) FROM evalledger.brain_version v
                              WHERE v.target_id = NEW.target_id), 0) + 1;
    NEW.system_prompt_hash := encode(sha256(convert_to(NEW.system_prompt, 'UTF8')), 'hex');
    normal := evalledger.prompt_normal_hash_v1(NEW.system_prompt);
    PERFORM evalledger.require_read_committed_v2('a brain version''s registration (one prompt per spelling)');
    PERFORM pg_catalog.pg_advisory_xact_lock(pg_catalog.hashtext('evalledger.prompt_normal'),
                                             pg_catalog.hashtext(normal));
    SELECT v.target_id INTO other FROM evalledger.brain_version v
     WHERE evalledger.prompt_normal_hash_v1(v.system_prompt) = normal
       AND v.target_id <> NEW.target_id AND v.system_prompt_hash <> NEW.system_prompt_hash
     ORDER BY v.target_id LIMIT 1;
    IF other IS NOT NULL THEN
        RAISE EXCEPTION 'evalledger: %''s system prompt is %''s spelt differently (the same once normalised)',
                NEW.target_id, other
            USING ERRCODE = 'check_violation', COLUMN = 'system_prompt',
                  CONSTRAINT = 'brain_version_one_spelling_per_prompt',
                  HINT = format('register %s''s exact text to share the prompt, or a prompt of its own', other);
    END IF;
    NEW.levers := ARRAY(SELECT DISTINCT l FROM unnest(NEW.levers) AS l ORDER BY l);
    PERFORM evalledger.brain_prompt_claim_v1(NEW.target_id, NEW.system_prompt_hash, 'version');
    NEW.created_at := now();
    RETURN NEW;
END;
$$;

