-- cohen_kappa_v1: Cohen's kappa of two raters over three ordered categories 0, 1, 2, from the 3x3
-- table of how often rater A (a judge) put an item in category i while rater B (the reviewer) put
-- it in j: cells[3*i + j + 1] (row-major, A's category first). kappa = (po - pe) / (1 - pe), po
-- the share of items both put in the same category, pe the share expected by chance from each
-- rater's own shares (sum over k of A's share of k times B's share of k). NULL with no items, and
-- when pe = 1 (both raters put every item in one same category: kappa is undefined there, and po
-- says they agree). Exact numeric arithmetic, rounded to 4 places at the end.
CREATE FUNCTION evalledger.cohen_kappa_v1(cells bigint[]) RETURNS numeric
LANGUAGE sql IMMUTABLE PARALLEL SAFE SET search_path = pg_catalog, pg_temp AS $$
    WITH c AS (SELECT i, j, coalesce(cells[3 * i + j + 1], 0)::numeric AS n
                 FROM generate_series(0, 2) i CROSS JOIN generate_series(0, 2) j),
         t AS (SELECT sum(n) AS total, sum(n) FILTER (WHERE i = j) AS same FROM c),
         a AS (SELECT i AS k, sum(n) AS n FROM c GROUP BY i),
         b AS (SELECT j AS k, sum(n) AS n FROM c GROUP BY j),
         p AS (SELECT t.same / t.total AS po, (SELECT sum(a.n * b.n) FROM a JOIN b USING (k)) / (t.total * t.total) AS pe
                 FROM t WHERE t.total > 0)
    SELECT round((p.po - p.pe) / (1 - p.pe), 4) FROM p WHERE p.pe < 1
$$;
GRANT EXECUTE ON FUNCTION cohen_kappa_v1(bigint[]) TO evalledger_revops, evalledger_auditor;
