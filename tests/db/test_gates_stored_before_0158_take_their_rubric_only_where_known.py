"""Gate decisions stored before migration 0158 take the work-quality rubric they were decided under only
where it is known exactly, and the recompute says nothing false of the others (docs/guards.md section 35).

A ledger migrated up to the migration before 0158 holds a work-quality and a takes-quality gate; 0158
applies. Where every work-quality activation names one rubric (the baseline's, made before the gate table
existed), each row takes it, as the value its new column is added with (the table is append-only: never
an UPDATE), and the recompute re-derives the work-quality gate under it, clean, and names a rewrite of it.
Where a second rubric had been activated before 0158, which one a gate read is not known: the column stays
NULL, and the recompute leaves that work-quality gate out rather than guess."""

from __future__ import annotations

import os

import psycopg
import pytest
from psycopg import sql
from psycopg.conninfo import make_conninfo
from psycopg.types.json import Jsonb

from evalledger.core.migrate import migrate
from tests.builders import BRAIN_PROMPTS, register_prompt
from tests.db.test_gate_decided_by_the_database import BASE, snapshot
from tests.db.test_recompute_re_derives_every_gate_decision import receipt, takes_quality_run
from tests.ledger_forge import rewrite, verified
from tests.released import ROOT

# Two ledgers migrated from empty: tens of seconds of the server's time (make check leaves it out).
pytestmark = pytest.mark.long

DROPPED = {"openai:gpt-4o": 0.55, "anthropic:claude-opus-4-7": 0.45, "google:gemini-1.5-pro": 0.65}
MIGRATION = "0158.gate-recompute-rubric"


def migrations_before(into, last: str):
    """A migrations folder holding every migration that sorts before last."""
    (into / "migrations").mkdir(parents=True)
    for path in sorted((ROOT / "migrations").glob("*.sql")):
        if path.stem < last:
            (into / "migrations" / path.name).write_text(path.read_text())
    return into / "migrations"


@pytest.fixture
def before_0158(clone_pool, tmp_path):
    """(dsn, superuser connection) of a new database migrated to just before 0158; dropped after."""
    with clone_pool.clone() as scratch:
        name = f"evalledger_gates_0158_{os.getpid()}"
        with psycopg.connect(scratch, autocommit=True) as admin:
            admin.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))
            admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
        dsn = make_conninfo(scratch, dbname=name)
        try:
            migrate(dsn, migrations_before(tmp_path, MIGRATION))
            with psycopg.connect(dsn, autocommit=True) as admin:
                for brain, prompt in BRAIN_PROMPTS.items():
                    register_prompt(admin, brain, prompt)
                yield dsn, admin
        finally:
            with psycopg.connect(scratch, autocommit=True) as admin:
                admin.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))


def gates(dsn, admin, rerun: int = 0) -> tuple[int, str]:
    """A work-quality gate (a fail at the baseline rubric's tolerance, a pass at the looser one's) and a
    takes-quality one, as the runner: the work-quality gate's id and decision."""
    with psycopg.connect(dsn, autocommit=True) as runner:
        runner.execute("SET search_path = evalledger, public")
        runner.execute("SET ROLE evalledger_runner")
        work, decision = runner.execute(
            "INSERT INTO eval_gate_decision (suite, mode, baseline_ref, current_ref, baseline, current_doc) "
            "VALUES ('work-quality', 'default', 'a', 'b', %s, %s) RETURNING gate_id, decision",
            (Jsonb(snapshot("a", BASE)), Jsonb(snapshot("b", DROPPED)))).fetchone()
        first = takes_quality_run(runner, (8, 8, 9), rerun=rerun)
        second = takes_quality_run(runner, (6, 7, 5), rerun=rerun + 1)
        takes, _ = runner.execute(
            "INSERT INTO eval_gate_decision (suite, mode, baseline_ref, current_ref, baseline, run_id) "
            "VALUES ('takes-quality', 'default', 'baseline.json', 'run', %s, %s) RETURNING gate_id, decision",
            (Jsonb(receipt(admin, first)), second)).fetchone()
    return work, decision


def activate_looser(admin) -> None:
    definition = admin.execute("SELECT definition FROM evalledger.rubric WHERE rubric_id = "
                               "evalledger.active_rubric_v1('work-quality')").fetchone()[0]
    definition["compare"] = {"same_band": 0.2, "regress_tolerance": 0.3}
    admin.execute("INSERT INTO evalledger.rubric (suite, version, definition) VALUES ('work-quality', 'looser', %s)",
                  (Jsonb(definition),))
    admin.execute("INSERT INTO evalledger.rubric_activation (suite, rubric_id, reason) SELECT suite, rubric_id, "
                  "'looser gates' FROM evalledger.rubric WHERE suite = 'work-quality' AND version = 'looser'")


def stored(admin) -> list[tuple]:
    return admin.execute("SELECT suite, work_quality_rubric_id, run_completed FROM evalledger.eval_gate_decision "
                         "ORDER BY gate_id").fetchall()


def test_one_rubric_ever_activated_is_every_earlier_gates(before_0158):
    dsn, admin = before_0158
    work, decision = gates(dsn, admin)
    assert decision == "fail"
    only = admin.execute("SELECT evalledger.active_rubric_v1('work-quality')").fetchone()[0]
    assert migrate(dsn)[0] == MIGRATION  # and every later one
    assert stored(admin) == [("work-quality", only, None), ("takes-quality", only, None)]
    # Re-derived under it (the journal's baseline entries take the new columns: verify is clean) ...
    report = verified(dsn, recompute=True)
    assert report.verified and report.recomputed, [f.line() for f in report.findings]
    # ... even once another is activated; and a rewrite of it is named.
    activate_looser(admin)
    assert admin.execute("SELECT * FROM evalledger.ledger_recompute_v3()").fetchall() == []
    rewrite(admin, "eval_gate_decision", "decision = 'pass'", "gate_id = %s", (work,))
    assert admin.execute("SELECT table_name, column_name FROM evalledger.ledger_recompute_v3()").fetchall() == [
        ("eval_gate_decision", "decision")]


def test_with_two_rubrics_activated_before_an_earlier_work_quality_gate_is_left_out(before_0158):
    dsn, admin = before_0158
    _, decision = gates(dsn, admin)
    assert decision == "fail"
    activate_looser(admin)
    assert migrate(dsn)[0] == MIGRATION  # and every later one
    assert stored(admin) == [("work-quality", None, None), ("takes-quality", None, None)]
    # Under the rubric active now it would decide otherwise: the recompute does not guess, and says nothing.
    assert admin.execute("SELECT * FROM evalledger.ledger_recompute_v3()").fetchall() == []
    report = verified(dsn, recompute=True)
    assert report.verified and report.recomputed, [f.line() for f in report.findings]
    # A gate decided after 0158 stores the rubric it read, and is re-derived under it.
    later, decision = gates(dsn, admin, rerun=2)
    assert decision == "pass"
    looser = admin.execute("SELECT evalledger.active_rubric_v1('work-quality')").fetchone()[0]
    assert stored(admin)[2:] == [("work-quality", looser, None), ("takes-quality", looser, True)]
    rewrite(admin, "eval_gate_decision", "decision = 'fail'", "gate_id = %s", (later,))
    assert admin.execute("SELECT table_name, row_key, column_name FROM evalledger.ledger_recompute_v3()").fetchall() == [
        ("eval_gate_decision", f'{{"gate_id":{later}}}', "decision")]
