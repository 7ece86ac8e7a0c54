"""Gates that know noise, end to end (issue 36, item 5): `takes-quality regress` against a stand-in
panel whose judges answer with a known noise (each judge off the true score by -1, 0 or +1, per run).
The same work judged twice is not a significant regression; a planted drop of twice the noise is;
a drop near the threshold is possible, not significant, while the seed's default gate keeps its
rule. The paired rows and the decision are the database's, read back from the CLI's JSON and text;
`snapshot compare` lists the judges one snapshot lacks and calls a gate without an interval
inconclusive; `brain-eval compare` lists the questions one run lacks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import jsonschema

from tests.cli import run_cli

pytestmark = pytest.mark.db

SCHEMAS = Path(__file__).resolve().parents[2] / "runner/evalledger/suites"


def valid(text: str, suite: str, name: str) -> dict:
    """stdout as JSON, valid against the schema shipped in the package."""
    document = json.loads(text)
    jsonschema.validate(document, json.loads((SCHEMAS / suite / "schemas" / f"{name}.v1.schema.json").read_text()))
    return document

PANEL = ("gpt-4o", "claude-opus-4-7", "gemini-1.5-pro")
TAKES = [{"slug": f"a/co{n}", "kind": "take", "holder": "ann", "weight": 0.6, "since": "2026-01",
          "source": "meeting notes", "claim": f"Company {n} will double revenue next year."} for n in range(3)]


@pytest.fixture
def env(standin, dsn, tmp_path):
    return {**standin.env(), "DATABASE_URL": dsn, "EVALLEDGER_HOME": str(tmp_path / "home")}


@pytest.fixture
def baseline(env, standin, tmp_path) -> Path:
    """A baseline receipt: true score 8, the judges off it by +1, 0 and -1."""
    takes = tmp_path / "takes.jsonl"
    takes.write_text("".join(json.dumps(t) + "\n" for t in TAKES))
    assert run_cli("corpus", "load", str(takes), env=env).code == 0
    standin.score_by_model = dict(zip(PANEL, (9, 8, 7)))
    made = run_cli("run", "takes-quality", "--seed", "5", "--limit", "3", "--json", env=env)
    assert made.code == 0, made.err
    path = tmp_path / "baseline.json"
    path.write_text(made.out)
    return path


def regress(env, standin, path, scores, *args):
    """`regress --rerun` with the judges answering scores (gpt-4o, claude, gemini) this time."""
    standin.score_by_model = dict(zip(PANEL, scores))
    return run_cli("regress", "--against", str(path), "--rerun", *args, env=env)


def overall(result) -> dict:
    document = json.loads(result.out)
    return next(r for r in document["paired"] if r["dimension"] == "overall")


def test_the_same_work_judged_twice_is_not_a_significant_regression(env, standin, baseline):
    # Each judge off by its noise again, in another order: the mean is unchanged, the pairs differ.
    judged = regress(env, standin, baseline, (8, 7, 9), "--gate", "significant", "--json")
    assert judged.code == 0, judged.err
    document = valid(judged.out, "takes_quality", "takes_quality_regress")
    assert (document["mode"], document["decision"], document["reasons"]) == ("significant", "pass", [])
    row = overall(judged)
    # Differences -1, -1, +2 (sorted by judge: claude, gemini, gpt-4o): mean 0, stderr 1 (scipy's sem).
    assert row["shared"] == 3 and row["mean_difference"] == pytest.approx(0, abs=1e-12)
    assert row["stderr"] == pytest.approx(1.0, rel=1e-12)
    assert row["ci95"] == pytest.approx([-1.959963984540054, 1.959963984540054], rel=1e-9)
    # The default gate (the seed's) agrees: no mean dropped.
    assert regress(env, standin, baseline, (8, 7, 9)).code == 0
    # "possible" calls it one: the interval reaches past -0.5.
    assert regress(env, standin, baseline, (8, 7, 9), "--gate", "possible").code == 1


def test_a_planted_drop_of_twice_the_noise_is_significant(env, standin, baseline):
    text = regress(env, standin, baseline, (7, 5, 6), "--gate", "significant")
    assert text.code == 1, text.err
    assert "paired difference (now - baseline) over the judges both runs share (docs/statistics.md)\n" in text.out
    assert "  overall             -2.00 (stderr 0.58, 95% CI -3.13 to -0.87; 3 shared judges)  regression\n" in text.out
    assert text.out.splitlines()[-1].startswith("gate significant (threshold 0.5, gate ")
    assert "REGRESSION: accuracy: 95% CI -3.132 to -0.868 lies wholly beyond -0.5" in text.out


def test_a_drop_near_the_threshold_is_possible_not_significant(env, standin, baseline):
    # Differences 0, -1, -1: mean -0.67 (past the seed's 0.5), interval -1.32 to -0.01.
    significant = regress(env, standin, baseline, (9, 7, 6), "--gate", "significant")
    assert significant.code == 0, significant.err
    assert "OK: no paired interval reaches beyond -0.5" in significant.out
    possible = regress(env, standin, baseline, (9, 7, 6), "--gate", "possible")
    assert possible.code == 1
    assert "reaches beyond -0.5" in possible.out
    default = regress(env, standin, baseline, (9, 7, 6))
    assert default.code == 1 and default.out.endswith(
        "REGRESSION: accuracy, attribution, weight_calibration, kind_classification, signal_density, overall "
        "dropped by more than 0.5\n")


def test_snapshot_compare_lists_unshared_judges_and_a_gate_without_an_interval_is_inconclusive(env, tmp_path):
    def snap(run_id, judges):
        return {"schema_version": 1, "kind": "bot", "name": "review-pr", "run_id": run_id,
                "at": "2026-05-01T00:00:00Z", "metrics": {"cost_usd": 0, "tokens": 0, "duration_ms": 0,
                                                           "iterations": 0, "model_calls": 0, "retries": 0},
                "aggregate": {"verdicts": [{"model": m, "family": m.split(":")[0], "same_family_as_bot": False,
                                            "scores": {"overall": s, "value_for_money": s}, "narrative": "",
                                            "confidence": 0.7} for m, s in judges.items()],
                              "mean_scores": {"overall": sum(judges.values()) / len(judges),
                                              "value_for_money": sum(judges.values()) / len(judges)}}}

    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text(json.dumps(snap("a", {"openai:gpt-4o": 0.8, "xai:grok-2": 0.8})))
    b.write_text(json.dumps(snap("b", {"openai:gpt-4o": 0.8, "anthropic:claude-opus-4-7": 0.8})))
    compared = run_cli("snapshot", "compare", str(a), str(b), "--gate", "significant", env=env)
    assert compared.code == 2, compared.err
    assert "  overall         +0.000 (no interval: 1 shared judge, an interval needs 2)\n" in compared.out
    assert "    not shared, only in A: xai:grok-2\n" in compared.out
    assert "    not shared, only in B: anthropic:claude-opus-4-7\n" in compared.out
    assert "inconclusive: value_for_money: no interval (1 shared judge; an interval needs 2)" in compared.err
    as_json = valid(run_cli("snapshot", "compare", str(a), str(b), "--json", env=env).out, "work_quality",
                    "snapshot_compare")
    assert as_json["gate"]["decision"] == "pass" and as_json["regression"] is False  # the seed's gate: no drop
    row = next(r for r in as_json["paired"] if r["dimension"] == "overall")
    assert (row["only_a"], row["only_b"]) == (["xai:grok-2"], ["anthropic:claude-opus-4-7"])


def snapshot_of(run_id: str, verdicts: list[tuple[str, float]]) -> dict:
    """A Snapshot document whose aggregate.verdicts are (model, score) in order, a model K times
    with --repeats K; mean_scores the mean of the judges' means, as the database decides them."""
    means = {m: sum(s for n, s in verdicts if n == m) / sum(1 for n, _ in verdicts if n == m) for m, _ in verdicts}
    mean = sum(means.values()) / len(means)
    return {"schema_version": 1, "kind": "bot", "name": "review-pr", "run_id": run_id, "at": "2026-05-01T00:00:00Z",
            "metrics": {"cost_usd": 0, "tokens": 0, "duration_ms": 0, "iterations": 0, "model_calls": 0,
                        "retries": 0},
            "aggregate": {"verdicts": [{"model": m, "family": m.split(":")[0], "same_family_as_bot": False,
                                        "scores": {"overall": s, "value_for_money": s}, "narrative": "",
                                        "confidence": 0.7} for m, s in verdicts],
                          "mean_scores": {"overall": mean, "value_for_money": mean}}}


def test_snapshot_compare_pairs_each_judge_once_by_its_mean_over_its_repeats(env, tmp_path):
    """Snapshots of --repeats 2 (each judge twice in aggregate.verdicts): one paired row per judge,
    its mean over its repeats, never a repeat paired as a judge of its own ("model (2)"); against a
    snapshot of one repeat, the judges are the same two."""
    gpt, claude = "openai:gpt-4o", "anthropic:claude-opus-4-7"
    a, b, single = tmp_path / "a.json", tmp_path / "b.json", tmp_path / "single.json"
    a.write_text(json.dumps(snapshot_of("a", [(gpt, 0.8), (claude, 0.7), (gpt, 0.6), (claude, 0.7)])))
    b.write_text(json.dumps(snapshot_of("b", [(gpt, 0.5), (claude, 0.6), (gpt, 0.5), (claude, 0.8)])))
    single.write_text(json.dumps(snapshot_of("single", [(gpt, 0.5), (claude, 0.7)])))
    compared = valid(run_cli("snapshot", "compare", str(a), str(b), "--json", env=env).out, "work_quality",
                     "snapshot_compare")
    row = next(r for r in compared["paired"] if r["dimension"] == "overall")
    # The judges' means: A gpt-4o 0.7, claude 0.7; B gpt-4o 0.5, claude 0.7. Differences -0.2 and 0.
    assert (row["shared"], row["only_a"], row["only_b"]) == (2, [], [])
    assert row["mean_difference"] == pytest.approx(-0.1, abs=1e-12)
    assert row["stderr"] == pytest.approx(0.1, rel=1e-9)  # scipy's sem of (-0.2, 0.0)
    # The seed's comparison of mean_scores is as before: 0.6 against 0.7.
    assert compared["comparison"]["overall_delta"] == pytest.approx(-0.1, abs=1e-12)
    text = run_cli("snapshot", "compare", str(a), str(b), env=env)
    assert "2 shared judges" in text.out and "(2)" not in text.out, text.out
    against_one = valid(run_cli("snapshot", "compare", str(a), str(single), "--json", env=env).out, "work_quality",
                        "snapshot_compare")
    row = next(r for r in against_one["paired"] if r["dimension"] == "overall")
    assert (row["shared"], row["only_a"], row["only_b"]) == (2, [], [])
    assert row["mean_difference"] == pytest.approx(-0.1, abs=1e-12)


def test_brain_eval_compare_lists_the_questions_one_run_lacks(env, connect_as, reviewer_id):
    from tests.builders import record_run

    runner = connect_as("evalledger_runner")

    def unsure(number, row):
        if number % 2:
            row["narrative_coherence_rating"] = 2

    a = record_run(runner, reviewer_id, count=30).eval_run_id
    b = record_run(runner, reviewer_id, count=29, bend=unsure).eval_run_id
    text = run_cli("brain-eval", "compare", str(a), str(b), env=env)
    assert text.code == 0, text.err
    assert text.out.startswith(f"run {b} against run {a}: paired difference (B - A) over the questions both have "
                               "(docs/statistics.md)\n")
    assert "  question_passed      " in text.out and "29 shared questions); McNemar exact p " in text.out
    assert "    not shared, only in A: " in text.out
    document = valid(run_cli("brain-eval", "compare", str(a), str(b), "--json", env=env).out, "brain_eval",
                     "brain_eval_compare")
    coherence = next(r for r in document["paired"] if r["dimension"] == "narrative_coherence")
    assert coherence["shared"] == 29 and len(coherence["only_a"]) == 1 and coherence["only_b"] == []
    assert coherence["mean_difference"] < 0 and coherence["ci95"][1] < 0
    unknown = run_cli("brain-eval", "compare", str(a), "00000000-0000-0000-0000-000000000000", env=env)
    assert unknown.code == 3 and unknown.err.startswith("evalledger: error: no run 00000000-")
