"""Gates that know noise (issue 36, item 5; docs/statistics.md "Paired comparisons and gates"): a
regression gate's decision is the database's, in each mode. eval_gate_decision_admit_v1 decides it
by gate_decide_v2 from the two sides the runner names: default by the seed's own rule, significant
only when the paired interval lies wholly beyond the threshold, possible when any part of it does, a
gated row without an interval inconclusive (never a pass) and saying why. A decision the runner
supplies is refused (its column is not the runner's to write, and the trigger refuses it from any
role); the rows are append-only and journalled. The paired numbers match scipy's on the same scores,
and the items one side lacks are listed."""

from __future__ import annotations

import statistics
from decimal import Decimal

import pytest
from psycopg import errors
from psycopg.types.json import Jsonb
from scipy import stats

from tests.builders import record_run

pytestmark = pytest.mark.db

Z = stats.norm.ppf(0.975)
DIMENSIONS = ("efficacy", "completeness", "output_quality", "restraint", "reliability", "value_for_money", "overall")


def snapshot(run_id: str, judges: dict[str, float]) -> dict:
    """A Snapshot document whose judges score every dimension alike; mean_scores their means."""
    mean = statistics.fmean(judges.values()) if judges else None
    return {"schema_version": 1, "kind": "bot", "name": "review-pr", "run_id": run_id, "at": "2026-05-01T00:00:00Z",
            "metrics": {}, "aggregate": {
                "verdicts": [{"model": m, "family": m.split(":")[0], "scores": {d: s for d in DIMENSIONS},
                              "narrative": "", "confidence": 0.7} for m, s in judges.items()],
                "mean_scores": {d: mean for d in DIMENSIONS} if judges else {}}}


def gate(conn, a: dict, b: dict, mode: str, threshold=None):
    return conn.execute(
        "INSERT INTO eval_gate_decision (suite, mode, threshold, baseline_ref, current_ref, baseline, current_doc) "
        "VALUES ('work-quality', %s, %s, %s, %s, %s, %s) RETURNING gate_id, decision, reasons, comparison, decided_by",
        (mode, threshold, a["run_id"], b["run_id"], Jsonb(a), Jsonb(b))).fetchone()


def paired_row(comparison: dict, dimension: str) -> dict:
    return next(r for r in comparison["paired"] if r["dimension"] == dimension)


@pytest.fixture
def runner(connect_as):
    return connect_as("evalledger_runner")


BASE = {"openai:gpt-4o": 0.80, "anthropic:claude-opus-4-7": 0.70, "google:gemini-1.5-pro": 0.90}


def test_the_paired_numbers_are_scipys_on_the_shared_judges(runner):
    now = {"openai:gpt-4o": 0.62, "anthropic:claude-opus-4-7": 0.66, "google:gemini-1.5-pro": 0.71}
    _, decision, _, comparison, decided_by = gate(runner, snapshot("a", BASE), snapshot("b", now), "default")
    diffs = [now[m] - BASE[m] for m in sorted(BASE)]
    row = paired_row(comparison, "overall")
    se = stats.sem(diffs)
    assert row["shared"] == 3 and row["only_a"] == [] and row["only_b"] == []
    assert row["mean_difference"] == pytest.approx(statistics.fmean(diffs), rel=1e-12)
    assert row["stderr"] == pytest.approx(se, rel=1e-9)
    assert row["ci95"] == pytest.approx([statistics.fmean(diffs) - Z * se, statistics.fmean(diffs) + Z * se], rel=1e-9)
    assert row["mcnemar_p"] is None  # scores, not pass/fail
    # default is the seed's IsRegression on the means, exactly as `snapshot compare` always decided.
    assert decision == "fail" and comparison["seed"]["reasons"][0].startswith("overall dropped -0.137")
    assert decided_by == "evalledger_runner"


@pytest.mark.parametrize("now, decisions", [
    # the same work judged again, each judge off by its noise: no mode fails on noise alone but possible
    ({"openai:gpt-4o": 0.70, "anthropic:claude-opus-4-7": 0.90, "google:gemini-1.5-pro": 0.80},
     {"default": "pass", "significant": "pass", "possible": "fail"}),
    # a drop of twice the noise (0.1), every judge agreeing it dropped: significant
    ({"openai:gpt-4o": 0.61, "anthropic:claude-opus-4-7": 0.49, "google:gemini-1.5-pro": 0.70},
     {"default": "fail", "significant": "fail", "possible": "fail"}),
    # a drop near the tolerance (0.08): possible, not significant
    ({"openai:gpt-4o": 0.70, "anthropic:claude-opus-4-7": 0.65, "google:gemini-1.5-pro": 0.80},
     {"default": "fail", "significant": "pass", "possible": "fail"}),
])
def test_each_mode_decides_by_its_rule(runner, now, decisions):
    for mode, want in decisions.items():
        _, decision, reasons, comparison, _ = gate(runner, snapshot("a", BASE), snapshot("b", now), mode)
        assert decision == want, (mode, comparison)
        row = paired_row(comparison, "overall")
        lo, hi = row["ci95"]
        if mode == "significant":
            assert (decision == "fail") == (hi < -0.08)
        elif mode == "possible":
            assert (decision == "fail") == (lo < -0.08)
        if mode != "default" and decision == "fail":
            assert any(r.startswith("overall: 95% CI ") for r in reasons), reasons


def test_without_an_interval_a_gate_is_inconclusive_and_says_why(runner):
    lone = {"openai:gpt-4o": 0.80, "xai:grok-2": 0.5}
    now = {"openai:gpt-4o": 0.80, "anthropic:claude-opus-4-7": 0.80}
    for mode in ("significant", "possible"):
        _, decision, reasons, comparison, _ = gate(runner, snapshot("a", lone), snapshot("b", now), mode)
        assert decision == "inconclusive"
        assert reasons == ["value_for_money: no interval (1 shared judge; an interval needs 2)",
                           "overall: no interval (1 shared judge; an interval needs 2)"]
        row = paired_row(comparison, "overall")
        # Never silently dropped: the judges one side lacks are listed.
        assert (row["shared"], row["only_a"], row["only_b"]) == (1, ["xai:grok-2"], ["anthropic:claude-opus-4-7"])
    _, decision, reasons, _, _ = gate(runner, snapshot("a", {}), snapshot("b", now), "significant")
    assert decision == "inconclusive" and reasons[1] == "overall: no interval (0 shared judges; an interval needs 2)"


def test_a_decision_is_never_the_runners(runner, connect_as, admin):
    a, b = snapshot("a", BASE), snapshot("b", BASE)
    with pytest.raises(errors.InsufficientPrivilege):
        runner.execute("INSERT INTO eval_gate_decision (suite, mode, baseline_ref, current_ref, baseline, current_doc,"
                       " decision, reasons, comparison) VALUES ('work-quality', 'significant', 'a', 'b', %s, %s,"
                       " 'pass', '{}', '{}')", (Jsonb(a), Jsonb(b)))
    # The owner role, whose writes pass the same triggers, is refused it by the trigger.
    owner = connect_as("evalledger_owner")
    with pytest.raises(errors.InsufficientPrivilege):
        owner.execute("INSERT INTO eval_gate_decision (suite, mode, baseline_ref, current_ref, baseline, current_doc,"
                      " decision) VALUES ('work-quality', 'default', 'a', 'b', %s, %s, 'pass')", (Jsonb(a), Jsonb(b)))
    gate_id, decision, *_ = gate(runner, a, snapshot("b", {m: s - 0.3 for m, s in BASE.items()}), "significant")
    assert decision == "fail"
    for conn in (runner, owner):
        for statement in ("UPDATE eval_gate_decision SET decision = 'pass' WHERE gate_id = %s",
                          "DELETE FROM eval_gate_decision WHERE gate_id = %s"):
            with pytest.raises(errors.InsufficientPrivilege):
                conn.execute(statement, (gate_id,))
    with pytest.raises(errors.InsufficientPrivilege):
        owner.execute("TRUNCATE eval_gate_decision")
    assert admin.execute("SELECT decision FROM evalledger.eval_gate_decision WHERE gate_id = %s",
                         (gate_id,)).fetchone()[0] == "fail"
    # Each role reads what its grants say: the auditor and RevOps (the hot tier) read it, a reviewer nothing.
    for role in ("evalledger_auditor", "evalledger_revops"):
        assert connect_as(role).execute("SELECT decision FROM eval_gate_decision WHERE gate_id = %s",
                                        (gate_id,)).fetchone()[0] == "fail"
    with pytest.raises(errors.InsufficientPrivilege):
        connect_as("evalledger_reviewer").execute("SELECT decision FROM eval_gate_decision")
    # Journalled like every ledger row.
    assert admin.execute("SELECT count(*) FROM evalledger.ledger_journal WHERE table_name = 'eval_gate_decision'"
                         ).fetchone()[0] >= 1


@pytest.mark.parametrize("threshold, shown, admitted", [
    (Decimal("0.5"), None, True), (1, "1", False), (Decimal("1e100"), "1e+100", False)])
def test_a_threshold_as_wide_as_the_scale_is_refused_a_gate_that_could_never_fail(runner, admin, threshold, shown,
                                                                                  admitted):
    """A threshold had only to be finite and not negative: a gate of 1e100 stored pass on any drop."""
    a, b = snapshot("a", BASE), snapshot("b", {m: 0.0 for m in BASE})
    before = admin.execute("SELECT count(*) FROM evalledger.eval_gate_decision").fetchone()[0]
    if admitted:
        assert gate(runner, a, b, "default", threshold)[1] == "fail"
        return
    with pytest.raises(errors.CheckViolation) as refused:
        gate(runner, a, b, "default", threshold)
    assert refused.value.diag.message_primary == (
        f"evalledger: a gate threshold of {shown} spans the whole of rubric work-quality v1.0's scale (0 to 1): "
        "no drop could exceed it, so the gate could never fail")
    assert refused.value.diag.constraint_name == "eval_gate_decision_threshold_within_scale"
    assert admin.execute("SELECT count(*) FROM evalledger.eval_gate_decision").fetchone()[0] == before


def test_a_takes_quality_run_the_runner_cannot_name_is_no_gate(runner):
    with pytest.raises(errors.NoDataFound):
        runner.execute("INSERT INTO eval_gate_decision (suite, mode, baseline_ref, current_ref, baseline, run_id) "
                       "VALUES ('takes-quality', 'default', 'baseline.json', 'run 999999', '{\"scores\": {}}', 999999)")


def test_brain_eval_pairs_by_question_and_lists_what_one_run_lacks(connect_as, reviewer_id):
    runner = connect_as("evalledger_runner")

    def worse(number, row):
        if number % 3 == 0:
            row["citation_rate"] = 0.5

    a = record_run(runner, reviewer_id, count=30)
    b = record_run(runner, reviewer_id, count=28, bend=worse)
    rows = connect_as("evalledger_auditor").execute("SELECT evalledger.brain_eval_paired_v1(%s, %s)",
                                                    (a.eval_run_id, b.eval_run_id)).fetchone()[0]
    assert [r["dimension"] for r in rows] == [
        "question_passed", "citation_rate", "hallucination_rate", "staleness_recognised", "diagnosis_accuracy",
        "levers_mapped", "confidence_in_band", "narrative_coherence"]
    passed, citation = rows[0], rows[1]
    assert citation["shared"] == 28 and citation["only_b"] == []
    assert len(citation["only_a"]) == 2  # the two questions run B never asked, by id
    assert citation["mean_difference"] < 0 and citation["ci95"][1] < 0
    assert passed["mcnemar_p"] is not None  # pass/fail items: McNemar's exact test
