"""`ledger verify --recompute` re-decides every stored gate decision (issue 36, item 5; docs/ledger.md
"--recompute"): eval_gate_decision's decision, reasons and comparison, by gate_decide_v2 (the function
its admission trigger decides with) from the sides, mode and threshold the row was decided on, and a
work-quality gate under the rubric it was decided under (its work_quality_rubric_id; see
test_the_recompute_redecides_a_gate_under_its_own_rubric.py). A
superuser who rewrites a decision with the guards lifted, the journal off or left on, is named by the
journal and by the recompute; one who rebuilds the journal and the blocks to match is named by the
recompute alone. An honest ledger of gates in every mode recomputes clean, and so does a gate it does
not re-derive: one decided while its takes-quality run was still open (its receipt was then
provisional); a work-quality gate decided under a rubric since replaced is re-derived under its own."""

from __future__ import annotations

import pytest
from psycopg.types.json import Jsonb

from tests.builders import BRAIN_PROMPTS, register_prompt
from tests.db.test_gate_decided_by_the_database import BASE, snapshot
from tests.db.test_takes_quality_db import DIMS, PANEL, start_run, verdict
from tests.ledger_forge import (kinds, rejournal, reseal, rewrite, seal, set_triggers, take_digest, verified)

pytestmark = pytest.mark.db

MODES = ("default", "significant", "possible")
DROPPED = {"openai:gpt-4o": 0.55, "anthropic:claude-opus-4-7": 0.45, "google:gemini-1.5-pro": 0.65}


@pytest.fixture(autouse=True)
def registered_prompts(admin):
    for brain, prompt in BRAIN_PROMPTS.items():
        register_prompt(admin, brain, prompt)


@pytest.fixture
def runner(connect_as):
    return connect_as("evalledger_runner")


def takes_quality_run(runner, scores, rerun: int, complete: bool = True) -> int:
    """A takes-quality run judged by the panel, each judge at its score on every dimension."""
    run = start_run(runner, rerun=rerun)
    for model, score in zip(PANEL, scores):
        verdict(runner, run, model, {d: score for d in DIMS})
    if complete:
        runner.execute("SELECT evalledger.takes_quality_complete_v1(%s)", (run,))
    return run


def receipt(admin, run: int) -> dict:
    return admin.execute("SELECT receipt_json FROM evalledger.eval_takes_quality_runs WHERE id = %s", (run,)).fetchone()[0]


def takes_quality_gate(runner, baseline: dict, run: int, mode: str) -> tuple[int, str]:
    return runner.execute(
        "INSERT INTO eval_gate_decision (suite, mode, baseline_ref, current_ref, baseline, run_id) "
        "VALUES ('takes-quality', %s, 'baseline.json', %s, %s, %s) RETURNING gate_id, decision",
        (mode, f"run {run}", Jsonb(baseline), run)).fetchone()


def work_quality_gate(runner, a: dict, b: dict, mode: str) -> tuple[int, str]:
    return runner.execute(
        "INSERT INTO eval_gate_decision (suite, mode, baseline_ref, current_ref, baseline, current_doc) "
        "VALUES ('work-quality', %s, %s, %s, %s, %s) RETURNING gate_id, decision",
        (mode, a["run_id"], b["run_id"], Jsonb(a), Jsonb(b))).fetchone()


def key(gate_id: int) -> str:
    return f'{{"gate_id":{gate_id}}}'


@pytest.fixture
def gates(admin, runner) -> dict[tuple[str, str], tuple[int, str]]:
    """A gate of each suite in each mode: takes-quality a run dropped well past the threshold against the
    first run's receipt, work-quality a drop of twice the judges' noise."""
    first = takes_quality_run(runner, (8, 8, 9), rerun=0)
    second = takes_quality_run(runner, (6, 7, 5), rerun=1)
    made = {}
    for mode in MODES:
        made[("takes-quality", mode)] = takes_quality_gate(runner, receipt(admin, first), second, mode)
        made[("work-quality", mode)] = work_quality_gate(runner, snapshot("a", BASE), snapshot("b", DROPPED), mode)
    assert {decision for _, decision in made.values()} == {"fail"}
    return made


def test_an_honest_ledger_of_gate_decisions_recomputes_clean(admin, gates):
    assert admin.execute("SELECT * FROM evalledger.ledger_recompute_v3()").fetchall() == []
    seal(admin)
    report = verified(admin.info.dsn, [("held.json", take_digest(admin))], recompute=True)
    assert report.verified and report.recomputed, [f.line() for f in report.findings]


@pytest.mark.parametrize("suite", ["takes-quality", "work-quality"])
@pytest.mark.parametrize("lifted", ["every trigger", "the guards, not the journal"])
def test_a_gate_decision_rewritten_by_the_superuser_is_named_by_the_recompute(admin, gates, suite, lifted):
    """The guards lifted through the catalog (the journal's trigger too, or left on), a failed gate
    rewritten to pass: the journal names the row (changed, or an UPDATE no rule allows), the recompute
    names the decision and what its inputs decide."""
    seal(admin)
    held = [("held.json", take_digest(admin))]
    gate_id, _ = gates[(suite, "significant")]
    set_triggers(admin, ["eval_gate_decision"], "D", but="%\\_90\\_journal%" if lifted != "every trigger" else "")
    try:
        assert admin.execute("UPDATE evalledger.eval_gate_decision SET decision = 'pass' WHERE gate_id = %s",
                             (gate_id,)).rowcount == 1
    finally:
        set_triggers(admin, ["eval_gate_decision"], "A")
    seal(admin)
    report = verified(admin.info.dsn, held, recompute=True)
    journal = "row_changed" if lifted == "every trigger" else "update_refused"
    assert kinds(report) == [(journal, "eval_gate_decision", key(gate_id), ("decision",)),
                             ("recomputed", "eval_gate_decision", key(gate_id), ("decision",))]
    assert report.findings[-1].line() == (f'recomputed: eval_gate_decision {key(gate_id)}: decision is "pass", '
                                          'but its inputs decide "fail"')


def test_a_gate_rewritten_with_its_journal_and_blocks_is_named_by_the_recompute_alone(admin, gates):
    """Decision and reasons rewritten to a consistent pass, the entry and every block rebuilt to match:
    verify without a digest sees nothing, the recompute names both columns of both gates."""
    seal(admin)
    rewritten = [gates[("takes-quality", "default")][0], gates[("work-quality", "possible")][0]]
    for gate_id in rewritten:
        rewrite(admin, "eval_gate_decision", "decision = 'pass', reasons = '{}'", "gate_id = %s", (gate_id,))
        rejournal(admin, admin.info.dsn, "eval_gate_decision", key(gate_id))
    reseal(admin, admin.info.dsn, 1)
    assert verified(admin.info.dsn).verified
    report = verified(admin.info.dsn, recompute=True)
    assert sorted((f.kind, f.table, f.key, f.columns) for f in report.findings) == sorted(
        ("recomputed", "eval_gate_decision", key(g), (column,)) for g in rewritten for column in ("decision", "reasons"))


def test_a_gate_whose_sides_no_longer_decide_it_is_not_re_derived(admin, runner):
    """Two gates an honest ledger keeps clean: one on a takes-quality run still open (the receipt it
    compared was provisional; the run completed otherwise), which the recompute leaves as it was decided,
    and a work-quality gate decided under the rubric a newer activation replaced (its tolerance was 0.08,
    the new one's 0.3), which it re-decides under its own."""
    first = takes_quality_run(runner, (8, 8, 9), rerun=0)
    open_run = takes_quality_run(runner, (8, 8), rerun=1, complete=False)
    _, decision = takes_quality_gate(runner, receipt(admin, first), open_run, "default")
    verdict(runner, open_run, PANEL[2], {d: 1 for d in DIMS})
    runner.execute("SELECT evalledger.takes_quality_complete_v1(%s)", (open_run,))
    _, wq_decision = work_quality_gate(runner, snapshot("a", BASE), snapshot("b", DROPPED), "default")
    assert wq_decision == "fail"
    definition = admin.execute("SELECT definition FROM rubric WHERE suite = 'work-quality'").fetchone()[0]
    definition["compare"] = {"same_band": 0.2, "regress_tolerance": 0.3}
    admin.execute("INSERT INTO rubric (suite, version, definition) VALUES ('work-quality', 'v1.1-gates', %s)",
                  (Jsonb(definition),))
    admin.execute("INSERT INTO rubric_activation (suite, rubric_id, reason) SELECT suite, rubric_id, 'looser' "
                  "FROM rubric WHERE suite = 'work-quality' AND version = 'v1.1-gates'")
    # Decided now, under the active rubric, each would differ from what was stored ...
    redecided = admin.execute(
        "SELECT evalledger.gate_decide_v2(suite, mode, threshold, baseline, current_doc, run_id, "
        "evalledger.active_rubric_v1('work-quality')) ->> 'decision', "
        "decision FROM evalledger.eval_gate_decision ORDER BY gate_id").fetchall()
    assert redecided == [("fail", decision), ("pass", "fail")] and decision != "fail"
    # ... and the recompute names neither: the first it does not re-derive, the second it re-decides under
    # the rubric it was decided under.
    assert admin.execute("SELECT * FROM evalledger.ledger_recompute_v3()").fetchall() == []
    # A work-quality gate decided under the new rubric is re-derived again.
    gate_id, _ = work_quality_gate(runner, snapshot("a", BASE), snapshot("b", DROPPED), "default")
    rewrite(admin, "eval_gate_decision", "decision = 'fail'", "gate_id = %s", (gate_id,))
    assert admin.execute("SELECT table_name, row_key, column_name FROM evalledger.ledger_recompute_v3()").fetchall() == [
        ("eval_gate_decision", key(gate_id), "decision")]
