"""verify holds every deletion to the retention policy and every UPDATE to the ledger's rules, reading
both from the journal (issue 35, item 1), as a real superuser would try to pass them off.

A deletion is tampering unless the row was past the 7-year horizon, counted from its first journal
entry (a run's rows from their run's) to the deleting transaction's, under no legal hold placed and
not released by then; the purge log, which the superuser can write to match, is a claim, not an
excuse. An UPDATE entry the guards never admit (any column of an append-only row; a run's row after
its completion; a reviewer's number after its run completed) is named with table, key and column.
"""

from __future__ import annotations

import psycopg
import pytest
from psycopg import sql

from evalledger.core import db
from evalledger.ledger import policy
from tests.builders import BRAIN_PROMPTS, record_run, register_prompt
from tests.cli import run_cli
from tests.ledger_forge import age_unsealed, kinds, seal, set_triggers, take_digest, verified

# The run's tables, children first (as retention_purge_v2 deletes them), and the by-month panel.
RUN_TABLES = ["brain_eval_judge_suggestion", "brain_eval_harness_answer", "brain_eval_review_entry",
              "brain_eval_suggestion_shown", "brain_eval_run_review", "brain_eval_run_closure",
              "brain_eval_run_uncertainty", "brain_eval_trend", "brain_eval_reference_shown", "brain_eval_question_score", "brain_eval_harness_run", "legal_hold",
              "brain_eval_log"]
BY_MONTH = sorted(policy.BY_MONTH)


@pytest.fixture(autouse=True)
def registered_prompts(admin):
    for brain, prompt in BRAIN_PROMPTS.items():
        register_prompt(admin, brain, prompt)


@pytest.fixture
def demo_failing_run(dsn, admin, tmp_path, monkeypatch):
    """The brain-eval demo's completed run (the database decided fail), sealed."""
    from evalledger.suites.brain_eval.demo import brain_eval_demo

    monkeypatch.setenv("EVALLEDGER_HOME", str(tmp_path))
    db.use_database_url(dsn)
    decided = brain_eval_demo(dsn, echo=lambda *_, **__: None)
    assert decided.decision == "fail"
    return str(decided.eval_run_id)


def digest_file(admin, tmp_path, name="held.json") -> tuple[str, dict]:
    """Seal, then a digest kept outside (as a file, for the CLI) and as verify's (name, digest)."""
    from evalledger.ledger import digest

    seal(admin)
    taken = take_digest(admin)
    (tmp_path / name).write_text(digest.dump(taken))
    return str(tmp_path / name), taken


def forge_purge(dsn: str, admin, run_id: str, journal: bool) -> dict[str, int]:
    """The superuser's cover story, statement for statement: the run's triggers lifted in pg_trigger (only the
    append-only guards, or every one, the journal's included), committed; then, on a fresh backend, the run's
    rows deleted, the by-month panel recounted, and purge-log rows written to match what was deleted (inside a
    purge marker, as the purge writes them). What was deleted, by table."""
    spare = "%\\_90\\_journal%" if journal else ""
    set_triggers(admin, RUN_TABLES + BY_MONTH, "D", but=spare)
    try:
        with psycopg.connect(dsn) as superuser:
            superuser.execute("INSERT INTO evalledger.retention_purge_marker (txid) VALUES (txid_current())")
            superuser.execute("SET session_replication_role = replica" if not journal else "SELECT 1")
            gone = {}
            for table in RUN_TABLES:
                gone[table] = superuser.execute(sql.SQL("DELETE FROM evalledger.{} WHERE eval_run_id = %s").format(
                    sql.Identifier(table)), (run_id,)).rowcount
            for table in BY_MONTH:  # the by-month counts recounted without the run: nothing there shows it
                superuser.execute(sql.SQL("DELETE FROM evalledger.{}").format(sql.Identifier(table)))
            superuser.execute("SELECT evalledger.brain_eval_by_month_add_v1(ARRAY(SELECT eval_run_id FROM "
                              "evalledger.brain_eval_log WHERE completed_at IS NOT NULL))")
            superuser.execute("RESET session_replication_role")
            for table, count in gone.items():
                if count:
                    superuser.execute("INSERT INTO evalledger.retention_purge_log (table_name, row_count, eval_run_id) "
                                      "VALUES (%s, %s, %s)", (table, count, run_id))
            superuser.execute("DELETE FROM evalledger.retention_purge_marker WHERE txid = txid_current()")
            superuser.commit()
    finally:
        set_triggers(admin, RUN_TABLES + BY_MONTH, "A")
    return {t: n for t, n in gone.items() if n}


@pytest.mark.parametrize("journal", [False, True], ids=["journal off", "journal left on"])
def test_a_failing_run_deleted_and_explained_as_a_purge_is_caught(admin, dsn, demo_failing_run, tmp_path, journal):
    path, held = digest_file(admin, tmp_path)
    gone = forge_purge(dsn, admin, demo_failing_run, journal)
    assert gone["brain_eval_log"] == 1 and gone["brain_eval_question_score"] == 30
    assert admin.execute("SELECT * FROM evalledger.journal_coverage_v2()").fetchall() == []  # all back as it was
    seal(admin)
    run_key = f'{{"eval_run_id":"{demo_failing_run}"}}'
    report = verified(dsn, [("held.json", held)], recompute=True)
    found = {(kind, table) for kind, table, key, _ in kinds(report)}
    if journal:  # every row's deletion is journalled and "explained" by the purge log: the age is not the policy's
        assert ("deleted_too_young", "brain_eval_log", run_key, ()) in kinds(report)
        assert {t for kind, t in found if kind == "deleted_too_young"} >= set(gone)
        line = next(f.line() for f in report.findings if f.table == "brain_eval_log")
        assert line.startswith(f"deleted_too_young: brain_eval_log {run_key}: was deleted by transaction ")
        assert "days from its first journal entry" in line and "keeps it 7 years" in line
    else:  # nothing journalled the deletion: each row is gone without an entry that deleted it
        assert ("row_gone", "brain_eval_log", run_key, ()) in kinds(report)
        assert {t for kind, t in found if kind == "row_gone"} >= set(gone)
    result = run_cli("ledger", "verify", "--digest", path, env={"DATABASE_URL": dsn})
    assert result.code == 1, result.out + result.err
    assert f"brain_eval_log {run_key}" in result.out


@pytest.mark.parametrize("scope", ["run", "range"])
def test_a_deletion_under_a_legal_hold_is_caught_though_the_row_was_old(admin, dsn, connect_as, reviewer_id, scope):
    """A run past the horizon, but held (its run, or a range of time holding its clock): its deletion with the
    journal on (the guards lifted) is named with the hold."""
    run_id = str(record_run(connect_as("evalledger_runner"), reviewer_id, count=2).eval_run_id)
    age_unsealed(admin, "8 years")
    if scope == "run":
        hold = admin.execute("INSERT INTO evalledger.legal_hold (eval_run_id, reason) VALUES (%s, 'matter open') "
                             "RETURNING hold_id", (run_id,)).fetchone()[0]
        held_as = f"run {run_id}"
    else:  # a range around the run's first journal entry, 8 years back
        hold = admin.execute("INSERT INTO evalledger.legal_hold (held_from, held_to, reason) VALUES "
                             "(now() - interval '8 years 1 day', now() - interval '8 years' + interval '1 day', "
                             "'matter open') RETURNING hold_id").fetchone()[0]
        held_as = " UTC to "
    seal(admin)
    held = [("held.json", take_digest(admin))]
    tables = [t for t in RUN_TABLES if t != "legal_hold"]
    set_triggers(admin, tables, "D", but="%\\_90\\_journal%")
    try:
        with psycopg.connect(dsn) as superuser:
            superuser.execute("SET session_replication_role = replica")  # the hold's foreign key, skipped
            for table in tables:
                superuser.execute(sql.SQL("DELETE FROM evalledger.{} WHERE eval_run_id = %s").format(
                    sql.Identifier(table)), (run_id,))
            superuser.commit()
    finally:
        set_triggers(admin, tables, "A")
    seal(admin)
    report = verified(dsn, held)
    line = next(f.line() for f in report.findings if f.table == "brain_eval_log" and f.kind == "deleted_under_hold")
    assert f"while legal hold {hold} (" in line and held_as in line and line.endswith(" covered it")


@pytest.mark.parametrize("early", [False, True], ids=["past the horizon", "one day early"])
def test_a_purge_past_the_horizon_verifies_clean_and_one_day_early_is_caught(admin, dsn, connect_as, reviewer_id,
                                                                           early):
    """The same purge, by the retention role: the rows' tier clocks past the horizon (the retention tests' way of
    ageing a run), and the journal that wrote them 7 years and a day ago, or 7 years less a day."""
    from tests.db.test_retention import purge_committed, set_run_clock

    runner = connect_as("evalledger_runner")
    old = str(record_run(runner, reviewer_id, count=3).eval_run_id)
    with admin.transaction():
        set_run_clock(admin, old, "now() - interval '8 years'")
    age_unsealed(admin, "7 years - 1 day" if early else "7 years 1 day")
    kept = str(record_run(runner, reviewer_id, count=2).eval_run_id)
    seal(admin)
    held = [("held.json", take_digest(admin))]
    purged = purge_committed(admin)
    assert {(p[0], str(p[2])) for p in purged} >= {("brain_eval_log", old), ("brain_eval_question_score", old)}
    seal(admin)
    report = verified(dsn, held + [("after.json", take_digest(admin))])
    if not early:
        assert report.verified, [f.line() for f in report.findings]
    else:
        run_key = f'{{"eval_run_id":"{old}"}}'
        assert ("deleted_too_young", "brain_eval_log", run_key, ()) in kinds(report)
        assert {f.table for f in report.findings} >= {"brain_eval_log", "brain_eval_question_score",
                                                      "brain_analysis_log"}
        assert {f.kind for f in report.findings} == {"deleted_too_young"}
        assert all(kept not in (f.key or "") for f in report.findings)


def test_a_reviewers_number_changed_after_completion_is_caught_by_its_column(admin, dsn, connect_as, reviewer_id):
    """The journal records the UPDATE like any other; the ledger's rules never allow it: named with the column."""
    run_id = str(record_run(connect_as("evalledger_runner"), reviewer_id, count=2).eval_run_id)
    seal(admin)
    held = [("held.json", take_digest(admin))]
    key = admin.execute("SELECT evalledger.journal_key_v1(q) FROM evalledger.brain_eval_question_score q "
                        "WHERE eval_run_id = %s ORDER BY question_id LIMIT 1", (run_id,)).fetchone()[0]
    set_triggers(admin, ["brain_eval_question_score", "target"], "D", but="%\\_90\\_journal%")
    try:
        with psycopg.connect(dsn, autocommit=True) as superuser:
            superuser.execute("UPDATE evalledger.brain_eval_question_score SET reviewer_comments = 'seen, fine' "
                              "WHERE question_score_id = (%s::jsonb ->> 'question_score_id')::uuid", (key,))
            superuser.execute("UPDATE evalledger.target SET display_name = 'renamed' WHERE target_id = 'AGT-901'")
    finally:
        set_triggers(admin, ["brain_eval_question_score", "target"], "A")
    seal(admin)
    report = verified(dsn, held)
    assert sorted(kinds(report)) == [("update_refused", "brain_eval_question_score", key, ("reviewer_comments",)),
                                     ("update_refused", "target", '{"target_id":"AGT-901"}', ("display_name",))]
    lines = sorted(f.line() for f in report.findings)
    assert "its run was completed by journal entry" in lines[0] and "target is append-only" in lines[1]


def test_the_horizon_verify_checks_is_the_databases(admin):
    assert admin.execute("SELECT evalledger.purge_horizon_v1() = make_interval(years => %s)",
                         (policy.HORIZON_YEARS,)).fetchone()[0]


def test_every_run_table_verify_knows_is_the_databases(admin):
    """policy.RUN_TABLES (the tables whose one UPDATE is a completion) and RUN_CLOCK (rows aged by their run's
    clock) against the catalog: a table added later with either shape fails here first."""
    completing = {r[0] for r in admin.execute(
        "SELECT tgrelid::regclass::text FROM pg_trigger WHERE tgfoid = 'evalledger.complete_once_v1'::regproc")}
    assert {t.removeprefix("evalledger.") for t in completing} == set(policy.RUN_TABLES)
    clocked = {r[0] for r in admin.execute(
        "SELECT c.relname FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid WHERE a.attname = 'run_created_at' "
        "AND c.relnamespace = 'evalledger'::regnamespace AND c.relkind IN ('r', 'p') AND NOT c.relispartition")}
    assert clocked == set(policy.RUN_CLOCK)


def test_every_suites_honest_ledger_verifies_clean(admin, dsn, connect_as, reviewer_id):
    """Completions of every suite, reviews, holds placed and released: every UPDATE the rules allow, none named."""
    from tests.db.test_takes_quality_db import PANEL as TQ_PANEL, start_run, verdict
    from tests.db.test_work_quality_db import judged, reply

    runner = connect_as("evalledger_runner")
    record_run(runner, reviewer_id, count=3)
    record_run(runner, reviewer_id, count=3, bend=lambda n, row: row.update(hallucinations_detected=1))
    tq = start_run(runner)
    for model, score in zip(TQ_PANEL, (8, 6, 9)):
        verdict(runner, tq, model, {d: score for d in ("accuracy", "attribution", "weight_calibration",
                                                        "kind_classification", "signal_density")})
    runner.execute("SELECT evalledger.takes_quality_complete_v1(%s)", (tq,))
    judged(runner, "r1", {"openai:gpt-4o": 0.7, "anthropic:claude-opus-4-7": 0.9})
    judged(runner, "r2", {"openai:gpt-4o": 0.4, "anthropic:claude-opus-4-7": reply(0.6, confidence=3)})
    hold = admin.execute("INSERT INTO evalledger.legal_hold (target_id, reason) VALUES ('AGT-901', 'a matter') "
                         "RETURNING hold_id").fetchone()[0]
    admin.execute("INSERT INTO evalledger.legal_hold_release (hold_id, reason) VALUES (%s, 'closed')", (hold,))
    seal(admin)
    report = verified(dsn, [("held.json", take_digest(admin))], recompute=True)
    assert report.verified, [f.line() for f in report.findings]
    updates = admin.execute("SELECT count(*) FROM evalledger.ledger_journal WHERE operation = 'UPDATE'").fetchone()[0]
    assert updates >= 4  # the completions at least, each allowed
