-- Every CHECK written as it reads back (issue 35, item 2). A digest pins each constraint's text as
-- the server writes it (pg_get_constraintdef), and a dump and load writes it back from that text. For
-- an IN list on a varchar column the first text casts the list as a whole and the reloaded one each
-- value, so the same constraint read as changed on a loaded copy, and `verify --digest` of a
-- restored dump named three constraints nobody touched. Each is swapped, under its name, for the
-- same rule spelt with text values, whose text reads back as itself. What each allows is unchanged.

SET LOCAL ROLE evalledger_code;
SET LOCAL search_path = evalledger, pg_temp;

-- The checks are swapped under their names, which the drop guard refuses but for its owner, the
-- superuser who installed it: off here, inside the migration's transaction, and on again below.
RESET ROLE;
DO $drop_guard_off$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_event_trigger WHERE evtname = 'evalledger_drop_guard_v1') THEN
        ALTER EVENT TRIGGER evalledger_drop_guard_v1 DISABLE;
    END IF;
END
$drop_guard_off$;
SET LOCAL ROLE evalledger_code;

ALTER TABLE brain_analysis_log
    DROP CONSTRAINT brain_analysis_log_origin_known,
    ADD CONSTRAINT brain_analysis_log_origin_known CHECK (origin::text IN ('production', 'eval'));

ALTER TABLE brain_eval_catalog_question
    DROP CONSTRAINT brain_eval_catalog_question_type_known,
    ADD CONSTRAINT brain_eval_catalog_question_type_known CHECK (question_type::text IN (
        'plan_diagnosis', 'coverage_gap', 'play_retrospective', 'forecast_bias', 'churn_diagnosis',
        'expansion_qualification', 'handoff_briefing', 'qbr_narrative'));

ALTER TABLE brain_eval_question_score
    DROP CONSTRAINT brain_eval_question_score_question_type_known,
    ADD CONSTRAINT brain_eval_question_score_question_type_known CHECK (question_type::text IN (
        'plan_diagnosis', 'coverage_gap', 'play_retrospective', 'forecast_bias', 'churn_diagnosis',
        'expansion_qualification', 'handoff_briefing', 'qbr_narrative'));

RESET ROLE;
DO $drop_guard_on$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_event_trigger WHERE evtname = 'evalledger_drop_guard_v1') THEN
        ALTER EVENT TRIGGER evalledger_drop_guard_v1 ENABLE ALWAYS;
    END IF;
END
$drop_guard_on$;
SET LOCAL ROLE evalledger_code;
