-- brain-eval's named queries. Each starts with a "-- name: <name>" line and a comment that says
-- what it does (loaded by core/queries.py).

-- name: insert_analysis
-- Record what a brain produced for one question.
INSERT INTO evalledger.brain_analysis_log
    (brain, origin, model_id, system_prompt_hash, question_id, question, output, sources_read, claims,
     proposed_actions, input_tokens, output_tokens, token_cost_usd, produced_at)
VALUES (%(brain)s, %(origin)s, %(model_id)s, %(system_prompt_hash)s, %(question_id)s, %(question)s, %(output)s,
        %(sources_read)s, %(claims)s, %(proposed_actions)s, %(input_tokens)s, %(output_tokens)s,
        %(token_cost_usd)s, coalesce(%(produced_at)s, now()))
RETURNING analysis_id;

-- name: insert_analysis_billed
-- Record what a brain produced for one question, with its usage in every token class and the price it is
-- billed at: the database computes its cost (call_cost_v1). Without them, insert_analysis.
INSERT INTO evalledger.brain_analysis_log
    (brain, origin, model_id, system_prompt_hash, question_id, question, output, sources_read, claims,
     proposed_actions, input_tokens, output_tokens, token_cost_usd, produced_at,
     cached_input_tokens, cache_write_tokens, price_input, price_cached_input,
     price_cache_write, price_output, price_as_of)
VALUES (%(brain)s, %(origin)s, %(model_id)s, %(system_prompt_hash)s, %(question_id)s, %(question)s, %(output)s,
        %(sources_read)s, %(claims)s, %(proposed_actions)s, %(input_tokens)s, %(output_tokens)s,
        %(token_cost_usd)s, coalesce(%(produced_at)s, now()),
        %(cached_input_tokens)s, %(cache_write_tokens)s, %(price_input)s, %(price_cached_input)s,
        %(price_cache_write)s, %(price_output)s, %(price_as_of)s)
RETURNING analysis_id;

-- name: insert_run
-- Start a brain-eval run; the database verifies reviewer independence and picks the rubric.
INSERT INTO evalledger.brain_eval_log
    (eval_run_id, run_trigger, brain_under_test, model_id, system_prompt_hash,
     system_prompt_version_label, brain_view_contracts_hash, question_catalog_version,
     question_count, started_at, reviewer_user_id, calibration_notes, reviewer_hours_spent, rubric_id, import_id)
VALUES (coalesce(%(eval_run_id)s, gen_random_uuid()), %(run_trigger)s, %(brain_under_test)s, %(model_id)s,
        %(system_prompt_hash)s, %(system_prompt_version_label)s, %(brain_view_contracts_hash)s,
        %(question_catalog_version)s, %(question_count)s, coalesce(%(started_at)s, now()),
        %(reviewer_user_id)s, %(calibration_notes)s, %(reviewer_hours_spent)s, %(rubric_id)s, %(import_id)s)
RETURNING eval_run_id;

-- name: insert_question_score
-- Score one question of a run in progress; question_passed is the database's.
INSERT INTO evalledger.brain_eval_question_score
    (eval_run_id, question_id, brain_analysis_id, question_type, uses_stale_fixture, citation_rate,
     hallucinations_detected, total_claims, staleness_correctly_recognized, diagnosis_accuracy_score,
     lever_mapping_violations, confidence_distribution, narrative_coherence_rating, reviewer_comments)
VALUES (%(eval_run_id)s, %(question_id)s, %(brain_analysis_id)s, %(question_type)s,
        %(uses_stale_fixture)s, %(citation_rate)s, %(hallucinations_detected)s, %(total_claims)s,
        %(staleness_correctly_recognized)s, %(diagnosis_accuracy_score)s, %(lever_mapping_violations)s,
        %(confidence_distribution)s, %(narrative_coherence_rating)s, %(reviewer_comments)s)
RETURNING question_score_id, question_passed;

-- name: complete_run
-- Complete a run at the database's clock: the decision trigger computes aggregates, criteria, decision and rationale. Whether an open run this role may read was completed.
SELECT evalledger.brain_eval_complete_v1(%(eval_run_id)s, NULL) AS completed;

-- name: cancel_run
-- Cancel an open run with a reason: recorded, and decided fail ("Abandoned: cancelled by ..."). Whether an open run this role may read was cancelled.
SELECT evalledger.brain_eval_cancel_v1(%(eval_run_id)s, %(reason)s) AS cancelled;

-- name: open_run_of
-- The run of a brain, prompt and catalog that is open (within its deadline; brain_eval_run_state_v1) other than the given one, if any.
SELECT eval_run_id FROM evalledger.brain_eval_run_state_v1
 WHERE brain_under_test = %(brain)s AND system_prompt_hash = %(prompt)s AND question_catalog_version = %(catalog)s
   AND state = 'open' AND eval_run_id <> %(eval_run_id)s;

-- name: run_decision
-- What the database decided for a run.
SELECT eval_run_id, brain_under_test, question_count, completed_at, aggregated_scores,
       hard_criteria_passed, soft_criteria_passed_count, decision::text AS decision,
       decision_rationale, token_cost_usd, reviewer_independence_verified
  FROM evalledger.brain_eval_log WHERE eval_run_id = %(eval_run_id)s;

-- name: run_decision_uncertainty
-- What the database decided for a run, and beside it each aggregate's uncertainty as the run's completion stored it (brain_eval_run_uncertainty: brain_eval_uncertainty_v1 of its question rows, computed once, never again at a read); null for an open run, which has no decision yet.
SELECT l.eval_run_id, l.brain_under_test, l.question_count, l.completed_at, l.aggregated_scores,
       l.hard_criteria_passed, l.soft_criteria_passed_count, l.decision::text AS decision,
       l.decision_rationale, l.token_cost_usd, l.reviewer_independence_verified,
       nullif(u.uncertainty, '{}'::jsonb) AS uncertainty
  FROM evalledger.brain_eval_log l
  LEFT JOIN evalledger.brain_eval_run_uncertainty u ON u.eval_run_id = l.eval_run_id AND l.completed_at IS NOT NULL
 WHERE l.eval_run_id = %(eval_run_id)s;

-- name: add_reviewer
-- Register a human reviewer: a database role and the reviewer_user_id runs will carry.
WITH added AS (
    INSERT INTO evalledger.reviewer (reviewer_user_id, role_name, display_name)
    VALUES (coalesce(%(reviewer_user_id)s, gen_random_uuid()), %(role_name)s, %(display_name)s)
    ON CONFLICT (role_name) DO NOTHING
    RETURNING reviewer_user_id)
SELECT reviewer_user_id FROM added
UNION ALL
SELECT reviewer_user_id FROM evalledger.reviewer WHERE role_name = %(role_name)s;

-- name: add_prompt_tuner
-- Register a prompt tuner of a brain (the independence check reads this registry).
INSERT INTO evalledger.prompt_tuner (target_id, user_id) VALUES (%(target_id)s, %(user_id)s);

-- name: run_exists
-- Whether a run with this id was recorded.
SELECT 1 FROM evalledger.brain_eval_log WHERE eval_run_id = %(eval_run_id)s;

-- name: reviewer_id
-- The reviewer_user_id registered for a reviewer's role name.
SELECT reviewer_user_id FROM evalledger.reviewer WHERE role_name = %(role_name)s;

-- name: score_question
-- A reviewer scores some of a question's reviewer fields; store.score_question composes the SET list from the fields given. Returns what the question still needs, never whether it passes: a reviewer reads no verdict before its run completes.
WITH scored AS (
    UPDATE evalledger.brain_eval_question_score SET {}
     WHERE eval_run_id = %(run)s AND question_id = %(question)s
    RETURNING eval_run_id, question_type, uses_stale_fixture, hallucinations_detected, total_claims,
              staleness_correctly_recognized, diagnosis_accuracy_score, narrative_coherence_rating,
              lever_mapping_violations)
SELECT evalledger.question_fields_needed_v1(q.question_type, q.uses_stale_fixture, q.hallucinations_detected, q.total_claims,
           q.staleness_correctly_recognized, q.diagnosis_accuracy_score, q.narrative_coherence_rating, q.lever_mapping_violations,
           r.definition, evalledger.run_brains_v1(l.brain_under_test, l.system_prompt_hash)) AS needs
  FROM scored q
  JOIN evalledger.brain_eval_log l USING (eval_run_id)
  JOIN evalledger.rubric r USING (rubric_id);

-- name: insert_import
-- An audited import of historical runs; the database stamps who, when and the transaction.
INSERT INTO evalledger.brain_eval_import (reason, source_file) VALUES (%(reason)s, %(source_file)s)
RETURNING import_id;

-- name: sign_off_run
-- The reviewer's sign-off of an open run of theirs: hours spent and calibration notes per dimension. No row back when the run's latest sign-off says the same already (none is stored).
INSERT INTO evalledger.brain_eval_run_review (eval_run_id, reviewer_hours_spent, calibration_notes)
VALUES (%(eval_run_id)s, %(reviewer_hours_spent)s, %(calibration_notes)s)
RETURNING review_id;

-- name: reviewer_role_of
-- The login role a registered reviewer acts as.
SELECT role_name FROM evalledger.reviewer WHERE reviewer_user_id = %(reviewer_user_id)s;

-- name: review_trail
-- Who entered each reviewer value of a run's questions, oldest first.
SELECT question_id, field, value, acting_role, entered_by, entered_at
  FROM evalledger.brain_eval_review_entry
 WHERE eval_run_id = %(eval_run_id)s
 ORDER BY entered_at, entry_id;

-- name: load_catalog
-- Load a question catalog whole; the database reads its version and questions from the document. Nothing when that version is loaded already.
INSERT INTO evalledger.brain_eval_catalog (document, source_file) VALUES (%(document)s, %(source_file)s)
ON CONFLICT ON CONSTRAINT brain_eval_catalog_pkey DO NOTHING
RETURNING catalog_version, question_count, document_sha256;

-- name: catalog_loaded
-- A loaded catalog version, and whether its document is the one given.
SELECT catalog_version, question_count, document_sha256, document = %(document)s AS same
  FROM evalledger.brain_eval_catalog WHERE catalog_version = %(catalog_version)s;

-- name: list_catalogs
-- Every loaded catalog version, oldest first, with its question and stale-fixture counts.
SELECT c.catalog_version, c.question_count, count(*) FILTER (WHERE q.uses_stale_fixture) AS stale_count,
       count(DISTINCT q.question_type) AS type_count, c.document_sha256, c.source_file, c.loaded_at
  FROM evalledger.brain_eval_catalog c
  JOIN evalledger.brain_eval_catalog_question q USING (catalog_version)
 GROUP BY c.catalog_version
 ORDER BY c.loaded_at, c.catalog_version;

-- name: catalog_questions
-- The questions of one catalog version, in catalog order.
SELECT position, question_id, question_type, uses_stale_fixture, question_text, sources, pass_criteria
  FROM evalledger.brain_eval_catalog_question
 WHERE catalog_version = %(catalog_version)s
 ORDER BY position;

-- name: catalog_document
-- The stored document of one catalog version.
SELECT document FROM evalledger.brain_eval_catalog WHERE catalog_version = %(catalog_version)s;

-- name: add_brain_version
-- Register a version of a brain under test; the database numbers it and hashes its prompt. Nothing when this configuration is registered already.
INSERT INTO evalledger.brain_version (target_id, provider, model_id, system_prompt, version_label, levers)
VALUES (%(target_id)s, %(provider)s, %(model_id)s, %(system_prompt)s, %(version_label)s, %(levers)s)
ON CONFLICT ON CONSTRAINT brain_version_config_key DO NOTHING
RETURNING target_id, version, provider, model_id, system_prompt_hash, version_label, levers, system_prompt, created_at;

-- name: same_brain_version
-- The version registered before with this model, prompt and lever set (levers compared as a set).
SELECT target_id, version, provider, model_id, system_prompt_hash, version_label, levers, system_prompt, created_at
  FROM evalledger.brain_version
 WHERE target_id = %(target_id)s AND provider = %(provider)s AND model_id = %(model_id)s
   AND system_prompt = %(system_prompt)s
   AND levers = ARRAY(SELECT DISTINCT l FROM unnest(%(levers)s::text[]) AS l ORDER BY l);

-- name: brain_versions
-- Registered brain versions, of one brain or of all, oldest first.
SELECT target_id, version, provider, model_id, system_prompt_hash, version_label, levers, system_prompt, created_at
  FROM evalledger.brain_version
 WHERE %(target_id)s::text IS NULL OR target_id = %(target_id)s
 ORDER BY target_id, version;

-- name: contract_search_path
-- For the rest of the transaction, names in the contract's schema print unqualified and every other schema's qualified.
SELECT set_config('search_path', format('%%I, pg_catalog', %(schema)s::text), true);

-- name: contract_views
-- The views of one schema with their definitions as this server prints them, by name.
SELECT c.relname::text, pg_get_viewdef(c.oid)
  FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
 WHERE n.nspname = %(schema)s AND c.relkind = 'v'
 ORDER BY c.relname;

-- name: brain_version_id
-- The row id of one registered brain version.
SELECT brain_version_id FROM evalledger.brain_version WHERE target_id = %(target_id)s AND version = %(version)s;

-- name: open_harness_run
-- The latest open harness run started by an identical command (same brain version, catalog, questions, contracts, reviewer, trigger, live or recorded answers, and the same repeats K: a run of another K is another eval, never resumed): the one to resume. repeats is read through to_jsonb, so a ledger from before repeats reads as 1.
SELECT h.eval_run_id
  FROM evalledger.brain_eval_harness_run h JOIN evalledger.brain_eval_log l USING (eval_run_id)
 WHERE l.completed_at IS NULL AND h.brain_version_id = %(brain_version_id)s
   AND h.catalog_version = %(catalog_version)s AND h.question_ids = %(question_ids)s::text[]
   AND h.answers = %(answers)s AND coalesce((to_jsonb(h) ->> 'repeats')::int, 1) = %(repeats)s
   AND l.brain_view_contracts_hash = %(contracts_hash)s AND l.reviewer_user_id = %(reviewer_user_id)s
   AND l.run_trigger = %(run_trigger)s::evalledger.eval_run_trigger
 ORDER BY l.started_at DESC
 LIMIT 1;

-- name: completed_harness_run
-- The latest completed harness run of a brain version reviewed by a reviewer (the demo reads back its own).
SELECT h.eval_run_id
  FROM evalledger.brain_eval_harness_run h JOIN evalledger.brain_eval_log l USING (eval_run_id)
 WHERE l.completed_at IS NOT NULL AND h.brain_version_id = %(brain_version_id)s
   AND l.reviewer_user_id = %(reviewer_user_id)s
 ORDER BY l.completed_at DESC
 LIMIT 1;

-- name: insert_harness_run
-- Record what a harness run calls and asks: the brain version, the catalog questions, the view contracts hashed (with their source), live or recorded answers.
INSERT INTO evalledger.brain_eval_harness_run
    (eval_run_id, brain_version_id, catalog_version, question_ids, contracts, answers)
VALUES (%(eval_run_id)s, %(brain_version_id)s, %(catalog_version)s, %(question_ids)s, %(contracts)s, %(answers)s);

-- name: insert_harness_run_repeat
-- insert_harness_run for a run whose judges each draft K > 1 times per answer (--repeats K); a run of one repeat is written by insert_harness_run, as before repeats.
INSERT INTO evalledger.brain_eval_harness_run
    (eval_run_id, brain_version_id, catalog_version, question_ids, contracts, answers, repeats)
VALUES (%(eval_run_id)s, %(brain_version_id)s, %(catalog_version)s, %(question_ids)s, %(contracts)s, %(answers)s,
        %(repeats)s);

-- name: claim_run
-- Claim a harness run for this runner until the claim's transaction ends (never committed): a second runner of it stops at once.
INSERT INTO evalledger.run_claim (suite, run_id) VALUES ('brain-eval', %(run_id)s::text);

-- name: harness_answered
-- The questions of a harness run that have an answer already.
SELECT question_id FROM evalledger.brain_eval_harness_answer WHERE eval_run_id = %(eval_run_id)s;

-- name: harness_calls
-- How a harness run's live calls went, the brain's answers and the judges' drafts: made one by one (sync), sent through a provider's batch API (batch, every request of the run's batches the provider has, a retry its own; a batch written but never submitted sent nothing), and the prompt tokens the providers' caches served. A batch's result is a stored row when it succeeded; a judge's failed draft is one when it is not retried (a retry's, or a cancelled one's); a brain's failed answer never is. A brain's answer is the item 'answer <question>' (harness.answer_item), a draft '<question> <model>': a question_id is upper case (brain_eval_catalog_question_id_format), so no draft's item starts with 'answer '.
WITH batched AS (
    SELECT q.item, b.attempt, r.outcome
      FROM evalledger.judge_batch b JOIN evalledger.judge_batch_request q USING (batch_id)
      LEFT JOIN evalledger.judge_batch_result r USING (batch_id, custom_id)
     WHERE b.suite = 'brain-eval' AND b.run_key = %(eval_run_id)s::text
       AND EXISTS (SELECT 1 FROM evalledger.judge_batch_event e WHERE e.batch_id = b.batch_id AND e.status = 'submitted'))
SELECT ((SELECT count(*) FROM evalledger.brain_eval_harness_answer a
          WHERE a.eval_run_id = %(eval_run_id)s AND NOT a.recorded)
        + (SELECT count(*) FROM evalledger.brain_eval_judge_suggestion s
            WHERE s.eval_run_id = %(eval_run_id)s AND NOT s.recorded AND s.attempts > 0)
        - (SELECT count(*) FROM batched
            WHERE outcome = 'succeeded'
               OR (outcome IS NOT NULL AND item NOT LIKE 'answer %%' AND (attempt > 1 OR outcome = 'cancelled'))))::integer AS sync,
       (SELECT count(*) FROM batched)::integer AS batch,
       ((SELECT coalesce(sum(l.cached_input_tokens), 0) FROM evalledger.brain_eval_harness_answer a
          JOIN evalledger.brain_analysis_log l USING (analysis_id)
         WHERE a.eval_run_id = %(eval_run_id)s AND NOT a.recorded)
        + (SELECT coalesce(sum(s.cached_input_tokens), 0) FROM evalledger.brain_eval_judge_suggestion s
            WHERE s.eval_run_id = %(eval_run_id)s AND NOT s.recorded))::integer AS cached_input_tokens;

-- name: insert_harness_answer
-- Store one brain answer of a harness run; the database computes its automatic scores.
INSERT INTO evalledger.brain_eval_harness_answer
    (eval_run_id, question_id, analysis_id, recorded, contract_error, latency_ms, attempts)
VALUES (%(eval_run_id)s, %(question_id)s, %(analysis_id)s, %(recorded)s, %(contract_error)s, %(latency_ms)s, %(attempts)s);

-- name: harness_answers
-- A harness run's answers with their automatic scores and token counts, in catalog order.
SELECT a.question_id, a.recorded, a.contract_error, a.citation_rate, a.confidence_distribution,
       a.lever_mapping_violations, a.latency_ms, a.attempts, b.input_tokens, b.output_tokens, b.token_cost_usd
  FROM evalledger.brain_eval_harness_answer a
  JOIN evalledger.brain_eval_harness_run h USING (eval_run_id)
  JOIN evalledger.brain_analysis_log b ON b.analysis_id = a.analysis_id
 WHERE a.eval_run_id = %(eval_run_id)s
 ORDER BY array_position(h.question_ids, a.question_id::text);

-- -- Reading (evalledger brain-eval list, reviewer list, tuner list, dashboard) ---------------------

-- name: list_runs
-- Runs newest first, filtered by brain, start time, decision and state (what `brain-eval list` shows): the
-- state and decision as brain_eval_run_state_v1 reads them, so an open run past its deadline lists as
-- abandoned, decided fail, before anything closes it.
SELECT l.eval_run_id, l.brain_under_test, l.run_trigger::text AS run_trigger, l.question_catalog_version,
       l.question_count, l.started_at, l.completed_at, s.state, s.decision::text AS decision, l.token_cost_usd
  FROM evalledger.brain_eval_log l
  JOIN evalledger.brain_eval_run_state_v1 s USING (eval_run_id)
 WHERE (%(brain)s::text IS NULL OR l.brain_under_test = %(brain)s)
   AND (%(since)s::timestamptz IS NULL OR l.started_at >= %(since)s)
   AND (%(decision)s::text IS NULL OR s.decision::text = %(decision)s)
   AND (%(state)s::text IS NULL OR s.state = %(state)s)
 ORDER BY l.started_at DESC, l.eval_run_id
 LIMIT %(limit)s;

-- name: run_questions
-- One run's question rows in question order, with what the database computed for each.
SELECT question_id, question_type::text AS question_type, question_passed, citation_rate, hallucinations_detected,
       total_claims, diagnosis_accuracy_score, narrative_coherence_rating, reviewer_comments
  FROM evalledger.brain_eval_question_score
 WHERE eval_run_id = %(eval_run_id)s
 ORDER BY question_id;

-- name: list_reviewers
-- Registered reviewers, with whether their login role exists and is in evalledger_reviewer.
SELECT r.role_name::text AS role_name, r.reviewer_user_id, r.display_name, r.created_at,
       to_regrole(quote_ident(r.role_name)) IS NOT NULL AS role_exists,
       coalesce(pg_has_role(to_regrole(quote_ident(r.role_name)), 'evalledger_reviewer', 'MEMBER'), false) AS is_reviewer
  FROM evalledger.reviewer r
 ORDER BY r.role_name;

-- name: list_tuners
-- The prompt-tuner registry (the owner's alone), with the reviewer role of each user id where there is one.
SELECT t.target_id, t.user_id, r.role_name::text AS role_name, t.registered_at
  FROM evalledger.prompt_tuner t
  LEFT JOIN evalledger.reviewer r ON r.reviewer_user_id = t.user_id
 ORDER BY t.target_id, t.registered_at, t.user_id;

-- name: dashboard_brain_quarterly_trend_v1
-- The brain_quarterly_trend_v1 panel as its readers see it.
SELECT * FROM evalledger.brain_quarterly_trend_v1;

-- name: dashboard_most_failing_questions_v1
-- The most_failing_questions_v1 panel, worst first.
SELECT * FROM evalledger.most_failing_questions_v1 ORDER BY fail_rank, question_id;

-- name: dashboard_stale_fixture_pass_rate_v1
-- The stale_fixture_pass_rate_v1 panel as its readers see it.
SELECT * FROM evalledger.stale_fixture_pass_rate_v1;

-- name: dashboard_reviewer_calibration_v1
-- The reviewer_calibration_v1 panel as its readers see it.
SELECT * FROM evalledger.reviewer_calibration_v1;

-- name: dashboard_cost_per_run_v1
-- The cost_per_run_v1 panel as its readers see it.
SELECT * FROM evalledger.cost_per_run_v1;

-- name: dashboard_prompt_drift_v1
-- The prompt_drift_v1 panel as its readers see it.
SELECT * FROM evalledger.prompt_drift_v1;

-- name: dashboard_most_failing_questions_v2
-- The most_failing_questions_v2 panel, worst first within each brain and catalog version.
SELECT * FROM evalledger.most_failing_questions_v2 ORDER BY brain_under_test, question_catalog_version, fail_rank, question_id;

-- name: dashboard_stale_fixture_pass_rate_v2
-- The stale_fixture_pass_rate_v2 panel, newest run first.
SELECT * FROM evalledger.stale_fixture_pass_rate_v2 ORDER BY started_at DESC, eval_run_id;

-- name: dashboard_stale_fixture_by_month_v1
-- The stale_fixture_by_month_v1 panel, by brain and month.
SELECT * FROM evalledger.stale_fixture_by_month_v1 ORDER BY brain_under_test, started_month;

-- name: dashboard_reviewer_calibration_v2
-- The reviewer_calibration_v2 panel, by reviewer and quarter.
SELECT * FROM evalledger.reviewer_calibration_v2 ORDER BY reviewer_user_id, quarter;

-- name: dashboard_cost_by_month_v1
-- The cost_by_month_v1 panel, by brain and month.
SELECT * FROM evalledger.cost_by_month_v1 ORDER BY brain_under_test, started_month;

-- name: dashboard_prompt_drift_v2
-- The prompt_drift_v2 panel, by brain and month.
SELECT * FROM evalledger.prompt_drift_v2 ORDER BY brain_under_test, month;

-- name: dashboard_judge_agreement_v1
-- The judge_agreement_v1 panel, by brain, judge and quarter.
SELECT * FROM evalledger.judge_agreement_v1 ORDER BY brain_under_test, judge_model, quarter;

-- name: dashboard_judge_agreement_v2
-- The judge_agreement_v2 panel: judge_agreement_v1 with each judge's flaky questions (--repeats K), by brain, judge and quarter.
SELECT * FROM evalledger.judge_agreement_v2 ORDER BY brain_under_test, judge_model, quarter;

-- -- Reviewer login roles (evalledger reviewer add) -------------------------------------------------

-- name: role_state
-- Whether a role exists, may log in, and is a member of evalledger_reviewer.
SELECT to_regrole(quote_ident(%(role)s)) IS NOT NULL AS role_exists,
       coalesce((SELECT rolcanlogin FROM pg_roles WHERE rolname = %(role)s), false) AS can_login,
       coalesce(pg_has_role(to_regrole(quote_ident(%(role)s)), 'evalledger_reviewer', 'MEMBER'), false) AS is_reviewer;

-- name: create_reviewer_role
-- A reviewer's login role, in evalledger_reviewer from the start (composed: {role} an identifier, {password} a literal).
CREATE ROLE {role} LOGIN PASSWORD {password} IN ROLE evalledger_reviewer;

-- name: create_auditor_login
-- The demo's auditor login, in evalledger_auditor from the start (composed: {role} an identifier, {password} a literal): it reads every panel.
CREATE ROLE {role} LOGIN PASSWORD {password} IN ROLE evalledger_auditor;

-- name: auditor_login_exists
-- Whether a role exists and is a member of evalledger_auditor.
SELECT to_regrole(quote_ident(%(role)s)) IS NOT NULL,
       coalesce(pg_has_role(to_regrole(quote_ident(%(role)s)), 'evalledger_auditor', 'MEMBER'), false);

-- name: set_role_password
-- A new password for a login role (composed: {role} an identifier, {password} a literal); the demo's own reviewer only.
ALTER ROLE {role} LOGIN PASSWORD {password};

-- name: grant_reviewer_role
-- Make an existing role a reviewer (composed: {role} an identifier).
GRANT evalledger_reviewer TO {role};

-- name: add_prompt_tuner_once
-- Register a prompt tuner of a brain once; returns a row only when it is new.
INSERT INTO evalledger.prompt_tuner (target_id, user_id) VALUES (%(target_id)s, %(user_id)s)
ON CONFLICT ON CONSTRAINT prompt_tuner_pkey DO NOTHING
RETURNING 1;

-- name: answers_to_judge
-- The contract-keeping answers of a harness run with their question, and the judges that drafted a suggestion on each already.
SELECT a.question_id, q.question_type, q.question_text, q.sources, q.uses_stale_fixture, q.pass_criteria,
       b.output AS narrative, b.claims, b.proposed_actions,
       coalesce((SELECT array_agg(s.model) FROM evalledger.brain_eval_judge_suggestion s
                  WHERE s.eval_run_id = a.eval_run_id AND s.question_id = a.question_id), '{}') AS judged_by
  FROM evalledger.brain_eval_harness_answer a
  JOIN evalledger.brain_eval_harness_run h USING (eval_run_id)
  JOIN evalledger.brain_eval_catalog_question q ON q.catalog_version = h.catalog_version AND q.question_id = a.question_id
  JOIN evalledger.brain_analysis_log b ON b.analysis_id = a.analysis_id
 WHERE a.eval_run_id = %(eval_run_id)s AND a.contract_error IS NULL
 ORDER BY array_position(h.question_ids, a.question_id::text);

-- name: answers_to_judge_repeat
-- answers_to_judge for a run of K > 1 repeats: the drafts stored on each answer as 'model repeat_no', so a resumption asks only the repeats missing.
SELECT a.question_id, q.question_type, q.question_text, q.sources, q.uses_stale_fixture, q.pass_criteria,
       b.output AS narrative, b.claims, b.proposed_actions,
       coalesce((SELECT array_agg(s.model || ' ' || s.repeat_no) FROM evalledger.brain_eval_judge_suggestion s
                  WHERE s.eval_run_id = a.eval_run_id AND s.question_id = a.question_id), '{}') AS judged_by
  FROM evalledger.brain_eval_harness_answer a
  JOIN evalledger.brain_eval_harness_run h USING (eval_run_id)
  JOIN evalledger.brain_eval_catalog_question q ON q.catalog_version = h.catalog_version AND q.question_id = a.question_id
  JOIN evalledger.brain_analysis_log b ON b.analysis_id = a.analysis_id
 WHERE a.eval_run_id = %(eval_run_id)s AND a.contract_error IS NULL
 ORDER BY array_position(h.question_ids, a.question_id::text);

-- name: insert_suggestion
-- Store one judge's draft for the reviewer; the database reads it from the reply and decides whether it contributes.
INSERT INTO evalledger.brain_eval_judge_suggestion
    (eval_run_id, question_id, model, recorded, structured, response_json, raw_excerpt, error_kind, error_message,
     input_tokens, output_tokens, cost_usd, latency_ms, attempts)
VALUES (%(eval_run_id)s, %(question_id)s, %(model)s, %(recorded)s, %(structured)s, %(response_json)s, %(raw_excerpt)s,
        %(error_kind)s, %(error_message)s, %(input_tokens)s, %(output_tokens)s, %(cost_usd)s, %(latency_ms)s,
        %(attempts)s);

-- name: insert_suggestion_billed
-- Store one judge's draft with its usage in every token class and the price it is billed at: the database
-- reads the draft, decides whether it contributes, and computes its cost. Without them, insert_suggestion.
INSERT INTO evalledger.brain_eval_judge_suggestion
    (eval_run_id, question_id, model, recorded, structured, response_json, raw_excerpt, error_kind, error_message,
     input_tokens, output_tokens, cost_usd, latency_ms, attempts,
     cached_input_tokens, cache_write_tokens, price_input, price_cached_input,
     price_cache_write, price_output, price_as_of)
VALUES (%(eval_run_id)s, %(question_id)s, %(model)s, %(recorded)s, %(structured)s, %(response_json)s, %(raw_excerpt)s,
        %(error_kind)s, %(error_message)s, %(input_tokens)s, %(output_tokens)s, %(cost_usd)s, %(latency_ms)s,
        %(attempts)s,
        %(cached_input_tokens)s, %(cache_write_tokens)s, %(price_input)s, %(price_cached_input)s,
        %(price_cache_write)s, %(price_output)s, %(price_as_of)s);

-- name: insert_suggestion_repeat
-- insert_suggestion for a repeat after the first (--repeats K): the draft names its repeat; the first is stored by insert_suggestion, as before repeats.
INSERT INTO evalledger.brain_eval_judge_suggestion
    (eval_run_id, question_id, model, recorded, structured, response_json, raw_excerpt, error_kind, error_message,
     input_tokens, output_tokens, cost_usd, latency_ms, attempts, repeat_no)
VALUES (%(eval_run_id)s, %(question_id)s, %(model)s, %(recorded)s, %(structured)s, %(response_json)s, %(raw_excerpt)s,
        %(error_kind)s, %(error_message)s, %(input_tokens)s, %(output_tokens)s, %(cost_usd)s, %(latency_ms)s,
        %(attempts)s, %(repeat_no)s);

-- name: insert_suggestion_billed_repeat
-- insert_suggestion_billed for a repeat after the first (--repeats K): the draft names its repeat.
INSERT INTO evalledger.brain_eval_judge_suggestion
    (eval_run_id, question_id, model, recorded, structured, response_json, raw_excerpt, error_kind, error_message,
     input_tokens, output_tokens, cost_usd, latency_ms, attempts,
     cached_input_tokens, cache_write_tokens, price_input, price_cached_input,
     price_cache_write, price_output, price_as_of, repeat_no)
VALUES (%(eval_run_id)s, %(question_id)s, %(model)s, %(recorded)s, %(structured)s, %(response_json)s, %(raw_excerpt)s,
        %(error_kind)s, %(error_message)s, %(input_tokens)s, %(output_tokens)s, %(cost_usd)s, %(latency_ms)s,
        %(attempts)s,
        %(cached_input_tokens)s, %(cache_write_tokens)s, %(price_input)s, %(price_cached_input)s,
        %(price_cache_write)s, %(price_output)s, %(price_as_of)s, %(repeat_no)s);

-- name: suggestions
-- Every judge's suggestion on a harness run's answers, by question then model; disagreement stays visible.
SELECT s.question_id, s.model, s.same_family, s.recorded, s.contributes, s.total_claims, s.unsupported_claims,
       s.diagnosis_accuracy, s.staleness_recognised, s.notes, s.error_kind, s.error_message
  FROM evalledger.brain_eval_judge_suggestion s
  JOIN evalledger.brain_eval_harness_run h USING (eval_run_id)
 WHERE s.eval_run_id = %(eval_run_id)s
 ORDER BY array_position(h.question_ids, s.question_id::text), s.model;

-- name: suggestions_repeat
-- suggestions for a run of K > 1 repeats: each judge's drafts by question, model and repeat.
SELECT s.question_id, s.model, s.repeat_no, s.same_family, s.recorded, s.contributes, s.total_claims,
       s.unsupported_claims, s.diagnosis_accuracy, s.staleness_recognised, s.notes, s.error_kind, s.error_message
  FROM evalledger.brain_eval_judge_suggestion s
  JOIN evalledger.brain_eval_harness_run h USING (eval_run_id)
 WHERE s.eval_run_id = %(eval_run_id)s
 ORDER BY array_position(h.question_ids, s.question_id::text), s.model, s.repeat_no;

-- name: review_suggestions
-- suggestions as the review screens show them: each judge's drafts by question, model and repeat, with the repeat's number and the run's K (read through to_jsonb, so a ledger from before repeats reads 1 of 1).
SELECT s.question_id, s.model, s.same_family, s.recorded, s.contributes, s.total_claims, s.unsupported_claims,
       s.diagnosis_accuracy, s.staleness_recognised, s.notes, s.error_kind, s.error_message,
       coalesce((to_jsonb(s) ->> 'repeat_no')::int, 1) AS repeat_no, coalesce((to_jsonb(h) ->> 'repeats')::int, 1) AS repeats
  FROM evalledger.brain_eval_judge_suggestion s
  JOIN evalledger.brain_eval_harness_run h USING (eval_run_id)
 WHERE s.eval_run_id = %(eval_run_id)s
 ORDER BY array_position(h.question_ids, s.question_id::text), s.model, 13;

-- name: flaky_questions
-- The questions of a run whose judge repeats straddle a pass criterion's threshold (brain_eval_flaky_v1), in the run's order.
SELECT f.question_id, f.judge_model, f.criterion, f.threshold, f.repeats, f.lowest, f.highest
  FROM evalledger.brain_eval_flaky_v1 f
  JOIN evalledger.brain_eval_harness_run h USING (eval_run_id)
 WHERE f.eval_run_id = %(eval_run_id)s
 ORDER BY array_position(h.question_ids, f.question_id::text), f.judge_model, f.criterion;

-- name: review_answers
-- What a reviewer scores from, per question row of a run, in the run's order: the question, the brain's answer (from a harness answer, or an analysis recorded elsewhere), the automatic scores, and the numbers the reviewer has saved for it (never the question's verdict, which a reviewer may not read: docs/guards.md).
SELECT q.question_id, q.question_type, q.uses_stale_fixture, coalesce(c.question_text, b.question) AS question_text,
       b.output AS narrative, b.claims, b.proposed_actions, a.contract_error, q.citation_rate,
       q.confidence_distribution, q.lever_mapping_violations, coalesce(a.recorded, false) AS recorded,
       jsonb_build_object('hallucinations_detected', q.hallucinations_detected, 'total_claims', q.total_claims,
                          'staleness_correctly_recognized', q.staleness_correctly_recognized,
                          'diagnosis_accuracy_score', q.diagnosis_accuracy_score,
                          'narrative_coherence_rating', q.narrative_coherence_rating,
                          'reviewer_comments', q.reviewer_comments) AS entered
  FROM evalledger.brain_eval_question_score q
  JOIN evalledger.brain_analysis_log b ON b.analysis_id = q.brain_analysis_id
  LEFT JOIN evalledger.brain_eval_harness_answer a ON a.eval_run_id = q.eval_run_id AND a.question_id = q.question_id
  LEFT JOIN evalledger.brain_eval_harness_run h ON h.eval_run_id = q.eval_run_id
  LEFT JOIN evalledger.brain_eval_catalog_question c ON c.catalog_version = h.catalog_version AND c.question_id = q.question_id
 WHERE q.eval_run_id = %(eval_run_id)s AND (%(question_id)s::text IS NULL OR q.question_id = %(question_id)s)
 ORDER BY coalesce(array_position(h.question_ids, q.question_id::text), 0), q.question_id;

-- name: review_queue
-- The open runs waiting for the current reviewer (its own login, through the reviewer registry), oldest first: how many questions still lack a field their criteria need, and whether the run is signed off.
SELECT l.eval_run_id, l.brain_under_test, l.run_trigger::text AS run_trigger, l.question_catalog_version,
       l.started_at, l.question_count,
       count(q.question_id) FILTER (WHERE cardinality(evalledger.question_fields_needed_v1(q.question_type, q.uses_stale_fixture, q.hallucinations_detected, q.total_claims, q.staleness_correctly_recognized, q.diagnosis_accuracy_score, q.narrative_coherence_rating, q.lever_mapping_violations, r.definition, evalledger.run_brains_v1(l.brain_under_test, l.system_prompt_hash))) > 0)
           AS questions_to_score,
       EXISTS (SELECT 1 FROM evalledger.brain_eval_run_review v WHERE v.eval_run_id = l.eval_run_id) AS signed_off
  FROM evalledger.brain_eval_log l
  JOIN evalledger.rubric r USING (rubric_id)
  LEFT JOIN evalledger.brain_eval_question_score q USING (eval_run_id)
 WHERE l.completed_at IS NULL AND l.reviewer_user_id = evalledger.reviewer_id_of_v1(current_user)
 GROUP BY l.eval_run_id, r.definition
 ORDER BY l.started_at, l.eval_run_id;

-- name: review_questions
-- Every question row of a run the current reviewer reviews, in the run's order: the reviewer's fields so far, what each still needs, the automatic scores, and whether its suggestions were shown.
SELECT q.question_id, q.question_type, q.uses_stale_fixture, q.citation_rate, q.lever_mapping_violations,
       q.confidence_distribution, q.hallucinations_detected, q.total_claims, q.staleness_correctly_recognized,
       q.diagnosis_accuracy_score, q.narrative_coherence_rating, q.reviewer_comments,
       evalledger.question_fields_needed_v1(q.question_type, q.uses_stale_fixture, q.hallucinations_detected, q.total_claims, q.staleness_correctly_recognized, q.diagnosis_accuracy_score, q.narrative_coherence_rating, q.lever_mapping_violations, r.definition, evalledger.run_brains_v1(l.brain_under_test, l.system_prompt_hash)) AS needs,
       EXISTS (SELECT 1 FROM evalledger.brain_eval_suggestion_shown s
                WHERE s.eval_run_id = q.eval_run_id AND s.question_id = q.question_id) AS suggestions_shown
  FROM evalledger.brain_eval_question_score q
  JOIN evalledger.brain_eval_log l USING (eval_run_id)
  JOIN evalledger.rubric r USING (rubric_id)
  LEFT JOIN evalledger.brain_eval_harness_run h USING (eval_run_id)
 WHERE q.eval_run_id = %(eval_run_id)s
 ORDER BY coalesce(array_position(h.question_ids, q.question_id::text), 0), q.question_id;

-- name: question_sources
-- The fixture sources a harness question gave the brain (id, title, as-of date, stale flag, data), for the reviewer to check citations against.
SELECT c.sources
  FROM evalledger.brain_eval_harness_run h
  JOIN evalledger.brain_eval_catalog_question c ON c.catalog_version = h.catalog_version
 WHERE h.eval_run_id = %(eval_run_id)s AND c.question_id = %(question_id)s;

-- name: show_suggestions
-- The current reviewer asks to see the judges' suggestions on one question (recorded: blind review); when they were first shown.
SELECT evalledger.brain_eval_show_suggestions_v2(%(eval_run_id)s, %(question_id)s);

-- name: review_me
-- Who the current login is as a reviewer (the registry's reviewer_user_id, or NULL): the guided review and the queue say whom they serve.
SELECT current_user::text AS role_name, evalledger.reviewer_id_of_v1(current_user) AS reviewer_user_id;

-- name: review_run
-- A run as its reviewer walks it: brain, catalog, whether it is complete, its rubric's dimensions (calibration notes are keyed by them) and the latest sign-off's hours, notes (their defaults) and time. No row for a run this login does not review.
SELECT l.eval_run_id, l.brain_under_test, l.question_catalog_version, l.question_count, l.completed_at,
       (SELECT jsonb_agg(jsonb_build_object('key', d ->> 'key', 'label', d ->> 'label') ORDER BY o)
          FROM jsonb_array_elements(r.definition -> 'dimensions') WITH ORDINALITY AS x(d, o)) AS dimensions,
       v.reviewer_hours_spent AS signed_off_hours, v.calibration_notes AS signed_off_notes,
       v.created_at AS signed_off_at
  FROM evalledger.brain_eval_log l
  JOIN evalledger.rubric r USING (rubric_id)
  LEFT JOIN LATERAL (SELECT s.reviewer_hours_spent, s.calibration_notes, s.created_at
                       FROM evalledger.brain_eval_run_review s
                      WHERE s.eval_run_id = l.eval_run_id
                      ORDER BY s.created_at DESC, s.review_id DESC LIMIT 1) v ON true
 WHERE l.eval_run_id = %(eval_run_id)s AND l.reviewer_user_id = evalledger.reviewer_id_of_v1(current_user);

-- name: suggestions_shown
-- The questions of a run whose judge suggestions its reviewer has asked to see (blind review).
SELECT question_id FROM evalledger.brain_eval_suggestion_shown WHERE eval_run_id = %(eval_run_id)s;

-- ============================================================================================
-- The reviewer's saves and the reference answer (issue 23; issue 19's optimistic check)
-- ============================================================================================

-- name: question_versions
-- Per question row of a run (or one, with question_id): the last trail entry of its reviewer values (0: none yet), the version a form or the walk showed, and whether its reference answer was shown.
SELECT q.question_id,
       coalesce((SELECT max(e.entry_id) FROM evalledger.brain_eval_review_entry e
                  WHERE e.eval_run_id = q.eval_run_id AND e.question_id = q.question_id), 0) AS last_entry,
       EXISTS (SELECT 1 FROM evalledger.brain_eval_reference_shown s
                WHERE s.eval_run_id = q.eval_run_id AND s.question_id = q.question_id) AS reference_shown
  FROM evalledger.brain_eval_question_score q
 WHERE q.eval_run_id = %(eval_run_id)s AND (%(question_id)s::text IS NULL OR q.question_id = %(question_id)s);

-- name: lock_question
-- The reviewer's question row locked until the transaction ends, so its trail cannot move while a save checks it.
SELECT q.question_id FROM evalledger.brain_eval_question_score q
 WHERE q.eval_run_id = %(eval_run_id)s AND q.question_id = %(question_id)s
   FOR UPDATE;

-- name: entries_since
-- The trail entries of a question after the one a save was shown (who changed what, when, acting as which role), oldest first.
SELECT e.entry_id, e.field, e.value, e.entered_by::text AS entered_by, e.acting_role::text AS acting_role,
       e.entered_at
  FROM evalledger.brain_eval_review_entry e
 WHERE e.eval_run_id = %(eval_run_id)s AND e.question_id = %(question_id)s AND e.entry_id > %(since)s
 ORDER BY e.entry_id;

-- name: show_reference
-- The run's reviewer, its numbers saved, asks for a question's reference answer (recorded; readable from the next transaction): when it was first shown, NULL for a run outside the harness.
SELECT evalledger.brain_eval_show_reference_v2(%(eval_run_id)s, %(question_id)s);

-- name: reference
-- A question's reference answer (expected findings, pass criteria, when first shown) for its reviewer, once shown by an earlier transaction; NULL before.
SELECT evalledger.brain_eval_reference_v2(%(eval_run_id)s, %(question_id)s);

-- name: run_levers
-- The lever enum of a harness run's brain version (what its proposed actions must keep to).
SELECT v.levers
  FROM evalledger.brain_eval_harness_run h
  JOIN evalledger.brain_version v USING (brain_version_id)
 WHERE h.eval_run_id = %(eval_run_id)s;

-- name: run_agreement
-- How each judge's drafts on one completed run agree with its reviewer's final numbers, blind entries only (agreement_measures_v1).
SELECT f.judge_model, m.unsupported_pairs, m.unsupported_agreement, m.unsupported_kappa, m.diagnosis_pairs,
       m.diagnosis_agreement, m.diagnosis_weighted_kappa, m.claims_pairs, m.claims_mean_abs_difference
  FROM evalledger.brain_eval_agreement_facts_v1(ARRAY[%(eval_run_id)s::uuid]) f
 CROSS JOIN LATERAL evalledger.agreement_measures_v1(
        ARRAY[f.unsupported_j0_r0, f.unsupported_j0_r1, f.unsupported_j0_r2, f.unsupported_j1_r0, f.unsupported_j1_r1, f.unsupported_j1_r2, f.unsupported_j2_r0, f.unsupported_j2_r1, f.unsupported_j2_r2],
        ARRAY[f.diagnosis_j0_r0, f.diagnosis_j0_r1, f.diagnosis_j0_r2, f.diagnosis_j1_r0, f.diagnosis_j1_r1, f.diagnosis_j1_r2, f.diagnosis_j2_r0, f.diagnosis_j2_r1, f.diagnosis_j2_r2],
        f.claims_pairs, f.claims_abs_difference) m
 ORDER BY f.judge_model;

-- name: dashboard_brain_eval_intervals_v1
-- The brain_eval_intervals_v1 panel: each aggregate's interval beside the verdict, newest first.
SELECT * FROM evalledger.brain_eval_intervals_v1 ORDER BY completed_at DESC;

-- name: paired
-- `brain-eval compare A B`: B against A over the questions both have, per measure (brain_eval_paired_v1).
SELECT evalledger.brain_eval_paired_v1(%(run_a)s, %(run_b)s) AS paired;
-- name: draft_whole_plan
-- The draft's cursor reads every row it selects: plan it for all of them, not for a fast first few (which probes the failures row by row).
SET LOCAL cursor_tuple_fraction = 1.0;

-- name: draft_candidates
-- The captured rows a catalog draft picks from, one line per distinct query text: those of the window (the newest max_rows of them) whose brain retrieved something, never one whose scrubbing failed (a scrubber_exception of its capture_key); each row flagged when a replay run of the ledger's rows found it lost a source or fell below its rubric's every_recall_at_least. Per text: how many rows, its representative (the greatest flagged, remote, created_at, id, packed as text that sorts so, with its tool and detail after) and its newest 100 rows (created_at and id).
WITH flagged AS (
    SELECT DISTINCT q.capture_id
      FROM evalledger.replay_query q
      JOIN evalledger.replay_run r ON r.replay_run_id = q.replay_run_id
      JOIN evalledger.rubric b ON b.rubric_id = r.rubric_id
     WHERE r.source = 'ledger' AND q.status = 'replayed'
       AND (cardinality(q.sources_lost) > 0
            OR q.recall < (b.definition #>> '{pass_rule,every_recall_at_least}')::numeric)),
picked AS (
    SELECT c.id, c.created_at, to_char(c.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS at,
           c.tool_name, c.detail, c.remote, f.capture_id IS NOT NULL AS flagged, c.query
      FROM evalledger.eval_candidates c
      LEFT JOIN flagged f ON f.capture_id = c.id
     WHERE (%(since)s::timestamptz IS NULL OR c.created_at >= %(since)s::timestamptz)
       AND c.created_at < %(until)s::timestamptz
       AND (%(tool)s::text IS NULL OR c.tool_name = %(tool)s::text)
       AND (%(remote)s::boolean IS NULL OR c.remote = %(remote)s::boolean)
       AND cardinality(c.retrieved_slugs) > 0
       AND NOT EXISTS (SELECT 1 FROM evalledger.eval_capture_failures x
                        WHERE x.reason = 'scrubber_exception' AND x.capture_key = c.capture_key)
     ORDER BY c.created_at DESC, c.id DESC
     LIMIT %(max_rows)s)
SELECT p.query, count(*) AS rows,
       max(p.flagged::int::text || p.remote::int::text || p.at || lpad(p.id::text, 20, '0') || ' '
           || p.tool_name || ' ' || coalesce(p.detail, '-') COLLATE "C") AS rep,
       (array_agg(p.at || ' ' || p.id ORDER BY p.created_at DESC, p.id DESC))[1:100] AS newest
  FROM picked p
 GROUP BY p.query
 ORDER BY p.query COLLATE "C";

-- name: draft_retrieved
-- What the brain retrieved for each captured row a draft picked, by its key (created_at, id).
SELECT c.id, c.retrieved_slugs, c.retrieved_chunk_ids, c.source_ids
  FROM unnest(%(ids)s::bigint[], %(created)s::timestamptz[]) AS k (id, created_at)
  JOIN evalledger.eval_candidates c ON c.created_at = k.created_at AND c.id = k.id;

-- name: catalog_provenance
-- The captured rows each question of a catalog version was drafted from, in the order the draft listed them.
SELECT p.question_id, p.position, p.capture_id, p.capture_created_at
  FROM evalledger.brain_eval_catalog_provenance p
 WHERE p.catalog_version = %(catalog_version)s
 ORDER BY p.question_id, p.position;
