-- journal_refuse_v1: a value canon-v1 has no form for (a non-finite number, a timestamp outside
-- years 1-9999) stops the write that carries it, so nothing enters the ledger that its journal
-- could not hash. Returns text only so that it fits where a value's canonical form is expected.
CREATE FUNCTION evalledger.journal_refuse_v1(what text, value text) RETURNS text
LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
    RAISE EXCEPTION 'evalledger: canon-v1 has no form for the % %', what, value
        USING ERRCODE = 'data_exception',
              HINT = 'numbers are finite and timestamps and dates lie in years 1 to 9999 (docs/ledger.md, canon-v1)';
END;
$$;
