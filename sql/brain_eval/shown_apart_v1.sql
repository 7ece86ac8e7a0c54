-- shown_apart_v1: value rounded to `digits` decimals for a rationale, or to as many more as it takes
-- (up to 12) to tell it from `other` when the rounding would print them the same: a missed
-- threshold never reads as met ("2% above the 2% limit" is 2.00004%).
CREATE FUNCTION evalledger.shown_apart_v1(value numeric, other numeric, digits integer) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
    SELECT trim_scale(round(value, coalesce(
               (SELECT d FROM generate_series(digits, 12) AS d
                 WHERE round(value, d) IS DISTINCT FROM round(other, d) ORDER BY d LIMIT 1), digits)))::text;
$$;
