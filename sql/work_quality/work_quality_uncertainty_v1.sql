-- work_quality_uncertainty_v1: beside a work-quality snapshot (never changing it or its
-- comparison), each dimension with its uncertainty (uncertainty_v1's object) over the judges whose
-- verdicts the Snapshot document holds (aggregate.verdicts[].scores): the judges' mean and
-- mean_stderr_v1's standard error ('judges'; n and clusters the judges, each its own), the 95%
-- interval cut to the active work-quality rubric's scale. One work product is judged, so the
-- interval covers the judges' disagreement on it, not other runs of the bot (docs/statistics.md,
-- "work-quality"). What `snapshot show PATH` prints for a history file the ledger holds no snapshot of
-- (a stored snapshot's is cut to its own rubric's scale: work_quality_uncertainty_v2). It reads
-- no run, only the document given and the rubric's scale, so it runs as its owner (the active
-- rubric is active_rubric_v1's, which only the writing roles' functions call). The judges' scores
-- are summed in the order of their models, byte by byte (COLLATE "C"; a judge naming none after
-- them, by its score), never a plan's (docs/statistics.md, "Order of summation").
-- The one home of the computation is work_quality_uncertainty_v2, given the active rubric.
CREATE FUNCTION evalledger.work_quality_uncertainty_v1(doc jsonb) RETURNS jsonb
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
    SELECT evalledger.work_quality_uncertainty_v2(doc, evalledger.active_rubric_v1('work-quality'))
$$;
GRANT EXECUTE ON FUNCTION work_quality_uncertainty_v1(jsonb) TO evalledger_runner, evalledger_revops, evalledger_auditor;
