"""The journal (issue 18) as a real superuser would attack it, and verify catching each attack.

Every tampering here is done as the superuser that installed the ledger, with the triggers lifted
through pg_catalog.pg_trigger (no DDL, so no event trigger sees it), as issue 18 found it done.
verify recomputes every hash outside the database (canon.py, check.py) and names the table, key and
column, or the entry and block, where the first link breaks. docs/ledger.md maps these tests.
"""

from __future__ import annotations

import threading
import time

import psycopg
import pytest
from psycopg import errors, sql

from evalledger.ledger import check
from tests.builders import BRAIN_PROMPTS, record_run, register_prompt
from tests.ledger_forge import (age_unsealed, kinds, latest_entry, rejournal, reseal, rewrite, seal, take_digest,
                                triggers_lifted, verified)

EXEMPT = {"ledger_journal", "ledger_block", "ledger_digest", "ledger_identity", "capture_purge_marker", "capture_window",
          "retention_purge_marker"}


@pytest.fixture(autouse=True)
def registered_prompts(admin):
    for brain, prompt in BRAIN_PROMPTS.items():
        register_prompt(admin, brain, prompt)


@pytest.fixture
def runner(connect_as):
    return connect_as("evalledger_runner")


def hallucinating(number, row):
    row["hallucinations_detected"] = 1  # 10% of claims: a hard criterion missed, the run fails


@pytest.fixture
def failed_run(runner, reviewer_id):
    """A completed 3-question run the database decided `fail`, sealed; its key as the journal writes it."""
    decided = record_run(runner, reviewer_id, count=3, bend=hallucinating)
    assert decided.decision == "fail"
    return f'{{"eval_run_id":"{decided.eval_run_id}"}}'


def sealed_digest(admin) -> list[tuple[str, dict]]:
    seal(admin)
    return [("held.json", take_digest(admin))]


# -- coverage: every ledger table, and every table added later ----------------------------------------
def test_every_ledger_table_is_journalled_and_only_the_journal_itself_is_exempt(admin):
    tables = {r[0] for r in admin.execute(
        "SELECT relname FROM pg_class WHERE relnamespace = 'evalledger'::regnamespace AND relkind IN ('r', 'p') "
        "AND NOT relispartition")}
    journalled = {r[0] for r in admin.execute(
        "SELECT DISTINCT c.relname FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid "
        "WHERE t.tgfoid IN ('evalledger.journal_row_v2()'::regprocedure, 'evalledger.journal_capture_v2()'::regprocedure) "
        "AND t.tgenabled = 'A'")}
    assert tables - journalled - EXEMPT == set(), "not journalled (CALL evalledger.journal_attach_v2() in its migration)"
    assert EXEMPT <= tables - journalled
    assert admin.execute("SELECT * FROM evalledger.journal_coverage_v2()").fetchall() == []
    # Every table of migrations 0001-0004 by name, so a rename cannot drop one from the journal unseen.
    assert journalled >= {
        "target", "rubric", "rubric_activation", "reviewer", "prompt_tuner", "brain_analysis_log", "brain_eval_import",
        "brain_eval_log", "brain_eval_question_score", "brain_eval_review_entry", "brain_eval_suggestion_shown",
        "brain_eval_run_review", "legal_hold", "legal_hold_release", "take", "eval_takes_quality_runs",
        "eval_takes_quality_judge_verdicts", "eval_candidates", "eval_candidate_keys", "eval_capture_failures",
        "eval_work_quality_snapshots", "eval_work_quality_judge_verdicts", "brain_eval_catalog",
        "brain_eval_catalog_question", "brain_version", "brain_eval_harness_run", "brain_eval_harness_answer",
        "brain_eval_judge_suggestion", "retention_purge_log"}


def test_a_runs_proof_holds_every_table_that_holds_rows_of_runs(admin):
    """Every journalled table with an eval_run_id column gives its rows to the run's proof (or is named here)."""
    from evalledger.ledger.proof import RUN_TABLES

    holding = {r[0] for r in admin.execute(
        "SELECT j.table_name FROM evalledger.journal_tables_v1() j JOIN pg_attribute a ON a.attrelid = j.rel "
        "WHERE a.attname = 'eval_run_id' AND NOT a.attisdropped")}
    # The purge log: of runs gone. A run's stored uncertainty and its trend row: derived at its completion from
    # the rows the proof holds (and written after the manifest for a run completed before migrations 0152 and
    # 0164); --recompute re-derives them.
    assert holding - {"retention_purge_log", "brain_eval_run_uncertainty", "brain_eval_trend"} == {
        table for table, _ in RUN_TABLES}


def make_table(admin, ddl: str) -> None:
    """A table a later migration adds, as migrations do: as the code role, sealed (RLS forced)."""
    with admin.transaction():
        admin.execute("SET LOCAL ROLE evalledger_code")
        admin.execute(ddl)
        admin.execute("CALL evalledger.seal_tables_v2()")


def test_a_table_added_later_is_named_until_its_migration_journals_it(admin):
    make_table(admin, "CREATE TABLE evalledger.later (later_id bigint PRIMARY KEY, note text)")
    admin.execute("INSERT INTO evalledger.later VALUES (1, 'written before the journal knew the table')")
    problems = admin.execute("SELECT * FROM evalledger.journal_coverage_v2()").fetchall()
    assert problems == [("later", "no journal trigger later_90_journal (CALL evalledger.journal_attach_v2() in the "
                                  "migration that made it)"),
                        ("later", "no journal trigger later_90_journal_delete (CALL evalledger.journal_attach_v2() in "
                                  "the migration that made it)"),
                        ("later", "its canon-v1 functions do not match its columns (CALL evalledger.journal_attach_v2())")]
    # verify reads the tables from the package, and checks the catalog against it: a table the package does not
    # install is named, its missing journal triggers too, and its rows are checked all the same.
    assert kinds(verified(admin.info.dsn)) == [("table_unknown", "later", None, ()),
                                               ("journal_trigger", "later", None, ()),
                                               ("journal_trigger", "later", None, ()),
                                               ("row_unjournalled", "later", '{"later_id":1}', ())]
    with admin.transaction():
        admin.execute("SET LOCAL ROLE evalledger_code")
        admin.execute("CALL evalledger.journal_attach_v2()")
    assert admin.execute("SELECT * FROM evalledger.journal_coverage_v2()").fetchall() == []
    assert admin.execute("SELECT operation FROM evalledger.ledger_journal WHERE table_name = 'later'").fetchall() == [
        ("BASELINE",)]
    admin.execute("INSERT INTO evalledger.later VALUES (2, 'journalled')")
    assert kinds(verified(admin.info.dsn)) == [("table_unknown", "later", None, ())]  # every row checks


def test_a_column_canon_v1_has_no_form_for_is_refused_at_attach(admin):
    make_table(admin, "CREATE TABLE evalledger.later_blob (id bigint PRIMARY KEY, data bytea)")
    assert ("later_blob", "evalledger: canon-v1 has no form for column evalledger.later_blob.data of type bytea") in \
        admin.execute("SELECT * FROM evalledger.journal_coverage_v2()").fetchall()
    with pytest.raises(errors.FeatureNotSupported, match="canon-v1 has no form for column"), admin.transaction():
        admin.execute("SET LOCAL ROLE evalledger_code")
        admin.execute("CALL evalledger.journal_attach_v2()")


def test_a_nullable_column_added_later_leaves_every_old_hash_as_it_was(admin, failed_run):
    seal(admin)
    with admin.transaction():
        admin.execute("SET LOCAL ROLE evalledger_code")
        admin.execute("ALTER TABLE evalledger.target ADD COLUMN retired_at timestamptz")
    assert admin.execute("SELECT * FROM evalledger.journal_coverage_v2()").fetchall() == [
        ("target", "its canon-v1 functions do not match its columns (CALL evalledger.journal_attach_v2())")]
    assert verified(admin.info.dsn).verified  # NULL columns are left out: old rows hash as before


# -- unskippable ---------------------------------------------------------------------------------------
def test_replica_mode_skips_no_journal_entry(admin):
    admin.execute("SET session_replication_role = replica")
    admin.execute("INSERT INTO evalledger.target (target_id, kind, display_name) VALUES ('AGT-990', 'bot', 'replica')")
    admin.execute("RESET session_replication_role")
    assert latest_entry(admin, "target", '{"target_id":"AGT-990"}') is not None
    assert verified(admin.info.dsn).verified


def event_triggers_installed(admin) -> bool:
    return admin.execute("SELECT count(*) = 2 FROM pg_event_trigger WHERE evtname IN "
                         "('evalledger_ddl_guard_v1', 'evalledger_drop_guard_v1') AND evtenabled = 'A'").fetchone()[0]


@pytest.mark.parametrize("ddl, refusal", [
    ("ALTER TABLE evalledger.brain_eval_log DISABLE TRIGGER brain_eval_log_90_journal", "stay ENABLE ALWAYS"),
    ("ALTER TABLE evalledger.brain_eval_log ENABLE REPLICA TRIGGER brain_eval_log_90_journal", "stay ENABLE ALWAYS"),
    ("ALTER TABLE evalledger.brain_eval_log DISABLE TRIGGER ALL", "stay ENABLE ALWAYS"),
    ("DROP TRIGGER brain_eval_log_90_journal ON evalledger.brain_eval_log", "DROP refused"),
    ("DROP FUNCTION evalledger.journal_row_v2() CASCADE", "DROP refused"),
    ("ALTER TABLE evalledger.eval_candidates DISABLE TRIGGER eval_candidates_90_journal_insert", "stay ENABLE ALWAYS"),
])
def test_no_ddl_lifts_the_journal_not_even_the_superusers(admin, ddl, refusal):
    if not event_triggers_installed(admin):
        pytest.skip("the migrating user was not a superuser: no event triggers")
    with pytest.raises(errors.InsufficientPrivilege, match=refusal):
        admin.execute(ddl)
    assert admin.execute("SELECT tgenabled FROM pg_trigger WHERE tgname = 'brain_eval_log_90_journal'").fetchone() == ("A",)


@pytest.mark.parametrize("ddl", [
    "ALTER TABLE evalledger.brain_eval_log DISABLE TRIGGER brain_eval_log_90_journal",
    "DROP TRIGGER brain_eval_log_90_journal ON evalledger.brain_eval_log",
    "CREATE OR REPLACE FUNCTION evalledger.journal_row_v2() RETURNS trigger LANGUAGE plpgsql AS $$BEGIN RETURN NULL; END$$",
])
def test_the_owner_role_cannot_lift_the_journal(connect_as, ddl):
    with pytest.raises(errors.InsufficientPrivilege):
        connect_as("evalledger_owner").execute(ddl)


@pytest.mark.parametrize("role", ["evalledger_owner", "evalledger_runner", "evalledger_auditor", "evalledger_revops"])
def test_no_application_role_writes_the_journal_or_its_blocks(connect_as, role):
    conn = connect_as(role)
    for statement in ("INSERT INTO evalledger.ledger_journal (table_name, operation, row_key, rows_root) "
                      "VALUES ('target', 'INSERT', '{}', sha256(''))",
                      "INSERT INTO evalledger.ledger_digest (block_id) VALUES (1)",
                      "DELETE FROM evalledger.ledger_journal"):
        with pytest.raises(errors.InsufficientPrivilege, match="permission denied"):
            conn.execute(statement)


@pytest.mark.parametrize("statement", ["UPDATE evalledger.ledger_journal SET operation = 'UPDATE'",
                                       "DELETE FROM evalledger.ledger_journal", "TRUNCATE evalledger.ledger_journal",
                                       "UPDATE evalledger.ledger_block SET sealed_by = 'nobody'",
                                       "DELETE FROM evalledger.ledger_block WHERE block_id = 1"])
def test_the_journal_is_append_only_for_the_superuser_too(admin, failed_run, statement):
    seal(admin)
    with pytest.raises(errors.InsufficientPrivilege, match="append-only"):
        admin.execute(statement)


def test_readers_of_the_journal(admin, connect_as, reviewers):
    admin.execute("INSERT INTO evalledger.prompt_tuner (target_id, user_id) VALUES ('AGT-902', %s)",
                  (list(reviewers.values())[0],))
    auditor = connect_as("evalledger_auditor")
    seen = {r[0] for r in auditor.execute("SELECT DISTINCT table_name FROM evalledger.ledger_journal")}
    assert "target" in seen and "prompt_tuner" not in seen  # its keys would say who tunes which brain
    assert connect_as("evalledger_owner").execute(
        "SELECT count(*) FROM evalledger.ledger_journal WHERE table_name = 'prompt_tuner'").fetchone()[0] == 1
    for role in ("evalledger_runner", "evalledger_revops"):
        with pytest.raises(errors.InsufficientPrivilege):
            connect_as(role).execute("SELECT 1 FROM evalledger.ledger_journal")


# -- each tampering of issue 18, caught ------------------------------------------------------------------
def test_a_decision_rewritten_with_the_triggers_off_is_caught_naming_its_column(admin, failed_run):
    held = sealed_digest(admin)
    rewrite(admin, "brain_eval_log", "decision = 'pass'", "decision = 'fail'")
    report = verified(admin.info.dsn, held)
    entry = latest_entry(admin, "brain_eval_log", failed_run)
    assert [f.line() for f in report.findings] == [
        f"row_changed: brain_eval_log {failed_run}: decision differs from journal entry {entry} (UPDATE)"]


@pytest.mark.parametrize("lifted", ["every trigger", "the guards, not the journal"])
def test_a_catalog_edit_of_the_triggers_is_caught_as_the_superuser_did_it(admin, dsn, failed_run, lifted):
    """The sequence a superuser once used, statement for statement: tgenabled = 'D' in pg_trigger, the decision rewritten
    (in a fresh session, which reads its triggers from the catalog), tgenabled = 'A' again. No DDL ran."""
    held = sealed_digest(admin)
    spare = "" if lifted == "every trigger" else r" AND tgname NOT LIKE '%\_90\_journal%'"
    triggers = "tgrelid = 'evalledger.brain_eval_log'::regclass AND NOT tgisinternal" + spare
    admin.execute("UPDATE pg_catalog.pg_trigger SET tgenabled = 'D' WHERE " + triggers)
    try:
        with psycopg.connect(dsn, autocommit=True) as superuser:
            assert superuser.execute("UPDATE evalledger.brain_eval_log SET decision = 'pass' WHERE decision = 'fail'"
                                     ).rowcount == 1
    finally:
        admin.execute("UPDATE pg_catalog.pg_trigger SET tgenabled = 'A' WHERE " + triggers)
    assert admin.execute("SELECT decision FROM evalledger.brain_eval_log").fetchone() == ("pass",)
    assert admin.execute("SELECT * FROM evalledger.journal_coverage_v2()").fetchall() == []  # all back as it was
    seal(admin)
    report = verified(dsn, held, recompute=True)
    recomputed = ("recomputed", "brain_eval_log", failed_run, ("decision",))
    if lifted == "every trigger":  # silent: the row is not the version its entry hashed
        assert kinds(report) == [("row_changed", "brain_eval_log", failed_run, ("decision",)), recomputed]
    else:  # journalled as an UPDATE, which no rule of the ledger allows a completed run; nor do its inputs decide it
        newest = latest_entry(admin, "brain_eval_log", failed_run)
        assert admin.execute("SELECT operation, entry_id > (SELECT last_entry_id FROM evalledger.ledger_block "
                             "WHERE block_id = 1) FROM evalledger.ledger_journal WHERE entry_id = %s", (newest,)
                             ).fetchone() == ("UPDATE", True)
        assert kinds(report) == [("update_refused", "brain_eval_log", failed_run, ("decision",)), recomputed]


def test_a_decision_rewritten_with_its_journal_entry_is_caught_by_its_block(admin, failed_run):
    held = sealed_digest(admin)
    rewrite(admin, "brain_eval_log", "decision = 'pass'", "decision = 'fail'")
    entry = rejournal(admin, admin.info.dsn, "brain_eval_log", failed_run)
    report = verified(admin.info.dsn, held)
    assert kinds(report) == [("entry_changed", "brain_eval_log", failed_run, ())]
    assert report.findings[0].entry == entry and report.findings[0].block == 1


def test_a_decision_rewritten_with_its_entry_and_block_is_caught_by_the_held_digest(admin, failed_run):
    held = sealed_digest(admin)
    rewrite(admin, "brain_eval_log", "decision = 'pass'", "decision = 'fail'")
    rejournal(admin, admin.info.dsn, "brain_eval_log", failed_run)
    reseal(admin, admin.info.dsn, 1)
    # Without a digest kept outside, a rewrite of everything down to the newest block is not seen
    # (docs/ledger.md, "What verify cannot prove")...
    assert verified(admin.info.dsn).verified
    # ...the held digest catches it, and re-deriving the decision names the column.
    report = verified(admin.info.dsn, held, recompute=True)
    assert [(f.kind, f.block, f.table, f.key, f.columns) for f in report.findings] == [
        ("digest_mismatch", 1, None, None, ()), ("digest_mismatch", 1, None, None, ()),
        ("recomputed", None, "brain_eval_log", failed_run, ("decision",))]


def test_a_deleted_question_row_is_caught(admin, failed_run):
    held = sealed_digest(admin)
    key = admin.execute("SELECT evalledger.journal_key_v1(q) FROM evalledger.brain_eval_question_score q "
                        "WHERE question_id = 'EVAL-Q02'").fetchone()[0]
    with triggers_lifted(admin, "brain_eval_question_score"):
        admin.execute("SET session_replication_role = replica")  # the foreign keys of its trail, skipped
        admin.execute("DELETE FROM evalledger.brain_eval_question_score WHERE question_id = 'EVAL-Q02'")
        admin.execute("RESET session_replication_role")
    assert kinds(verified(admin.info.dsn, held)) == [("row_gone", "brain_eval_question_score", key, ())]


def test_a_row_inserted_with_the_triggers_off_is_caught(admin, failed_run):
    held = sealed_digest(admin)
    with triggers_lifted(admin, "target"):
        admin.execute("INSERT INTO evalledger.target (target_id, kind, display_name) VALUES ('AGT-999', 'brain', 'x')")
    assert kinds(verified(admin.info.dsn, held)) == [("row_unjournalled", "target", '{"target_id":"AGT-999"}', ())]


def test_two_entries_reordered_are_caught(admin, failed_run):
    held = sealed_digest(admin)
    first, second = (r[0] for r in admin.execute(
        "SELECT entry_id FROM evalledger.ledger_journal WHERE table_name = 'brain_eval_question_score' "
        "ORDER BY entry_id LIMIT 2"))
    with triggers_lifted(admin, "ledger_journal"):  # each takes the other's place (ids are GENERATED ALWAYS)
        admin.execute("UPDATE evalledger.ledger_journal j SET table_name = o.table_name, operation = o.operation, "
                      "row_key = o.row_key, rows_root = o.rows_root, column_fingerprints = o.column_fingerprints, "
                      "txid = o.txid, recorded_at = o.recorded_at FROM evalledger.ledger_journal o "
                      "WHERE (j.entry_id, o.entry_id) IN ((%(a)s, %(b)s), (%(b)s, %(a)s))", {"a": first, "b": second})
    report = verified(admin.info.dsn, held)
    assert sorted((f.kind, f.entry) for f in report.findings) == [("entry_changed", first), ("entry_changed", second)]


def test_a_superuser_who_silences_the_journal_function_is_caught(admin, failed_run, runner, reviewer_id):
    held = sealed_digest(admin)
    with admin.transaction():
        admin.execute("SET LOCAL ROLE evalledger_code")
        admin.execute("CREATE OR REPLACE FUNCTION evalledger.journal_row_v2() RETURNS trigger "
                      "LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$BEGIN RETURN NULL; END$$")
    admin.execute("INSERT INTO evalledger.target (target_id, kind, display_name) VALUES ('AGT-998', 'bot', 'quiet')")
    report = verified(admin.info.dsn, held)
    assert kinds(report) == [("code_changed", None, None, ()), ("row_unjournalled", "target", '{"target_id":"AGT-998"}', ())]
    assert report.findings[0].line() == "code_changed: function evalledger.journal_row_v2() was changed since held.json was taken"


def test_an_untouched_ledger_verifies_with_every_decision_recomputed(admin, failed_run, runner, reviewer_id):
    record_run(runner, reviewer_id, count=4)
    report = verified(admin.info.dsn, sealed_digest(admin), recompute=True)
    assert report.verified and report.unsealed == 0 and report.blocks == 1 and report.digests == 1
    tables = [t for (t,) in admin.execute(
        "SELECT relname FROM pg_class WHERE relnamespace = 'evalledger'::regnamespace AND relkind IN ('r', 'p') "
        "AND NOT relispartition AND NOT evalledger.journal_exempt_v1(relname::text)")]
    assert report.rows == sum(admin.execute(f"SELECT count(*) FROM evalledger.{t}").fetchone()[0] for t in tables)


# -- --recompute: a rewrite caught even where the journal was rebuilt to match --------------------------
def test_recompute_catches_what_a_rebuilt_journal_hides(admin, runner, reviewer_id, failed_run):
    from tests.db.test_takes_quality_db import DIMS, PANEL, start_run, verdict

    tq = start_run(runner)
    for model in PANEL:
        verdict(runner, tq, model)
    runner.execute("SELECT evalledger.takes_quality_complete_v1(%s)", (tq,))
    seal(admin)
    question = admin.execute("SELECT evalledger.journal_key_v1(q) FROM evalledger.brain_eval_question_score q "
                             "WHERE question_id = 'EVAL-Q01'").fetchone()[0]
    rewrite(admin, "brain_eval_log", "decision = 'pass', aggregated_scores = aggregated_scores || "
                                     "'{\"hallucination_rate\": 0}'", "decision = 'fail'")
    rewrite(admin, "brain_eval_question_score", "question_passed = true", "question_id = 'EVAL-Q01'")
    rewrite(admin, "eval_takes_quality_runs", "receipt_json = jsonb_set(receipt_json, '{verdict}', '\"fail\"')",
            "id = %s", (tq,))
    for table, key in (("brain_eval_log", failed_run), ("brain_eval_question_score", question),
                       ("eval_takes_quality_runs", f'{{"id":{tq}}}')):
        rejournal(admin, admin.info.dsn, table, key)
    reseal(admin, admin.info.dsn, 1)
    assert verified(admin.info.dsn).verified  # the journal and the blocks were rebuilt to match
    report = verified(admin.info.dsn, recompute=True)
    assert sorted((f.table, f.key, f.columns) for f in report.findings) == [
        ("brain_eval_log", failed_run, ("aggregated_scores",)), ("brain_eval_log", failed_run, ("decision",)),
        ("brain_eval_question_score", question, ("question_passed",)),
        ("eval_takes_quality_runs", f'{{"id":{tq}}}', ("receipt_json",))]
    decision = next(f for f in report.findings if f.columns == ("decision",))
    assert decision.line() == f'recomputed: brain_eval_log {failed_run}: decision is "pass", but its inputs decide "fail"'


def test_recompute_agrees_with_every_suites_completion(admin, runner, reviewer_id):
    """An honest ledger of every suite recomputes clean: the entry points re-derive exactly what the
    triggers stored (work-quality's means and note included, which its trigger computes inline)."""
    from tests.db.test_takes_quality_db import PANEL as TQ_PANEL, start_run, verdict
    from tests.db.test_work_quality_db import judged, reply, start, verdict as wq_verdict

    record_run(runner, reviewer_id, count=3)
    record_run(runner, reviewer_id, count=3, bend=hallucinating)
    tq = start_run(runner)
    for model, score in zip(TQ_PANEL, (8, 6, 9)):
        verdict(runner, tq, model, {d: score for d in ("accuracy", "attribution", "weight_calibration",
                                                        "kind_classification", "signal_density")})
    runner.execute("SELECT evalledger.takes_quality_complete_v1(%s)", (tq,))
    judged(runner, "r1", {"openai:gpt-4o": 0.7, "anthropic:claude-opus-4-7": 0.9})
    judged(runner, "r2", {"openai:gpt-4o": 0.4, "anthropic:claude-opus-4-7": reply(0.6, confidence=3)})
    assert admin.execute("SELECT count(*) FROM evalledger.eval_work_quality_snapshots WHERE comparison IS NOT NULL"
                         ).fetchone()[0] == 1
    assert admin.execute("SELECT * FROM evalledger.ledger_recompute_v3()").fetchall() == []


# -- retention is not tampering ----------------------------------------------------------------------------
def aged_before_sealing(admin, run_id, years: int = 8) -> None:
    """The run's rows recorded `years` ago: their tier clocks rewritten as the retention tests do it (the
    journal off for that transaction), and every entry not sealed yet dated as far back, so that the
    journal, which verify ages each deletion by, says so too."""
    from tests.db.test_retention import set_run_clock

    with admin.transaction():
        set_run_clock(admin, run_id, f"now() - interval '{years} years'")
    age_unsealed(admin, f"{years} years")


def test_a_retention_purge_verifies_clean(admin, runner, reviewer_id):
    from tests.conftest import capture_partition_ago
    from tests.db.test_retention import purge_committed

    old = record_run(runner, reviewer_id, count=3).eval_run_id
    kept = record_run(runner, reviewer_id, count=3).eval_run_id
    hold = admin.execute("INSERT INTO evalledger.legal_hold (eval_run_id, reason) VALUES (%s, 'closed matter') "
                         "RETURNING hold_id", (old,)).fetchone()[0]
    admin.execute("INSERT INTO evalledger.legal_hold_release (hold_id, reason) VALUES (%s, 'matter closed')", (hold,))
    month = capture_partition_ago(admin, "8 years")
    admin.execute("INSERT INTO evalledger.eval_candidates (tool_name, query, vector_enabled, expansion_applied, "
                  "latency_ms, remote, capture_key, created_at) SELECT 'query', 'old ' || g, true, false, 1.5, false, "
                  "gen_random_uuid(), %s::date + interval '1 day' FROM generate_series(1, 3) g", (month,))
    aged_before_sealing(admin, old)
    held = sealed_digest(admin)
    purged = purge_committed(admin)
    assert {p[0] for p in purged} >= {"brain_eval_log", "brain_eval_question_score", "legal_hold",
                                      "eval_candidates", "eval_candidate_keys"}
    seal(admin)
    report = verified(admin.info.dsn, held + [("after.json", take_digest(admin))], recompute=True)
    assert report.verified, [f.line() for f in report.findings]
    assert admin.execute("SELECT count(*) FROM evalledger.brain_eval_log WHERE eval_run_id = %s", (old,)).fetchone()[0] == 0
    assert admin.execute("SELECT count(*) FROM evalledger.brain_eval_log WHERE eval_run_id = %s", (kept,)).fetchone()[0] == 1
    # The purge's deletes are journal entries of their own (the released hold's, by its cascade, too).
    deleted = dict(admin.execute("SELECT table_name, sum(row_count) FROM evalledger.ledger_journal "
                                 "WHERE operation = 'DELETE' GROUP BY 1").fetchall())
    assert deleted["brain_eval_question_score"] == 3 and deleted["legal_hold_release"] == 1
    assert deleted["eval_candidate_keys"] == 3 and "eval_candidates" not in deleted  # a dropped partition


def test_verify_knows_every_cascade_the_purge_deletes_by(admin):
    """A row deleted by ON DELETE CASCADE is not in the purge log: verify explains it by its parent's purge
    (verify.CASCADES). A cascade added later, and not to CASCADES, fails here before it fails a purge."""
    from evalledger.ledger.verify import CASCADES

    cascades = dict(admin.execute(
        "SELECT c.conrelid::regclass::text, c.confrelid::regclass::text FROM pg_constraint c "
        "WHERE c.contype = 'f' AND c.confdeltype = 'c' AND c.connamespace = 'evalledger'::regnamespace "
        "AND c.conparentid = 0 AND c.conrelid IN (SELECT rel FROM evalledger.journal_tables_v1())").fetchall())
    assert {child.removeprefix("evalledger."): parent.removeprefix("evalledger.")
            for child, parent in cascades.items()} == CASCADES


def test_a_reference_shown_purged_with_its_question_verifies_clean(admin, dsn, reviewers, connect_as):
    from evalledger.suites.brain_eval import reviewing, store
    from evalledger.suites.brain_eval.demo import open_demo_run, register_demo
    from tests.conftest import REVIEWER_ROLE
    from tests.db.test_retention import HORIZON, purge_as_retention, set_run_clock
    from tests.db.test_review_db import NUMBERS, QUESTION, shown_rows

    register_demo(dsn)
    run_id, _ = open_demo_run(dsn, REVIEWER_ROLE)
    reviewer = connect_as(REVIEWER_ROLE)
    store.score_question(reviewer, run_id, QUESTION, NUMBERS)
    reviewing.show_reference(reviewer, run_id, QUESTION)
    age_unsealed(admin, "7 years 2 days")  # the journal's times, which verify ages each deletion by
    held = sealed_digest(admin)
    with admin.transaction():
        set_run_clock(admin, run_id, f"{HORIZON} - interval '1 day'")
        purge_as_retention(admin)
    assert shown_rows(admin, run_id) == []
    assert admin.execute("SELECT sum(row_count) FROM evalledger.ledger_journal WHERE table_name = "
                         "'brain_eval_reference_shown' AND operation = 'DELETE'").fetchone()[0] == 1
    seal(admin)
    report = verified(dsn, held + [("after.json", take_digest(admin))])
    # The tier clocks were rewritten with the journal off (as the retention tests age a run), so the
    # run's rows differed from their entries until the purge took them: nothing is left to differ.
    assert report.verified, [f.line() for f in report.findings]


def test_a_delete_outside_the_purge_is_caught_though_the_journal_saw_it(admin, failed_run):
    held = sealed_digest(admin)
    key = admin.execute("SELECT evalledger.journal_key_v1(q) FROM evalledger.brain_eval_question_score q "
                        "WHERE question_id = 'EVAL-Q03'").fetchone()[0]
    with triggers_lifted(admin, "brain_eval_question_score", only="%_00_append_only"):
        admin.execute("SET session_replication_role = replica")
        admin.execute("DELETE FROM evalledger.brain_eval_question_score WHERE question_id = 'EVAL-Q03'")
        admin.execute("RESET session_replication_role")
    seal(admin)
    assert kinds(verified(admin.info.dsn, held)) == [("deleted_outside_purge", "brain_eval_question_score", key, ()),
                                                     ("deleted_too_young", "brain_eval_question_score", key, ())]


# -- the seal: never past an entry still in flight, and never in a writer's way ---------------------------
# Seals here wait a few seconds (as the CLI's do): transaction ids are the cluster's, and the test
# server makes databases for other tests meanwhile, each a transaction older than the seal.
def insert_target(conn, target_id: str) -> None:
    conn.execute("INSERT INTO evalledger.target (target_id, kind, display_name) VALUES (%s, 'bot', 'x')", (target_id,))


def entry_of(admin, target_id: str) -> int:
    return latest_entry(admin, "target", f'{{"target_id":"{target_id}"}}')


def test_a_seal_never_seals_past_an_entry_that_could_still_commit_below_it(admin, dsn):
    seal(admin)
    with psycopg.connect(dsn) as early, psycopg.connect(dsn, autocommit=True) as late:
        insert_target(early, "AGT-E1")  # a lower entry id, not committed
        insert_target(late, "AGT-L1")  # a higher one, committed
        sealed = seal(admin, wait_seconds=0.2)
        assert sealed["block"] is None and sealed["held_by"] is not None and sealed["unsealed"] == 1
        early.commit()
    sealed = seal(admin)
    assert sealed["entries"] == 2 and sealed["first_entry"] == entry_of(admin, "AGT-E1") < entry_of(admin, "AGT-L1")
    assert verified(admin.info.dsn).verified


def test_an_entry_rolled_back_leaves_a_gap_the_seal_passes(admin, dsn):
    with psycopg.connect(dsn) as gone:
        insert_target(gone, "AGT-R1")
        gone.rollback()
    insert_target(admin, "AGT-R2")
    assert seal(admin)["block"] == 1
    assert verified(admin.info.dsn).verified


def test_writers_never_wait_for_a_seal_that_waits(admin, dsn):
    seal(admin)
    with psycopg.connect(dsn) as open_txn, psycopg.connect(dsn) as sealer, psycopg.connect(dsn, autocommit=True) as writer:
        insert_target(open_txn, "AGT-W0")  # holds the seal back
        done = {}
        thread = threading.Thread(target=lambda: done.update(s=sealer.execute(
            "SELECT * FROM evalledger.ledger_seal_v1(3)").fetchone()))
        thread.start()
        time.sleep(0.5)  # the seal holds the block table's lock and waits for open_txn
        writer.execute("SET lock_timeout = '500ms'")
        started = time.monotonic()
        insert_target(writer, "AGT-W1")
        assert time.monotonic() - started < 0.5
        thread.join()
        sealer.commit()
        open_txn.commit()
    assert done["s"][-1] is not None  # held_by: it waited its three seconds, then sealed what was final
    seal(admin)
    assert verified(admin.info.dsn).verified


def test_two_seals_queue_and_chain(admin, dsn):
    insert_target(admin, "AGT-S1")
    with psycopg.connect(dsn) as first, psycopg.connect(dsn) as second:
        assert first.execute("SELECT block_id FROM evalledger.ledger_seal_v1(5)").fetchone()[0] == 1
        insert_target(admin, "AGT-S2")
        answer = {}
        thread = threading.Thread(target=lambda: answer.update(b=second.execute(
            "SELECT block_id FROM evalledger.ledger_seal_v1(5)").fetchone()[0]))
        thread.start()
        time.sleep(0.3)
        assert thread.is_alive()  # waiting for the first seal's lock
        first.commit()
        thread.join()
        second.commit()
    assert answer["b"] == 2
    previous, block_hash = admin.execute("SELECT (SELECT previous_hash FROM evalledger.ledger_block WHERE block_id = 2), "
                                         "(SELECT block_hash FROM evalledger.ledger_block WHERE block_id = 1)").fetchone()
    assert previous == block_hash
    assert verified(admin.info.dsn).verified


def test_a_seal_under_an_old_snapshot_is_refused(admin, dsn):
    with psycopg.connect(dsn) as conn:
        conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
        with pytest.raises(errors.InvalidTransactionState, match="sealed under READ COMMITTED"):
            conn.execute("SELECT * FROM evalledger.ledger_seal_v1(0)")


# -- the database's Merkle tree is RFC 6962's ---------------------------------------------------------------
def test_the_merkle_roots_are_rfc_6962s(admin):
    """The one Merkle root every seal and batch takes (ledger_merkle_root_v2, since 0111 the seal's
    too): RFC 6962's tree, as check.py computes it."""
    for n in (0, 1, 2, 3, 5, 7, 8, 9, 31, 33, 1000, 1001):
        leaves = [check.leaf_hash(i.to_bytes(2, "big")) for i in range(n)]
        assert admin.execute("SELECT evalledger.ledger_merkle_root_v2(%s::bytea[])", (leaves,)).fetchone()[0] \
            == check.merkle_root(leaves), n
    seal = admin.execute("SELECT prosrc FROM pg_proc WHERE oid = 'evalledger.ledger_seal_v1(double precision)'::regprocedure")
    assert "ledger_merkle_root_v2(leaves)" in seal.fetchone()[0]


# -- captured queries: one entry per batch and partition ------------------------------------------------
def capture_batch(conn, n: int, month_back: int = 0) -> None:
    conn.execute("INSERT INTO evalledger.eval_candidates (tool_name, query, vector_enabled, expansion_applied, latency_ms, "
                 "remote, capture_key, created_at) SELECT 'search', 'q ' || g, false, false, g * 1.25, true, "
                 "gen_random_uuid(), now() - make_interval(days => %s * 31) FROM generate_series(1, %s) g",
                 (month_back, n))


def test_a_capture_batch_is_one_entry_and_each_of_its_rows_still_checks_alone(admin):
    from tests.conftest import capture_partition_ago

    month = capture_partition_ago(admin, "31 days")
    with admin.transaction():
        capture_batch(admin, 500)
        capture_batch(admin, 3, month_back=1)
    entries = admin.execute("SELECT table_name, row_count FROM evalledger.ledger_journal "
                            "WHERE table_name LIKE 'eval_candidate%' ORDER BY entry_id").fetchall()
    assert entries == [("eval_candidates", 500), ("eval_candidate_keys", 500),
                       ("eval_candidates", 3), ("eval_candidate_keys", 3)]
    held = sealed_digest(admin)
    assert verified(admin.info.dsn, held).verified
    one = admin.execute("SELECT evalledger.journal_key_v1(c) FROM evalledger.eval_candidates c "
                        "WHERE query = 'q 250'").fetchone()[0]
    partition = "eval_candidates_p" + admin.execute("SELECT to_char(now() AT TIME ZONE 'UTC', 'YYYYMM')").fetchone()[0]
    with triggers_lifted(admin, "eval_candidates", partition):  # a partition's row triggers are its own clones
        admin.execute(f"UPDATE evalledger.{partition} SET query = 'q 25O' WHERE query = 'q 250'")
    assert kinds(verified(admin.info.dsn, held)) == [("row_changed", "eval_candidates", one, ())]
