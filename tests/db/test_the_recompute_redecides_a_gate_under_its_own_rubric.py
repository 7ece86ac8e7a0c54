"""A work-quality gate decision is re-decided under the work-quality rubric it was decided under, whatever
was activated since (migration 0158; docs/guards.md section 35, docs/ledger.md "--recompute").

The admission trigger stores the rubric active when it decides (eval_gate_decision.work_quality_rubric_id,
the database's own activation, never the caller's) and decides under that one (gate_decide_v2); the
ledger's recompute re-decides under the stored one. It once guessed the rubric by the activation's clock
and re-decided a work-quality gate only while that guess was still the active rubric, so after any later
activation every work-quality gate stored before it was skipped: a rewritten decision went unnamed."""

from __future__ import annotations

import json

import pytest
from psycopg import errors
from psycopg.types.json import Jsonb

from tests.builders import BRAIN_PROMPTS, register_prompt
from tests.cli import run_cli
from tests.db.test_gate_decided_by_the_database import BASE, snapshot
from tests.ledger_forge import kinds, rewrite, verified

pytestmark = pytest.mark.db

# A drop of about twice the judges' noise: a regression past the first rubric's tolerance (0.08), none
# past the looser one's (0.3).
DROPPED = {"openai:gpt-4o": 0.55, "anthropic:claude-opus-4-7": 0.45, "google:gemini-1.5-pro": 0.65}
SHAPED = {"decision": "fail", "reasons": ["overall dropped -0.250 (vs a)", "value_for_money dropped -0.250 (vs a)"]}


@pytest.fixture(autouse=True)
def registered_prompts(admin):
    for brain, prompt in BRAIN_PROMPTS.items():
        register_prompt(admin, brain, prompt)


@pytest.fixture
def runner(connect_as):
    return connect_as("evalledger_runner")


@pytest.fixture
def auditor(connect_as):
    return connect_as("evalledger_auditor")


def work_quality_gate(runner, mode: str = "default") -> tuple[int, str, list[str]]:
    return runner.execute(
        "INSERT INTO eval_gate_decision (suite, mode, baseline_ref, current_ref, baseline, current_doc) "
        "VALUES ('work-quality', %s, 'a', 'b', %s, %s) RETURNING gate_id, decision, reasons",
        (mode, Jsonb(snapshot("a", BASE)), Jsonb(snapshot("b", DROPPED)))).fetchone()


def key(gate_id: int) -> str:
    return json.dumps({"gate_id": gate_id}, separators=(",", ":"))


def activate_looser(admin) -> int:
    """A work-quality rubric of another same band and tolerance (0.2 and 0.3, were 0.05 and 0.08), activated."""
    definition = admin.execute("SELECT definition FROM evalledger.rubric WHERE rubric_id = "
                               "evalledger.active_rubric_v1('work-quality')").fetchone()[0]
    definition["compare"] = {"same_band": 0.2, "regress_tolerance": 0.3}
    admin.execute("INSERT INTO evalledger.rubric (suite, version, definition) VALUES ('work-quality', 'looser', %s)",
                  (Jsonb(definition),))
    admin.execute("INSERT INTO evalledger.rubric_activation (suite, rubric_id, reason) SELECT suite, rubric_id, "
                  "'looser gates' FROM evalledger.rubric WHERE suite = 'work-quality' AND version = 'looser'")
    return admin.execute("SELECT evalledger.active_rubric_v1('work-quality')").fetchone()[0]


def redecided(admin, gate_id: int, rubric: str) -> str:
    """The gate's decision by gate_decide_v2 under the rubric named by the SQL expression rubric."""
    return admin.execute(
        "SELECT evalledger.gate_decide_v2(suite, mode, threshold, baseline, current_doc, run_id, " + rubric
        + ") ->> 'decision' FROM evalledger.eval_gate_decision WHERE gate_id = %s", (gate_id,)).fetchone()[0]


def test_the_gate_stores_the_rubric_it_was_decided_under_and_never_the_callers(admin, runner):
    active = admin.execute("SELECT evalledger.active_rubric_v1('work-quality')").fetchone()[0]
    gate_id, decision, reasons = work_quality_gate(runner)
    assert (decision, reasons) == (SHAPED["decision"], SHAPED["reasons"])
    stored, tolerance = admin.execute(
        "SELECT work_quality_rubric_id, comparison -> 'seed' ->> 'tolerance' FROM evalledger.eval_gate_decision "
        "WHERE gate_id = %s", (gate_id,)).fetchone()
    assert (stored, tolerance) == (active, "0.08")
    # Another rubric named by the caller: the runner holds no INSERT on the column, and the admission
    # trigger refuses it from anyone, the superuser included.
    other = activate_looser(admin)
    insert = ("INSERT INTO evalledger.eval_gate_decision (suite, mode, baseline_ref, current_ref, baseline, current_doc, "
              "work_quality_rubric_id) VALUES ('work-quality', 'default', 'a', 'b', %s, %s, %s)")
    sides = (Jsonb(snapshot("a", BASE)), Jsonb(snapshot("b", DROPPED)))
    with pytest.raises(errors.InsufficientPrivilege, match="permission denied"):
        runner.execute(insert, (*sides, active))
    with pytest.raises(errors.InsufficientPrivilege,
                       match=r"eval_gate_decision\.work_quality_rubric_id computed by the database"):
        admin.execute(insert, (*sides, active))
    # Decided now, under the rubric active now, and that one stored.
    later, decision, _ = work_quality_gate(runner)
    assert decision == "pass"
    assert admin.execute("SELECT work_quality_rubric_id FROM evalledger.eval_gate_decision WHERE gate_id = %s",
                         (later,)).fetchone()[0] == other


def test_an_honest_ledger_with_a_rubric_activated_since_recomputes_clean(admin, runner, auditor):
    """Gates in every mode decided under the first rubric, a looser one activated, one more gate decided
    under it: each is re-derived under its own (the new rubric would decide the first ones otherwise),
    and none is named."""
    first = [work_quality_gate(runner, mode)[0] for mode in ("default", "significant", "possible")]
    activate_looser(admin)
    second, decision, _ = work_quality_gate(runner)
    assert decision == "pass"
    active = "evalledger.active_rubric_v1('work-quality')"
    assert [redecided(admin, g, active) for g in first] == ["pass", "pass", "pass"]
    assert [redecided(admin, g, "work_quality_rubric_id") for g in first] == ["fail", "fail", "fail"]
    assert auditor.execute("SELECT * FROM evalledger.ledger_recompute_v3()").fetchall() == []
    report = verified(admin.info.dsn, recompute=True)
    assert report.verified and report.recomputed, [f.line() for f in report.findings]


def test_a_gate_rewritten_after_a_rubric_was_activated_is_named_by_the_recompute(admin, runner, auditor):
    """The defect: a work-quality gate decided, a looser rubric activated, the gate's decision and reasons
    rewritten past the guards to what the looser rubric would decide. The recompute, the auditor's and
    the package's, names both columns (it once skipped the row: its clock-guessed rubric was no longer
    the active one)."""
    gate_id, _, _ = work_quality_gate(runner, "default")
    activate_looser(admin)
    rewrite(admin, "eval_gate_decision", "decision = 'pass', reasons = '{}'", "gate_id = %s", (gate_id,))
    assert auditor.execute("SELECT table_name, row_key, column_name, recomputed FROM evalledger.ledger_recompute_v3()"
                           ).fetchall() == [("eval_gate_decision", key(gate_id), "decision", '"fail"'),
                                            ("eval_gate_decision", key(gate_id), "reasons",
                                             json.dumps(SHAPED["reasons"]))]
    report = verified(admin.info.dsn, recompute=True)
    assert ("recomputed", "eval_gate_decision", key(gate_id), ("decision",)) in kinds(report)
    assert ("recomputed", "eval_gate_decision", key(gate_id), ("reasons",)) in kinds(report)


def test_verify_recompute_names_a_gate_rewritten_after_an_activation(admin, runner, dsn):
    """`evalledger ledger verify --recompute` (the package's own functions): the rewritten gate named, exit 1."""
    gate_id, _, _ = work_quality_gate(runner, "significant")
    activate_looser(admin)
    rewrite(admin, "eval_gate_decision", "decision = 'pass'", "gate_id = %s", (gate_id,))
    result = run_cli("ledger", "verify", "--recompute", env={"DATABASE_URL": dsn})
    assert result.code == 1, result.out + result.err
    assert (f'recomputed: eval_gate_decision {key(gate_id)}: decision is "pass", but its inputs decide "fail"'
            in result.out.splitlines()), result.out
