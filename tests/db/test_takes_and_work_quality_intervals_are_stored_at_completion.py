"""Issue 36, item 3: each takes-quality run's and each work-quality snapshot's uncertainty is stored
once, when it completes (eval_takes_quality_run_uncertainty, eval_work_quality_snapshot_uncertainty;
migration 0153), computed by the database from the run's stored verdict rows and rubric or the
snapshot's stored document, as brain-eval's is (migration 0148): what `takes-quality show`, the
receipt's optional stderr and ci95, `snapshot show RUN_ID`, the intervals views
(takes_quality_intervals_v1, work_quality_intervals_v1) and the panels' error bars read, instead of
running the statistics functions for every run at every read. The stored object is exactly what
takes_quality_uncertainty_v1 (work_quality_uncertainty_v1) gives; no role supplies or alters it (the superuser's UPDATE
and DELETE are refused too); a run completed before the migration gets its row from the migration; it
ages with its run (the purge takes it with the run, a hold that keeps the run keeps it); the recompute
(ledger_recompute_v3, and `ledger verify --recompute` with the package's code) re-derives it and names a
rewritten one. Tried as the real logins (docs/guards.md, "Verdicts with their uncertainty")."""

from __future__ import annotations

import json

import pytest
from psycopg import errors

from evalledger.core.paths import database_root
from evalledger.suites.takes_quality import store as takes_store
from tests.db.insider_logins import LOGINS, logins, refused  # noqa: F401 (fixture)
from tests.db.test_retention import purge_committed, set_clock
from tests.cli import run_cli
from tests.db.test_takes_quality_db import DIMS, PANEL, start_run, verdict
from tests.db.test_work_quality_db import GO_HISTORY, PANEL as WQ_PANEL, go_document, import_doc, judged
from tests.db.test_work_quality_db import start as wq_start, verdict as wq_verdict, reply as wq_reply
from tests.ledger_forge import age_unsealed, kinds, seal, take_digest, triggers_lifted, verified

pytestmark = pytest.mark.db

TQ = "eval_takes_quality_run_uncertainty"
WQ = "eval_work_quality_snapshot_uncertainty"
UTC_NOW = "timezone('UTC', now())"
OLD = f"timezone('UTC', {UTC_NOW} - interval '8 years')"


def takes_quality_run(runner, rerun: int, scores=((8, 7, 9), (7, 7, 8)), complete: bool = True,
                      target: str = "AGT-902") -> int:
    """A takes-quality run of target's takes judged by the panel: each cycle's judges at their scores, a
    little apart per dimension, so every interval has a width."""
    run = start_run(runner, rerun=rerun, target_id=target)
    for cycle, row in enumerate(scores, start=1):
        for model, score in zip(PANEL, row):
            verdict(runner, run, model, {d: min(10, score + k % 2) for k, d in enumerate(DIMS)}, cycle=cycle)
    if complete:
        runner.execute("SELECT evalledger.takes_quality_complete_v1(%s)", (run,))
    return run


def stored(admin, run) -> dict | None:
    found = admin.execute(f"SELECT uncertainty FROM evalledger.{TQ} WHERE run_id = %s", (run,)).fetchone()
    return found[0] if found else None


def computed(admin, run) -> dict:
    return admin.execute("SELECT coalesce(evalledger.takes_quality_uncertainty_v1(%s), '{}'::jsonb)",
                         (run,)).fetchone()[0]


def forge(admin, run, path: str, value) -> None:
    """The superuser rewrites the stored object past the guards (the journal lifted too)."""
    with admin.transaction(), triggers_lifted(admin, TQ):
        admin.execute(f"UPDATE evalledger.{TQ} SET uncertainty = jsonb_set(uncertainty, %s, %s) WHERE run_id = %s",
                      (path, json.dumps(value), run))


# -- takes-quality ---------------------------------------------------------------------------------
def test_a_takes_quality_run_stores_at_its_completion_exactly_what_the_statistics_function_gives(admin, logins):
    runner = logins("runner")
    runs = [takes_quality_run(runner, rerun=0), takes_quality_run(runner, rerun=1, scores=((9, 5, 7),))]
    open_run = takes_quality_run(runner, rerun=2, complete=False)
    assert stored(admin, open_run) is None  # nothing before completion
    with runner.transaction():  # stored in the completion's own transaction
        runner.execute("SELECT evalledger.takes_quality_complete_v1(%s)", (open_run,))
        assert runner.execute(f"SELECT count(*) FROM evalledger.{TQ} WHERE run_id = %s",
                              (open_run,)).fetchone()[0] == 1
    # A run cancelled before any verdict stores what the function gives it too: nothing measured.
    cancelled = start_run(runner, rerun=3, target_id="AGT-902")
    assert runner.execute("SELECT evalledger.eval_run_cancel_v1('takes-quality', %s, 'operator error')",
                          (cancelled,)).fetchone()[0]
    runner.execute("SELECT evalledger.takes_quality_complete_v1(%s)", (cancelled,))
    assert stored(admin, cancelled) == {}
    for run in [*runs, open_run]:
        assert stored(admin, run) == computed(admin, run) != {}, run
    whole = stored(admin, runs[0])
    assert set(whole) == {*DIMS, "overall"}
    # Held to the statistics functions themselves, from the verdict rows: the deciding (last) cycle's
    # judges, the overall their means over the dimensions.
    accuracy, overall = admin.execute("""
        SELECT (evalledger.mean_stderr_v1(array_agg((v.scores ->> 'accuracy')::float8 ORDER BY v.model))).stderr,
               (evalledger.mean_stderr_v1(array_agg(((v.scores ->> 'accuracy')::float8 + (v.scores ->> 'attribution')::float8
                    + (v.scores ->> 'weight_calibration')::float8 + (v.scores ->> 'kind_classification')::float8
                    + (v.scores ->> 'signal_density')::float8) / 5 ORDER BY v.model))).stderr
          FROM evalledger.eval_takes_quality_judge_verdicts v WHERE v.run_id = %s AND v.cycle = 2""",
                                     (runs[0],)).fetchone()
    assert whole["accuracy"]["stderr"] == pytest.approx(accuracy, rel=1e-12)
    assert whole["overall"]["stderr"] == pytest.approx(overall, rel=1e-12)
    assert whole["accuracy"]["calls"] == 6 and whole["accuracy"]["n"] == 3
    # The view reads the stored object, dimension by dimension, for each reader as before.
    for reader in ("auditor", "revops"):
        rows = logins(reader).execute("SELECT dimension, estimate, stderr, ci95_lo, ci95_hi, judges, between_call_variance, "
                                      "calls FROM evalledger.takes_quality_intervals_v1 WHERE run_id = %s",
                                      (runs[0],)).fetchall()
        assert {r[0]: r[1:] for r in rows} == {
            key: (u["estimate"], u["stderr"], u["ci95"][0], u["ci95"][1], u["n"], u.get("between_call_variance"),
                  u.get("calls")) for key, u in whole.items()}, reader


def test_every_reader_of_a_completed_runs_intervals_reads_the_stored_row(admin, logins):
    """Forged past the guards, the stored row is what show, the receipt's stderr and ci95, the view, the BI
    panels' queries and the plan read: none computes the intervals again. An open run's are computed."""
    runner = logins("runner")
    run = takes_quality_run(runner, rerun=0)
    open_run = takes_quality_run(runner, rerun=1, complete=False)
    forge(admin, run, "{accuracy,ci95}", [1.5, 9.5])
    forge(admin, run, "{overall,ci95}", [2.5, 8.5])
    forge(admin, run, "{accuracy,stderr}", 4.25)
    found = runner.execute(_query("takes_quality", "run_by_id"), {"run_id": run})
    names = [c.name for c in found.description]
    row = dict(zip(names, found.fetchone()))
    assert row["uncertainty"]["accuracy"]["ci95"] == [1.5, 9.5]
    assert row["receipt_json"]["scores"]["accuracy"]["ci95"] == [1.5, 9.5]
    assert row["receipt_json"]["scores"]["accuracy"]["stderr"] == 4.25
    receipt = admin.execute("SELECT receipt_json FROM evalledger.eval_takes_quality_runs WHERE id = %s", (run,)).fetchone()[0]
    assert takes_store.receipt_uncertainty(runner, run, receipt)["scores"]["accuracy"]["ci95"] == [1.5, 9.5]
    for reader in ("auditor", "revops"):
        conn = logins(reader)
        assert conn.execute("SELECT ci95_lo, ci95_hi FROM evalledger.takes_quality_intervals_v1 "
                            "WHERE run_id = %s AND dimension = 'accuracy'", (run,)).fetchone() == (1.5, 9.5)
        assert conn.execute(_query("bi", "panel_takes_quality_intervals"), {"run_ids": [run]}).fetchall() == [
            (run, 2.5, 8.5)]
        assert conn.execute(_query("bi", "takes_intervals"), {"run_id": run}).fetchall()  # the run's page
    # An open run has no stored row: show computes what its verdicts so far give.
    row = dict(zip(names, runner.execute(_query("takes_quality", "run_by_id"), {"run_id": open_run}).fetchone()))
    assert row["uncertainty"] == computed(admin, open_run) != {}


def _query(package: str, name: str) -> str:
    text = (database_root() / "sql" / package / "queries.sql").read_text()
    return text.split(f"-- name: {name}\n", 1)[1].split("\n-- name:", 1)[0]


@pytest.mark.parametrize("role", ["runner", "reviewer", "revops", "auditor", "owner", "agent", "retention"])
def test_no_role_supplies_or_alters_a_takes_quality_runs_uncertainty(admin, logins, role):
    runner = logins("runner")
    run = takes_quality_run(runner, rerun=0)
    other = takes_quality_run(runner, rerun=1, complete=False)
    conn = logins(role)
    made_up = json.dumps({"accuracy": {"estimate": 10, "stderr": 0, "ci95": [10, 10]}})
    for statement, params in (
            (f"INSERT INTO evalledger.{TQ} (run_id, uncertainty, run_created_at) VALUES (%s, %s, now())",
             (other, made_up)),
            (f"UPDATE evalledger.{TQ} SET uncertainty = %s WHERE run_id = %s", (made_up, run)),
            (f"DELETE FROM evalledger.{TQ} WHERE run_id = %s", (run,))):
        with refused(admin, errors.InsufficientPrivilege, rf"permission denied for (table {TQ}|schema evalledger)"):
            conn.execute(statement, params)
    assert stored(admin, run) == computed(admin, run)
    assert stored(admin, other) is None


def test_the_superuser_neither_rewrites_nor_deletes_a_takes_quality_runs_uncertainty(admin, logins):
    run = takes_quality_run(logins("runner"), rerun=0)
    for statement, says in (
            (f"UPDATE evalledger.{TQ} SET uncertainty = '{{}}' WHERE run_id = %s", rf"evalledger: {TQ} is append-only: UPDATE refused"),
            (f"DELETE FROM evalledger.{TQ} WHERE run_id = %s", rf"evalledger: {TQ} is append-only: DELETE refused")):
        with refused(admin, errors.InsufficientPrivilege, says):
            admin.execute(statement, (run,))
    with refused(admin, errors.UniqueViolation, r"duplicate key value violates unique constraint .*", f"{TQ}_pkey"):
        admin.execute(f"INSERT INTO evalledger.{TQ} (run_id, uncertainty, run_created_at) VALUES (%s, '{{}}', now())",
                      (run,))
    key = json.dumps({"run_id": run}, separators=(",", ":"))
    assert admin.execute("SELECT count(*) FROM evalledger.ledger_journal WHERE table_name = %s AND row_key = %s",
                         (TQ, key)).fetchone()[0] == 1


def test_the_recompute_rederives_a_takes_quality_runs_uncertainty_and_names_a_rewritten_one(admin, dsn, logins):
    runner = logins("runner")
    run = takes_quality_run(runner, rerun=0)
    takes_quality_run(runner, rerun=1, scores=((9, 5, 7),))
    assert admin.execute("SELECT count(*) FROM evalledger.ledger_recompute_v3()").fetchone()[0] == 0
    forge(admin, run, "{overall,ci95}", [7.9, 8.0])  # narrower bars
    key = json.dumps({"run_id": run}, separators=(",", ":"))
    assert admin.execute("SELECT table_name, row_key, column_name FROM evalledger.ledger_recompute_v3()").fetchall() == [
        (TQ, key, "uncertainty")]
    report = verified(dsn, recompute=True)  # the package's code, not the database's
    assert ("recomputed", TQ, key, ("uncertainty",)) in kinds(report)


def _backfill(table: str) -> str:
    """The migration's statement that stores the rows of the runs completed before it."""
    text = next((database_root() / "migrations").glob("0153.*.sql")).read_text()
    start = text.index(f"INSERT INTO {table} ")
    return text[start:text.index(";", start)]


def test_the_migration_stores_the_uncertainty_of_runs_completed_before_it(admin, logins):
    """A run completed before 0153 has no row until the migration's statement, run here as the migration runs
    it (the code role), gives it what its completion would have: the function's object, journalled as an INSERT."""
    runner = logins("runner")
    before, after = takes_quality_run(runner, rerun=0), takes_quality_run(runner, rerun=1, scores=((9, 5, 7),))
    # A ledger as it stood before 0153: the first run's row not there (the superuser, guards lifted).
    with admin.transaction(), triggers_lifted(admin, TQ):
        admin.execute(f"DELETE FROM evalledger.{TQ} WHERE run_id = %s", (before,))
    assert stored(admin, before) is None
    with admin.transaction():
        admin.execute("SET LOCAL ROLE evalledger_code")
        admin.execute("SET LOCAL search_path = evalledger, pg_temp")
        admin.execute(_backfill(TQ).replace("WHERE t.completed_at IS NOT NULL",
                                            f"WHERE t.completed_at IS NOT NULL AND t.id = {int(before)}"))
    assert stored(admin, before) == computed(admin, before) != {}
    assert stored(admin, after) == computed(admin, after)
    assert admin.execute("SELECT operation FROM evalledger.ledger_journal WHERE table_name = %s AND row_key = %s "
                         "ORDER BY entry_id DESC LIMIT 1",
                         (TQ, json.dumps({"run_id": before}, separators=(",", ":")))).fetchone()[0] == "INSERT"


def _age(admin, clock: str, run: int) -> None:
    set_clock(admin, "eval_takes_quality_runs", "created_at", clock, f"id = {int(run)}")
    set_clock(admin, "eval_takes_quality_judge_verdicts", "run_created_at", clock, f"run_id = {int(run)}")
    set_clock(admin, TQ, "run_created_at", clock, f"run_id = {int(run)}")


def _plan(conn, table: str) -> tuple:
    return next(r[1:5] for r in conn.execute("SELECT * FROM evalledger.retention_plan_v2()") if r[0] == table)


@pytest.mark.parametrize("held", [False, True])
def test_a_takes_quality_runs_uncertainty_ages_with_its_run(admin, logins, held):
    """Its tier clock is its run's: hot with it (every reader), past the horizon due with it, and the purge
    takes it with its run; a hold of the run's brain keeps both. The purge verifies clean."""
    runner, owner, auditor, revops = logins("runner"), logins("owner"), logins("auditor"), logins("revops")
    young = takes_quality_run(runner, rerun=0)
    seal(admin)
    old = takes_quality_run(runner, rerun=1, scores=((9, 5, 7),))
    with admin.transaction():
        _age(admin, OLD, old)
    age_unsealed(admin, "8 years")
    assert revops.execute(f"SELECT run_id FROM evalledger.{TQ} ORDER BY 1").fetchall() == [(young,)]  # hot only
    assert auditor.execute(f"SELECT run_id FROM evalledger.{TQ} ORDER BY 1").fetchall() == [(young,), (old,)]
    hold = owner.execute("INSERT INTO evalledger.legal_hold (target_id, reason) VALUES ('AGT-902', 'matter') "
                         "RETURNING hold_id").fetchone()[0] if held else None
    assert _plan(auditor, TQ) == ((1, 0, 0, 1) if held else (1, 0, 1, 0))
    digest = [("before.json", take_digest(admin))]
    purged = purge_committed(admin)
    assert ((TQ, 1, None, None) in purged) is not held
    assert (("eval_takes_quality_runs", 1, None, None) in purged) is not held
    assert [r for (r,) in admin.execute(f"SELECT run_id FROM evalledger.{TQ} ORDER BY 1")] == (
        [young, old] if held else [young])
    if held:  # released, the hold lets both go
        owner.execute("INSERT INTO evalledger.legal_hold_release (hold_id, reason) VALUES (%s, 'settled')", (hold,))
        purged = purge_committed(admin)
        assert (TQ, 1, None, None) in purged and ("eval_takes_quality_runs", 1, None, None) in purged
        assert [r for (r,) in admin.execute(f"SELECT run_id FROM evalledger.{TQ} ORDER BY 1")] == [young]
    seal(admin)
    report = verified(admin.info.dsn, digest + [("after.json", take_digest(admin))], recompute=True)
    assert report.verified and report.recomputed, [f.line() for f in report.findings]


# -- work-quality ----------------------------------------------------------------------------------
def wq_snapshot(runner, run_id: str, scores=(0.8, 0.55), name: str = "review-pr") -> int:
    """A completed work-quality snapshot judged by the panel, each judge at its score on every dimension."""
    judged(runner, run_id, dict(zip(WQ_PANEL, scores)), name=name)
    return runner.execute("SELECT snapshot_id FROM evalledger.eval_work_quality_snapshots WHERE run_id = %s "
                          "AND name = %s", (run_id, name)).fetchone()[0]


def wq_stored(admin, snapshot) -> dict | None:
    found = admin.execute(f"SELECT uncertainty FROM evalledger.{WQ} WHERE snapshot_id = %s", (snapshot,)).fetchone()
    return found[0] if found else None


def wq_computed(admin, snapshot) -> dict:
    return admin.execute("SELECT coalesce(evalledger.work_quality_uncertainty_v1(snapshot_json), '{}'::jsonb) "
                         "FROM evalledger.eval_work_quality_snapshots WHERE snapshot_id = %s", (snapshot,)).fetchone()[0]


def wq_forge(admin, snapshot, path: str, value) -> None:
    with admin.transaction(), triggers_lifted(admin, WQ):
        admin.execute(f"UPDATE evalledger.{WQ} SET uncertainty = jsonb_set(uncertainty, %s, %s) WHERE snapshot_id = %s",
                      (path, json.dumps(value), snapshot))


def test_a_work_quality_snapshot_stores_at_its_completion_exactly_what_the_statistics_function_gives(
        admin, connect_as, logins):
    runner = connect_as("evalledger_runner")
    first = wq_snapshot(runner, "r1")
    open_one = wq_start(runner, "r2", models=WQ_PANEL)
    for model, score in zip(WQ_PANEL, (0.9, 0.4)):
        wq_verdict(runner, open_one, model, wq_reply(score))
    assert wq_stored(admin, open_one) is None  # nothing before completion
    with runner.transaction():  # stored in the completion's own transaction
        runner.execute("SELECT evalledger.work_quality_complete_v1(%s)", (open_one,))
        assert runner.execute(f"SELECT count(*) FROM evalledger.{WQ} WHERE snapshot_id = %s",
                              (open_one,)).fetchone()[0] == 1
    # A history file imported: complete at its admission, its intervals stored then, from its document.
    imported = import_doc(runner, go_document(sorted(p.name for p in GO_HISTORY.glob("*.json"))[0]))[0]
    for snapshot in (first, open_one, imported):
        assert wq_stored(admin, snapshot) == wq_computed(admin, snapshot) != {}, snapshot
    whole = wq_stored(admin, open_one)
    assert whole["overall"]["estimate"] == pytest.approx(0.65) and whole["overall"]["n"] == 2
    stderr = admin.execute("SELECT (evalledger.mean_stderr_v1(ARRAY[0.9, 0.4]::float8[])).stderr").fetchone()[0]
    assert whole["overall"]["stderr"] == pytest.approx(stderr, rel=1e-12)
    for reader in ("auditor", "revops"):
        rows = logins(reader).execute("SELECT dimension, estimate, stderr, ci95_lo, ci95_hi, judges "
                                      "FROM evalledger.work_quality_intervals_v1 WHERE snapshot_id = %s",
                                      (open_one,)).fetchall()
        assert {r[0]: r[1:] for r in rows} == {
            key: (u["estimate"], u["stderr"], u["ci95"][0], u["ci95"][1], u["n"]) for key, u in whole.items()}, reader


def test_every_reader_of_a_completed_snapshots_intervals_reads_the_stored_row(admin, connect_as, logins, dsn):
    """Forged past the guards, the stored row is what `snapshot show RUN_ID` (its text and the Snapshot JSON's
    stderr and ci95), the view, the history's error bars and a snapshot's page read. A file's are computed."""
    runner = connect_as("evalledger_runner")
    snapshot = wq_snapshot(runner, "r1")
    wq_forge(admin, snapshot, "{overall,ci95}", [0.125, 0.875])
    wq_forge(admin, snapshot, "{overall,stderr}", 0.25)
    shown = run_cli("snapshot", "show", "r1", "--json", "--uncertainty", env={"DATABASE_URL": dsn})
    assert shown.code == 0, shown.out + shown.err
    aggregate = json.loads(shown.out)["aggregate"]
    assert aggregate["ci95"]["overall"] == [0.125, 0.875] and aggregate["stderr"]["overall"] == 0.25
    text = run_cli("snapshot", "show", "r1", env={"DATABASE_URL": dsn})
    assert text.code == 0 and "0.125" in text.out and "0.875" in text.out, text.out + text.err
    for reader in ("auditor", "revops"):
        conn = logins(reader)
        assert conn.execute("SELECT ci95_lo, ci95_hi FROM evalledger.work_quality_intervals_v1 "
                            "WHERE snapshot_id = %s AND dimension = 'overall'", (snapshot,)).fetchone() == (0.125, 0.875)
        assert conn.execute(_query("bi", "panel_work_quality_intervals"), {"snapshot_ids": [snapshot]}).fetchall() == [
            (snapshot, 0.125, 0.875)]
        assert (0.125, 0.875) in [r[3:5] for r in conn.execute(_query("bi", "work_intervals"), {"snapshot_id": snapshot})]


@pytest.mark.parametrize("role", ["runner", "reviewer", "revops", "auditor", "owner", "agent", "retention"])
def test_no_role_supplies_or_alters_a_snapshots_uncertainty(admin, connect_as, logins, role):
    runner = connect_as("evalledger_runner")
    snapshot = wq_snapshot(runner, "r1")
    other = wq_start(runner, "r2", models=WQ_PANEL)
    conn = logins(role)
    made_up = json.dumps({"overall": {"estimate": 1, "stderr": 0, "ci95": [1, 1]}})
    for statement, params in (
            (f"INSERT INTO evalledger.{WQ} (snapshot_id, uncertainty, run_created_at) VALUES (%s, %s, now())",
             (other, made_up)),
            (f"UPDATE evalledger.{WQ} SET uncertainty = %s WHERE snapshot_id = %s", (made_up, snapshot)),
            (f"DELETE FROM evalledger.{WQ} WHERE snapshot_id = %s", (snapshot,))):
        with refused(admin, errors.InsufficientPrivilege, rf"permission denied for (table {WQ}|schema evalledger)"):
            conn.execute(statement, params)
    assert wq_stored(admin, snapshot) == wq_computed(admin, snapshot)
    assert wq_stored(admin, other) is None


def test_the_superuser_neither_rewrites_nor_deletes_a_snapshots_uncertainty(admin, connect_as):
    snapshot = wq_snapshot(connect_as("evalledger_runner"), "r1")
    for statement, says in (
            (f"UPDATE evalledger.{WQ} SET uncertainty = '{{}}' WHERE snapshot_id = %s", rf"evalledger: {WQ} is append-only: UPDATE refused"),
            (f"DELETE FROM evalledger.{WQ} WHERE snapshot_id = %s", rf"evalledger: {WQ} is append-only: DELETE refused")):
        with refused(admin, errors.InsufficientPrivilege, says):
            admin.execute(statement, (snapshot,))
    with refused(admin, errors.UniqueViolation, r"duplicate key value violates unique constraint .*", f"{WQ}_pkey"):
        admin.execute(f"INSERT INTO evalledger.{WQ} (snapshot_id, uncertainty, run_created_at) "
                      "VALUES (%s, '{}', now())", (snapshot,))


def test_the_recompute_rederives_a_snapshots_uncertainty_and_names_a_rewritten_one(admin, dsn, connect_as):
    runner = connect_as("evalledger_runner")
    snapshot = wq_snapshot(runner, "r1")
    wq_snapshot(runner, "r2", scores=(0.7, 0.6))
    imported = import_doc(runner, go_document(sorted(p.name for p in GO_HISTORY.glob("*.json"))[0]))[0]
    assert admin.execute("SELECT count(*) FROM evalledger.ledger_recompute_v3()").fetchone()[0] == 0
    wq_forge(admin, snapshot, "{overall,ci95}", [0.6, 0.61])
    wq_forge(admin, imported, "{overall,estimate}", 0.99)  # an import's are the database's too
    keys = [json.dumps({"snapshot_id": s}, separators=(",", ":")) for s in (snapshot, imported)]
    assert admin.execute("SELECT table_name, row_key, column_name FROM evalledger.ledger_recompute_v3()").fetchall() == [
        (WQ, key, "uncertainty") for key in sorted(keys)]
    report = verified(dsn, recompute=True)
    assert all(("recomputed", WQ, key, ("uncertainty",)) in kinds(report) for key in keys)


def test_the_migration_stores_the_uncertainty_of_snapshots_completed_before_it(admin, connect_as):
    runner = connect_as("evalledger_runner")
    before = wq_snapshot(runner, "r1")
    with admin.transaction(), triggers_lifted(admin, WQ):
        admin.execute(f"DELETE FROM evalledger.{WQ} WHERE snapshot_id = %s", (before,))
    assert wq_stored(admin, before) is None
    with admin.transaction():
        admin.execute("SET LOCAL ROLE evalledger_code")
        admin.execute("SET LOCAL search_path = evalledger, pg_temp")
        admin.execute(_backfill(WQ))
    assert wq_stored(admin, before) == wq_computed(admin, before) != {}


@pytest.mark.parametrize("held", [False, True])
def test_a_snapshots_uncertainty_ages_with_its_snapshot(admin, connect_as, logins, held):
    """Its tier clock is its snapshot's: past the horizon due with it, and the purge takes it with its snapshot;
    a range hold over the snapshot's time keeps both until released. The purge verifies clean."""
    runner, owner, auditor = connect_as("evalledger_runner"), logins("owner"), logins("auditor")
    young = wq_snapshot(runner, "r1")
    seal(admin)
    old = wq_snapshot(runner, "r2", scores=(0.7, 0.6))
    with admin.transaction():
        where = f"snapshot_id = {int(old)}"
        set_clock(admin, "eval_work_quality_snapshots", "created_at", OLD, where)
        set_clock(admin, "eval_work_quality_judge_verdicts", "snapshot_created_at", OLD, where)
        set_clock(admin, WQ, "run_created_at", OLD, where)
    age_unsealed(admin, "8 years")
    hold = owner.execute(f"INSERT INTO evalledger.legal_hold (held_from, held_to, reason) VALUES ({OLD} - interval '1 hour', "
                         f"{OLD} + interval '1 hour', 'matter') RETURNING hold_id").fetchone()[0] if held else None
    assert _plan(auditor, WQ) == ((1, 0, 0, 1) if held else (1, 0, 1, 0))
    digest = [("before.json", take_digest(admin))]
    purged = purge_committed(admin)
    assert ((WQ, 1, None, None) in purged) is not held
    if held:
        owner.execute("INSERT INTO evalledger.legal_hold_release (hold_id, reason) VALUES (%s, 'settled')", (hold,))
        assert (WQ, 1, None, None) in purge_committed(admin)
    assert [r for (r,) in admin.execute(f"SELECT snapshot_id FROM evalledger.{WQ} ORDER BY 1")] == [young]
    seal(admin)
    report = verified(admin.info.dsn, digest + [("after.json", take_digest(admin))], recompute=True)
    assert report.verified and report.recomputed, [f.line() for f in report.findings]


def test_the_recompute_cuts_a_snapshots_intervals_to_its_own_rubrics_scale_whatever_was_activated_since(
        admin, connect_as):
    """A snapshot's intervals are cut to the scale of the rubric its verdicts were admitted under (its
    rubric_id), at its completion and at the recompute alike: a rubric activated since, of another
    scale, neither makes an honest row look rewritten nor hides a rewritten one (the recompute once
    guessed the rubric by the activation's clock, and skipped every row stored before the last one)."""
    runner = connect_as("evalledger_runner")
    snapshot = wq_snapshot(runner, "r1")
    stored_before = wq_stored(admin, snapshot)
    definition = admin.execute("SELECT definition FROM evalledger.rubric r WHERE r.rubric_id = "
                               "evalledger.active_rubric_v1('work-quality')").fetchone()[0]
    definition["scale"] = {**definition["scale"], "min": 0.5, "max": 0.9}
    admin.execute("INSERT INTO evalledger.rubric (suite, version, definition) VALUES ('work-quality', 'narrow', %s)",
                  (json.dumps(definition),))
    admin.execute("INSERT INTO evalledger.rubric_activation (suite, rubric_id, reason) SELECT suite, rubric_id, "
                  "'narrower scale' FROM evalledger.rubric WHERE suite = 'work-quality' AND version = 'narrow'")
    # Under the new rubric the same document's intervals are cut otherwise: the scale matters here.
    assert wq_computed(admin, snapshot) != stored_before
    assert admin.execute("SELECT * FROM evalledger.ledger_recompute_v3()").fetchall() == []
    wq_forge(admin, snapshot, "{overall,ci95}", [0.6, 0.61])
    assert admin.execute("SELECT table_name, row_key, column_name FROM evalledger.ledger_recompute_v3()").fetchall() == [
        (WQ, json.dumps({"snapshot_id": snapshot}, separators=(",", ":")), "uncertainty")]
