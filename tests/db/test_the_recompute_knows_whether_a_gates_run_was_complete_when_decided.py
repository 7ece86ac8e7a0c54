"""A takes-quality gate decision is re-derived exactly when its run had completed as the decision read it
(migration 0158; docs/guards.md section 35, docs/ledger.md "--recompute").

The admission trigger stores whether the run it compared had completed (eval_gate_decision.run_completed,
read in the one snapshot the decision reads, never the caller's), and the ledger's recompute re-decides a
takes-quality gate only on that. It once guessed by the clock (the run's completed_at no later than the
gate's created_at, each its own transaction's start): a gate decided on an open run whose completion
came in the same transaction was re-derived on the final receipt and named though honest, and a gate
whose transaction began before the run's completion was committed, but read it completed, was skipped:
a rewritten decision on it went unnamed."""

from __future__ import annotations

import pytest
from psycopg.types.json import Jsonb

from tests.builders import BRAIN_PROMPTS, register_prompt
from tests.db.test_recompute_re_derives_every_gate_decision import key, receipt, takes_quality_run
from tests.db.test_takes_quality_db import DIMS, PANEL, verdict
from tests.ledger_forge import rewrite

pytestmark = pytest.mark.db

GATE = ("INSERT INTO eval_gate_decision (suite, mode, baseline_ref, current_ref, baseline, run_id) "
        "VALUES ('takes-quality', 'default', 'baseline.json', %s, %s, %s) RETURNING gate_id, decision")


@pytest.fixture(autouse=True)
def registered_prompts(admin):
    for brain, prompt in BRAIN_PROMPTS.items():
        register_prompt(admin, brain, prompt)


@pytest.fixture
def runner(connect_as):
    return connect_as("evalledger_runner")


def recomputed(admin) -> list[tuple]:
    return admin.execute("SELECT table_name, row_key, column_name FROM evalledger.ledger_recompute_v3()").fetchall()


def test_a_gate_on_an_open_run_completed_in_the_same_transaction_is_not_re_derived(admin, runner, connect_as):
    """Decided on the receipt so far, the run's last judge and its completion in the same transaction: the
    completion's clock is the gate's, yet the gate compared a provisional receipt. Honest, it stays clean."""
    first = takes_quality_run(runner, (8, 8, 9), rerun=0)
    open_run = takes_quality_run(runner, (8, 8), rerun=1, complete=False)
    with runner.transaction():
        gate_id, decision = runner.execute(GATE, (f"run {open_run}", Jsonb(receipt(admin, first)), open_run)).fetchone()
        verdict(runner, open_run, PANEL[2], {d: 1 for d in DIMS})
        runner.execute("SELECT evalledger.takes_quality_complete_v1(%s)", (open_run,))
    assert admin.execute("SELECT run_completed FROM evalledger.eval_gate_decision WHERE gate_id = %s",
                         (gate_id,)).fetchone()[0] is False
    # Its run's final receipt decides otherwise, and the recompute does not hold that against it.
    assert admin.execute("SELECT evalledger.gate_decide_v2(suite, mode, threshold, baseline, current_doc, run_id, NULL) "
                         "->> 'decision' FROM evalledger.eval_gate_decision WHERE gate_id = %s",
                         (gate_id,)).fetchone()[0] != decision
    assert connect_as("evalledger_auditor").execute("SELECT * FROM evalledger.ledger_recompute_v3()").fetchall() == []


def test_a_gate_decided_while_its_runs_completion_was_uncommitted_is_not_re_derived(admin, runner, connect_as):
    """One session records the run's last judge and completes it, and before it commits another decides a
    gate on the run: the gate read the receipt so far (the completion was not yet visible), though the
    run's completed_at precedes the gate's created_at. Honest, it stays clean (the clock's guess re-derived
    it on the final receipt and named it)."""
    first = takes_quality_run(runner, (8, 8, 9), rerun=0)
    open_run = takes_quality_run(runner, (8, 8), rerun=1, complete=False)
    completing = connect_as("evalledger_runner")
    with completing.transaction():
        verdict(completing, open_run, PANEL[2], {d: 1 for d in DIMS})
        completing.execute("SELECT evalledger.takes_quality_complete_v1(%s)", (open_run,))
        gate_id, _ = runner.execute(GATE, (f"run {open_run}", Jsonb(receipt(admin, first)), open_run)).fetchone()
    assert admin.execute("SELECT r.completed_at <= g.created_at, g.run_completed FROM evalledger.eval_gate_decision g "
                         "JOIN evalledger.eval_takes_quality_runs r ON r.id = g.run_id WHERE g.gate_id = %s",
                         (gate_id,)).fetchone() == (True, False)
    assert connect_as("evalledger_auditor").execute("SELECT * FROM evalledger.ledger_recompute_v3()").fetchall() == []


def test_a_gate_whose_transaction_began_before_its_run_completed_is_re_derived(admin, runner, connect_as):
    """The gate's transaction begins (its clock is set) while the run is open, another session completes the
    run, then the gate is decided on the completed receipt: the gate's created_at precedes the run's
    completed_at, yet it compared the final receipt, so it is re-derived, and a rewrite of it is named."""
    first = takes_quality_run(runner, (8, 8, 9), rerun=0)
    later = takes_quality_run(runner, (6, 7, 5), rerun=1, complete=False)
    with runner.transaction():
        runner.execute("SELECT now()")  # the transaction's clock, set while the run is open
        connect_as("evalledger_runner").execute("SELECT evalledger.takes_quality_complete_v1(%s)", (later,))
        gate_id, decision = runner.execute(GATE, (f"run {later}", Jsonb(receipt(admin, first)), later)).fetchone()
    assert decision == "fail"
    assert admin.execute("SELECT g.created_at < r.completed_at, g.run_completed FROM evalledger.eval_gate_decision g "
                         "JOIN evalledger.eval_takes_quality_runs r ON r.id = g.run_id WHERE g.gate_id = %s",
                         (gate_id,)).fetchone() == (True, True)
    assert recomputed(admin) == []
    rewrite(admin, "eval_gate_decision", "decision = 'pass'", "gate_id = %s", (gate_id,))
    assert connect_as("evalledger_auditor").execute(
        "SELECT table_name, row_key, column_name FROM evalledger.ledger_recompute_v3()").fetchall() == [
        ("eval_gate_decision", key(gate_id), "decision")]


def test_whether_the_run_was_complete_is_the_databases(admin, runner):
    first = takes_quality_run(runner, (8, 8, 9), rerun=0)
    second = takes_quality_run(runner, (6, 7, 5), rerun=1)
    with pytest.raises(Exception, match="permission denied"):
        runner.execute("INSERT INTO eval_gate_decision (suite, mode, baseline_ref, current_ref, baseline, run_id, "
                       "run_completed) VALUES ('takes-quality', 'default', 'b', 'r', %s, %s, false)",
                       (Jsonb(receipt(admin, first)), second))
    with pytest.raises(Exception, match=r"eval_gate_decision\.run_completed computed by the database"):
        admin.execute("INSERT INTO evalledger.eval_gate_decision (suite, mode, baseline_ref, current_ref, baseline, "
                      "run_id, run_completed) VALUES ('takes-quality', 'default', 'b', 'r', %s, %s, false)",
                      (Jsonb(receipt(admin, first)), second))
