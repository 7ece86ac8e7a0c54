-- The statistics objects' numbers no longer depend on the caller's extra_float_digits (issue 36).
-- uncertainty_v1, paired_object_v1 and takes_quality_uncertainty_v1 turn float8 into jsonb numbers,
-- whose digits follow that session setting: any role may SET it (or pass it in PGOPTIONS), and at 0
-- or below a runner's completion stored every estimate, standard error and bound cut to fewer digits
-- (at -15, one), while an auditor's `ledger verify --recompute` under 0 named every honest stored
-- row. Each function now runs with extra_float_digits = 1, the shortest digits that read back the
-- same value (PostgreSQL's default): what calls them (the completion triggers, gate decisions, the
-- recompute, every reader) gets the same text whatever its session says.

SET LOCAL ROLE evalledger_code;
SET LOCAL search_path = evalledger, pg_temp;

ALTER FUNCTION evalledger.uncertainty_v1(double precision, double precision, double precision, bigint, text,
                                         double precision, double precision, double precision, double precision)
    SET extra_float_digits = 1;
ALTER FUNCTION evalledger.paired_object_v1(text, text[], double precision[], text[], double precision[])
    SET extra_float_digits = 1;
ALTER FUNCTION evalledger.takes_quality_uncertainty_v1(bigint) SET extra_float_digits = 1;

RESET ROLE;
