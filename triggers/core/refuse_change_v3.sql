-- refuse_change_v3: the append-only guard. A DELETE passes only inside the retention purge
-- (retention_purge_v2, its transaction's marker) and only for a row that retention_due_v2 finds
-- past the purge horizon (in UTC, on the statement's clock) and under no legal hold of its run, its
-- brains (label and prompt) or its tier clock; every UPDATE it guards, and every TRUNCATE, is
-- refused, whoever asks (the owner role and a superuser included).
CREATE FUNCTION evalledger.refuse_change_v3() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        IF evalledger.retention_purging_v1() AND evalledger.retention_due_v2(TG_TABLE_NAME, to_jsonb(OLD)) THEN
            RETURN OLD;
        END IF;
        RAISE EXCEPTION 'evalledger: % is append-only: DELETE refused', TG_TABLE_NAME
            USING ERRCODE = 'insufficient_privilege',
                  HINT = format('rows leave only through the retention purge (evalledger retention apply), '
                                'after %s, and never under a legal hold', evalledger.purge_horizon_v1());
    END IF;
    RAISE EXCEPTION 'evalledger: % is append-only: % refused', TG_TABLE_NAME, TG_OP
        USING ERRCODE = 'insufficient_privilege';
END;
$$;

-- Append-only: every UPDATE a table does not explicitly allow (a run's or snapshot's completion),
-- every DELETE but the retention purge's (refuse_change_v3: inside retention_purge_v2, past the
-- horizon in UTC, under no hold, a brain's hold by the prompt), and every TRUNCATE are refused, for
-- every role. The journal's own tables and the run claims are never due (retention_due_v2 knows no
-- clock of theirs), so every change of theirs is refused. Row triggers are cloned
-- onto partitions; TRUNCATE triggers are not, so capture_ensure_partitions_v2 gives each capture
-- partition its own (capture_refuse_change_v1: capture rows leave with their partition).
CALL guard_append_only_v1(ARRAY[
    'target:UPDATE OR DELETE:refuse_change_v3',
    'rubric:UPDATE OR DELETE:refuse_change_v3',
    'rubric_activation:UPDATE OR DELETE:refuse_change_v3',
    'reviewer:UPDATE OR DELETE:refuse_change_v3',
    'prompt_tuner:UPDATE OR DELETE:refuse_change_v3',
    'brain_analysis_log:UPDATE OR DELETE:refuse_change_v3',
    'brain_eval_log:DELETE:refuse_change_v3',
    'brain_eval_question_score:DELETE:refuse_change_v3',
    'legal_hold:UPDATE OR DELETE:refuse_change_v3',
    'brain_eval_review_entry:UPDATE OR DELETE:refuse_change_v3',
    'brain_eval_run_review:UPDATE OR DELETE:refuse_change_v3',
    'brain_eval_import:UPDATE OR DELETE:refuse_change_v3',
    'brain_eval_suggestion_shown:UPDATE OR DELETE:refuse_change_v3',
    'legal_hold_release:UPDATE OR DELETE:refuse_change_v3',
    'take:UPDATE OR DELETE:refuse_change_v3',
    'eval_takes_quality_runs:DELETE:refuse_change_v3',
    'eval_takes_quality_judge_verdicts:UPDATE OR DELETE:refuse_change_v3',
    'eval_candidate_keys:UPDATE OR DELETE:refuse_change_v3',
    'eval_capture_failures:UPDATE OR DELETE:refuse_change_v3',
    'brain_eval_catalog:UPDATE OR DELETE:refuse_change_v3',
    'brain_eval_catalog_question:UPDATE OR DELETE:refuse_change_v3',
    'brain_eval_catalog_provenance:UPDATE OR DELETE:refuse_change_v3',
    'brain_version:UPDATE OR DELETE:refuse_change_v3',
    'brain_eval_harness_run:UPDATE OR DELETE:refuse_change_v3',
    'brain_eval_harness_answer:UPDATE OR DELETE:refuse_change_v3',
    'brain_eval_judge_suggestion:UPDATE OR DELETE:refuse_change_v3',
    'eval_work_quality_snapshots:DELETE:refuse_change_v3',
    'eval_work_quality_judge_verdicts:UPDATE OR DELETE:refuse_change_v3',
    'retention_purge_log:UPDATE OR DELETE:refuse_change_v3',
    'brain_prompt:UPDATE OR DELETE:refuse_change_v3',
    'ledger_identity:UPDATE OR DELETE:refuse_change_v3',
    'ledger_journal:UPDATE OR DELETE:refuse_change_v3',
    'ledger_block:UPDATE OR DELETE:refuse_change_v3',
    'ledger_digest:UPDATE OR DELETE:refuse_change_v3',
    'run_claim:UPDATE OR DELETE:refuse_change_v3',
    'replay_run:DELETE:refuse_change_v3',
    'replay_query:UPDATE OR DELETE:refuse_change_v3',
    'eval_gate_decision:UPDATE OR DELETE:refuse_change_v3']);
