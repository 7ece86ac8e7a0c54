"""`run takes-quality --repeats K` end to end against the provider stand-in: each judge asked K times
per cycle, concurrently, each repeat a numbered row; budgeted like any call; a resumed run never
asks a stored repeat again."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest

from tests.cli import run_cli
from tests.e2e.test_takes_quality_cli import CORPUS, PANEL, tq, write_jsonl
from tests.standin import steps


@pytest.fixture
def env(standin, dsn, tmp_path):
    return {**standin.env(), "DATABASE_URL": dsn, "EVALLEDGER_HOME": str(tmp_path / "home")}


@pytest.fixture
def corpus(env, tmp_path):
    path = write_jsonl(tmp_path / "takes.jsonl", CORPUS)
    assert run_cli("corpus", "load", str(path), env=env).code == 0
    return path


def rows(admin):
    return admin.execute("SELECT model, array_agg(repeat_no ORDER BY repeat_no), "
                         "array_agg((scores ->> 'accuracy')::numeric ORDER BY (scores ->> 'accuracy')::numeric) "
                         "FROM eval_takes_quality_judge_verdicts WHERE NOT call_started "
                         "GROUP BY model ORDER BY model").fetchall()


def test_three_repeats_are_three_numbered_rows_per_judge_asked_at_once(env, corpus, standin, admin):
    # Known noise per repeat: gpt-4o scores accuracy 6, 7 and 8; the others 8 every time.
    standin.script("gpt-4o", *(steps.with_scores(accuracy=a) for a in (6, 7, 8)))
    standin.rendezvous_by_model = {"gpt-4o": 3, "claude-opus-4-7": 3, "gemini-1.5-pro": 3}
    result, receipt = tq(env, "--repeats", "3", "--concurrency", "8")
    assert result.code == 0, result.err
    assert rows(admin) == [("anthropic:claude-opus-4-7", [1, 2, 3], [8, 8, 8]),
                           ("google:gemini-1.5-pro", [1, 2, 3], [8, 8, 8]),
                           ("openai:gpt-4o", [1, 2, 3], [6, 7, 8])]
    assert len(standin.requests) == 9
    # The repeats of one judge were in flight together (the panel's concurrency).
    assert standin.max_in_flight_by_model == {"gpt-4o": 3, "claude-opus-4-7": 3, "gemini-1.5-pro": 3}
    assert receipt["repeats"] == 3 and receipt["cycles_run"] == 1 and receipt["successes_per_cycle"] == [3]
    assert receipt["scores"]["accuracy"]["per_model"] == {"openai:gpt-4o": 7, "anthropic:claude-opus-4-7": 8,
                                                          "google:gemini-1.5-pro": 8}
    assert receipt["verdict"] == "pass"
    # Each repeat is priced: the run's cost is every call's.
    assert receipt["cost_usd"] == pytest.approx(float(admin.execute(
        "SELECT sum(cost_usd) FROM eval_takes_quality_judge_verdicts").fetchone()[0]))
    # gpt-4o's accuracy straddles the rubric's pass mean (6 < 7 <= 8): the item is flaky.
    assert admin.execute("SELECT judge_model, dimension, rule FROM evalledger.takes_quality_flaky_v1").fetchall() == [
        ("openai:gpt-4o", "accuracy", "every_dim_mean_at_least")]
    shown = run_cli("takes-quality", "show", str(receipt["run_id"]), env=env)
    assert "  cycle 1 repeat 3  openai:gpt-4o" in shown.out


def test_one_repeat_reads_as_before(env, corpus, standin, admin):
    result, receipt = tq(env)
    assert result.code == 0 and "repeats" not in receipt
    assert admin.execute("SELECT DISTINCT repeat_no FROM eval_takes_quality_judge_verdicts").fetchall() == [(1,)]
    # A run of another K is another eval: it does not read back the run of 1.
    again, receipt_3 = tq(env, "--repeats", "2")
    assert again.code == 0 and receipt_3["run_id"] != receipt["run_id"] and len(standin.requests) == 3 + 6


def test_a_resumed_run_asks_only_the_repeats_not_stored(env, corpus, standin, admin):
    standin.script("gemini-1.5-pro", steps.server_error(500))
    result, receipt = tq(env, "--repeats", "3", "--deadline", "0", "--concurrency", "1")
    assert receipt["final"] is False
    [error] = receipt["errors"]
    assert error.startswith("cycle 1 google:gemini-1.5-pro")
    failed = admin.execute("SELECT repeat_no FROM eval_takes_quality_judge_verdicts "
                           "WHERE error_kind = 'provider_error' AND NOT call_started").fetchone()[0]
    assert error.startswith(f"cycle 1 google:gemini-1.5-pro{'' if failed == 1 else f' (repeat {failed})'}: provider_error")
    before = len(standin.requests)
    assert before == 9
    result, receipt = tq(env, "--repeats", "3")
    assert result.code == 0 and receipt["final"] is True
    # One call more: the failed repeat, nothing stored asked again.
    assert len(standin.requests) == before + 1 and standin.requests[-1].model == "gemini-1.5-pro"
    assert admin.execute("SELECT count(*) FROM evalledger.takes_quality_current_v1(%s) WHERE contributes",
                         (receipt["run_id"],)).fetchone()[0] == 9
    assert rows(admin)[1][1] == sorted([1, 2, 3, failed])  # gemini: its failed repeat's row and its answer


def test_the_budget_counts_every_repeat(env, corpus, standin):
    # Projected per call: ~$0.0102 gpt-4o, ~$0.0082 gpt-4.1, ~$0.0051 gemini-1.5-pro; three repeats of
    # each would be ~$0.07 projected. A call reserves its projection and, answered, spends what it
    # cost: the cap holds what the repeats cost, and the repeats past it are not made.
    result, receipt = tq(env, "--models", "openai:gpt-4o,openai:gpt-4.1,google:gemini-1.5-pro", "--budget-usd", "0.03",
                         "--repeats", "3", "--concurrency", "2")
    made = [r.model for r in standin.requests]
    assert 0 < len(made) < 9
    assert 0 < receipt["cost_usd"] <= 0.03
    skipped = [e for e in receipt["errors"] if ": budget_exhausted: skipped: projected cost of " in e]
    assert len(skipped) == 9 - len(made)
    assert any("(repeat " in e for e in skipped), skipped
    assert json.loads(json.dumps(receipt))["final"] is False


def test_repeats_out_of_range_are_refused_before_anything(env, corpus, standin, admin):
    for bad in ("0", "11", "x"):
        result, _ = tq(env, "--repeats", bad)
        assert result.code == 3 and result.err.startswith("evalledger: error: ") and "--repeats" in result.err
    assert standin.requests == [] and admin.execute("SELECT count(*) FROM eval_takes_quality_runs").fetchone()[0] == 0


# --- work-quality ----------------------------------------------------------------------------


def test_work_quality_repeats_are_numbered_rows_and_a_straddle_is_flaky(env, standin, admin, tmp_path):
    from click.testing import CliRunner

    from evalledger.cli import cli
    from evalledger.suites.work_quality import snapshot as snap_mod
    from evalledger.suites.work_quality.snapshot import DIMENSIONS

    work = tmp_path / "fix.diff"
    work.write_text("--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-return a - b\n+return a + b\n")
    # Known noise per repeat: gpt-4o's scores run through `noisy` call by call; claude's stay 0.8.
    noisy = {"gpt-4o": [0.6, 0.8, 0.7, 0.6, 0.7, 0.75]}
    asked = {"gpt-4o": 0}

    def respond(model, system, user):
        if model in noisy:
            score = noisy[model][asked[model]]
            asked[model] += 1
        else:
            score = 0.8
        body = {d: score for d in DIMENSIONS}
        body.update(narrative=f"{model} read the diff.", confidence=0.7,
                    relative_vs_prev={d: "n/a" for d in DIMENSIONS}, relative_narrative="")
        return body

    standin.responder = respond
    wq_env = {**env, "EVALLEDGER_WORK_QUALITY_MODELS": None}

    def wq(*args):
        argv = ["run", "work-quality", "--kind", "bot", "--name", "review-pr", "--task", "fix add()",
                "--work-product", str(work), "--models", "openai:gpt-4o,anthropic:claude-opus-4-7",
                "--concurrency", "1", "--repeats", "3", "--json", *args]
        return CliRunner().invoke(cli, argv, env=wq_env, catch_exceptions=False)

    first = wq("--run-id", "run-1")
    assert first.exit_code == 0, first.stderr
    snap = snap_mod.loads(first.stdout)
    assert [v.model for v in snap.aggregate.verdicts] == ["openai:gpt-4o"] * 3 + ["anthropic:claude-opus-4-7"] * 3
    assert snap.aggregate.mean_scores["overall"] == 0.75  # (mean(0.6, 0.8, 0.7) + 0.8) / 2
    assert snap.aggregate.disagreement["overall"] == pytest.approx(0.1)
    assert admin.execute("SELECT model, array_agg(repeat_no ORDER BY repeat_no) FROM eval_work_quality_judge_verdicts "
                         "WHERE NOT call_started GROUP BY model ORDER BY model").fetchall() == [
        ("anthropic:claude-opus-4-7", [1, 2, 3]), ("openai:gpt-4o", [1, 2, 3])]
    # The same run id with another K is refused before a call.
    before = len(standin.requests)
    other = CliRunner().invoke(cli, ["run", "work-quality", "--kind", "bot", "--name", "review-pr", "--task", "fix add()",
                                     "--work-product", str(work), "--models", "openai:gpt-4o,anthropic:claude-opus-4-7",
                                     "--run-id", "run-1", "--repeats", "2"], env=wq_env)
    assert other.exit_code == 0 and len(standin.requests) == before  # complete: read back, no call
    second = wq("--run-id", "run-2")
    assert second.exit_code == 0, second.stderr
    # gpt-4o's overall 0.6, 0.7, 0.75 straddles the regression line 0.75 - 0.08 = 0.67.
    assert admin.execute("SELECT dimension, judge_model, repeats, threshold FROM evalledger.work_quality_flaky_v1 "
                         "ORDER BY dimension").fetchall() == [
        ("overall", "openai:gpt-4o", 3, Decimal("0.67")), ("value_for_money", "openai:gpt-4o", 3, Decimal("0.67"))]
    row = admin.execute("SELECT items, max_repeats, judge_variance, flaky_items FROM evalledger.work_quality_repeat_variance_v1 "
                        "WHERE dimension = 'overall'").fetchone()
    import statistics

    expected = (2 * statistics.variance([0.6, 0.8, 0.7]) + 2 * 0 + 2 * statistics.variance([0.6, 0.7, 0.75]) + 0) / 8
    assert row[:2] == (2, 3) and row[2] == pytest.approx(expected) and row[3] == 1
