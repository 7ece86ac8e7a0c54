-- ledger_merkle_root_v1: RFC 6962's Merkle tree hash of leaf hashes given in order: pairs of
-- adjacent nodes hashed as SHA-256(0x01 || left || right), an odd node at the end of a level
-- carried up unchanged, until one is left. That is RFC 6962's split at the largest power of two
-- below n, computed level by level; the empty tree is SHA-256 of nothing.
CREATE FUNCTION evalledger.ledger_merkle_root_v1(leaves bytea[]) RETURNS bytea
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    level bytea[] := leaves;
BEGIN
    IF coalesce(cardinality(level), 0) = 0 THEN
        RETURN sha256(''::bytea);
    END IF;
    WHILE cardinality(level) > 1 LOOP
        level := ARRAY(SELECT CASE WHEN cardinality(p.pair) = 2 THEN sha256('\x01'::bytea || p.pair[1] || p.pair[2])
                                   ELSE p.pair[1] END
                         FROM (SELECT (u.n + 1) / 2 AS g, array_agg(u.h ORDER BY u.n) AS pair
                                 FROM unnest(level) WITH ORDINALITY u(h, n) GROUP BY 1) p
                        ORDER BY p.g);
    END LOOP;
    RETURN level[1];
END;
$$;
