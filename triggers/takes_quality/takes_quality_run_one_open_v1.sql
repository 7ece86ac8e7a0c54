-- takes_quality_run_one_open_v1: one open takes-quality run of a subject at a time (issue 37, item
-- 2): the same brain (target_id, none counting as one), the same judges' prompt (prompt_sha8), the
-- same sample's scope (scope_sha8: source, path, slug prefix) and the same judges (live or the
-- recorded replies, which never occupy a live run's place). Another seed, panel or rubric is no new
-- subject: starting one until a sample looks good is what this refuses. Before a run is
-- recorded, the brain's open runs past their deadline (brain_eval_run_deadline_v1) are closed as
-- abandoned (eval_run_close_v1; the decision trigger records why), so nothing has to run on a
-- schedule; until then readers see them abandoned (takes_quality_run_state_v1). Then a run of the
-- same subject still open is named in the refusal, unless it is this very eval (its identity:
-- the runner's INSERT ... ON CONFLICT DO NOTHING then resumes it, as before).
-- eval_takes_quality_runs_one_open_idx holds the rule against racing sessions, which this trigger
-- cannot see.
CREATE FUNCTION evalledger.takes_quality_run_one_open_v1() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    overdue bigint;
    open_run evalledger.eval_takes_quality_runs;
BEGIN
    FOR overdue IN SELECT r.id FROM evalledger.eval_takes_quality_runs r
                    WHERE r.target_id IS NOT DISTINCT FROM NEW.target_id AND r.completed_at IS NULL
                      AND evalledger.brain_eval_run_deadline_v1(r.created_at, r.rubric_id) <= now()
                    ORDER BY r.created_at, r.id LOOP
        PERFORM evalledger.eval_run_close_v1('takes-quality', overdue, NULL);
    END LOOP;
    SELECT r.* INTO open_run FROM evalledger.eval_takes_quality_runs r
     WHERE coalesce(r.target_id, '') = coalesce(NEW.target_id, '') AND r.prompt_sha8 = NEW.prompt_sha8
       AND r.scope_sha8 = NEW.scope_sha8 AND r.judges = NEW.judges AND r.completed_at IS NULL;
    IF FOUND AND (open_run.corpus_sha8, open_run.models_sha8, open_run.rubric_sha8, open_run.rerun)
                 IS DISTINCT FROM (NEW.corpus_sha8, NEW.models_sha8, NEW.rubric_sha8, NEW.rerun) THEN
        RAISE EXCEPTION 'evalledger: takes-quality run % of %, this prompt, sample scope and % judges, is open (recorded % UTC): complete or cancel it first',
                open_run.id, coalesce(open_run.target_id, 'no target'), open_run.judges,
                to_char(open_run.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS')
            USING ERRCODE = 'unique_violation', CONSTRAINT = 'eval_takes_quality_runs_one_open_idx',
                  HINT = format('evalledger takes-quality cancel %s --reason "..."', open_run.id);
    END IF;
    RETURN NEW;
END;
$$;

CREATE TRIGGER eval_takes_quality_runs_17_one_open BEFORE INSERT ON eval_takes_quality_runs
    FOR EACH ROW EXECUTE FUNCTION takes_quality_run_one_open_v1();
