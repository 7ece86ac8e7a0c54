"""Runs CI can trust and retry, end to end (issue 19, "the identity of an eval"): recorded replies never
shadow live judging, an outage or a starved budget is retried rather than read back, an fs run
has an fs receipt, --rerun judges again, two identical runs pay once, and work-quality retries a
--run-id whose judges all failed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalledger.suites.takes_quality import receipts
from tests.builders import as_stored
from tests.cli import run_cli, start_script, wait_until
from tests.e2e.test_takes_quality_cli import corpus, env  # noqa: F401 (fixtures)
from tests.e2e.test_takes_quality_cli import CORPUS, PANEL, count, tq, write_jsonl
from tests.standin import steps

DEMO_TAKES = Path(__file__).resolve().parents[2] / "runner/evalledger/suites/takes_quality/fixtures/takes_demo.jsonl"
NO_KEYS = {k: "" for k in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY")}


def test_recorded_replies_never_shadow_live_judging(env, corpus, standin, admin, tmp_path):
    recorded, canned = tq({**env, **NO_KEYS}, "--judges", "recorded")
    assert recorded.code in (0, 1, 2) and canned["judges"] == "recorded"
    # The same command with live keys judges live: it does not read the recorded run back.
    live, receipt = tq(env)
    assert live.code == 0, live.err
    assert len(standin.requests) == 3 and receipt["judges"] == "live" and receipt["run_id"] != canned["run_id"]
    assert receipt["corpus"]["corpus_sha8"] == canned["corpus"]["corpus_sha8"]
    # Each has its own disk copy, and each is read back by its own kind of command only.
    home = tmp_path / "home" / "eval-receipts"
    assert receipts.file_name(canned).endswith(".recorded.json")
    assert json.loads((home / receipts.file_name(canned)).read_text()) == canned
    assert json.loads((home / receipts.file_name(receipt)).read_text()) == receipt
    standin.reset()
    assert tq(env)[1] == receipt and standin.requests == []
    assert tq({**env, **NO_KEYS}, "--judges", "recorded")[1] == canned
    listed = run_cli("takes-quality", "list", "--json", env=env)
    assert sorted(r["judges"] for r in json.loads(listed.out)["rows"]) == ["live", "recorded"]


def test_the_recorded_banner_says_why_even_with_every_key_set(env, corpus):
    result, _ = tq(env, "--judges", "recorded", json_out=False)
    assert result.code in (0, 1, 2), result.err
    assert ("judges: recorded replies shipped with evalledger, not live calls (asked for with --judges recorded; "
            "leave it out for live judges)") in result.out
    assert "no API keys" not in result.out


def test_an_outage_is_not_a_verdict_and_the_same_command_retries_exactly_the_failed_calls(env, corpus, standin,
                                                                                         admin):
    standin.set_default("*", steps.server_error(500))
    down, receipt = tq(env, "--retries", "0", "--deadline", "0", "--cycles", "3")
    assert down.code == 2, down.err
    assert receipt["verdict"] == "inconclusive" and receipt["final"] is False and receipt["cycles_run"] == 1
    assert receipt["successes_per_cycle"] == [0]
    assert receipt["errors"] == [f"cycle 1 {m}: provider_error: HTTP 500: The server had an error processing your "
                                 "request. (attempt 1; still failing at the 0s deadline)" for m in PANEL]
    assert receipt["verdictMessage"].endswith("; not final: 3 call(s) failed outside the judges' content, and "
                                              "running the same eval again retries them")
    assert "is not final" in down.err and "run the same command again to retry them" in down.err
    assert count(admin, "SELECT completed_at FROM eval_takes_quality_runs") is None
    assert run_cli("trend", "--json", env=env).out.count('"id"') == 0  # no verdict to trend
    opened = json.loads(run_cli("takes-quality", "list", "--open", "--json", env=env).out)["rows"]
    assert [r["id"] for r in opened] == [receipt["run_id"]]

    # The providers are back: the same command calls exactly the three that failed, once each.
    standin.reset()
    back, final = tq(env, "--retries", "0", "--deadline", "0", "--cycles", "3")
    assert back.code == 0, back.err
    assert sorted(r.model for r in standin.requests) == sorted(m.split(":")[1] for m in PANEL)
    assert final["run_id"] == receipt["run_id"] and final["final"] is True and final["verdict"] == "pass"
    assert final["successes_per_cycle"] == [3]
    assert final["errors"] == [e + "; retried" for e in receipt["errors"]]
    # Stored as the disk copy has it, but for how the calls went (six made, all one by one) and the
    # dimensions' stderr and ci95.
    assert count(admin, "SELECT receipt_json FROM eval_takes_quality_runs") == as_stored(final)
    assert final["calls"] == {"sync": 6, "batch": 0, "cached_input_tokens": 0}
    # And the final verdict is read back from then on.
    standin.reset()
    assert tq(env, "--retries", "0", "--deadline", "0", "--cycles", "3")[1] == final and standin.requests == []


def test_a_run_starved_by_its_budget_is_retried_with_a_budget_that_allows_it(env, corpus, standin):
    starved, receipt = tq(env, "--budget-usd", "0")
    assert starved.code == 2 and receipt["final"] is False and standin.requests == []
    fed, final = tq(env, "--budget-usd", "5")
    assert fed.code == 0, fed.err
    assert len(standin.requests) == 3 and final["run_id"] == receipt["run_id"] and final["final"] is True
    assert final["errors"] == [e + "; retried" for e in receipt["errors"]]
    assert 0 < final["cost_usd"] <= 5


def test_a_fs_run_has_a_fs_receipt_and_regress_rejudges_from_the_files(dsn, tmp_path):
    env = {"DATABASE_URL": dsn, "EVALLEDGER_HOME": str(tmp_path / "home"), **NO_KEYS}
    assert run_cli("demo", env=env).code == 0  # the demo's db run of the same takes, recorded
    # The README's example, verbatim but for the path.
    result, baseline = tq_with(env, "--source", "fs", "--path", str(DEMO_TAKES), "--seed", "7", "--judges", "recorded")
    assert result.code == 0, result.err
    assert baseline["corpus"]["source"] == "fs" and baseline["corpus"]["path"] == str(DEMO_TAKES)
    assert baseline["corpus"]["slug_prefix"] is None and baseline["seed"] == 7
    path = tmp_path / "baseline.json"
    path.write_text(json.dumps(baseline))
    regress = run_cli("regress", "--against", str(path), "--judges", "recorded", env=env)
    assert regress.code == 0, regress.err
    assert "source fs; slug prefix none; 12 takes; seed 7" in regress.out
    assert f"run {baseline['run_id']} of this eval was recorded earlier" in regress.out


def tq_with(env, *args):
    result = run_cli("run", "takes-quality", *args, "--json", env=env)
    return result, (json.loads(result.out) if result.code in (0, 1, 2) else None)


def test_rerun_judges_a_complete_eval_again_as_its_next_judging(env, corpus, standin, admin):
    _, first = tq(env)
    standin.reset()
    standin.score = 6
    again, second = tq(env, "--rerun")
    assert again.code == 1 and len(standin.requests) == 3
    assert second["run_id"] != first["run_id"] and second["rerun"] == 1 and first["rerun"] == 0
    assert second["corpus"]["corpus_sha8"] == first["corpus"]["corpus_sha8"]
    # Without --rerun the newest judging is the one read back; the first stays in the ledger and trend.
    standin.reset()
    text, _ = tq(env, json_out=False)
    assert f"run {second['run_id']} of this eval was recorded earlier" in text.out and standin.requests == []
    trend = json.loads(run_cli("trend", "--json", env=env).out)["rows"]
    assert [r["id"] for r in trend] == [second["run_id"], first["run_id"]]
    fresh, third = tq(env, "--fresh")
    assert third["rerun"] == 2


def two_at_once(args, env, standin, admin, started: str, calls: int, first_only=()) -> tuple[str, str]:
    """The same command twice at once (the first with first_only added): the second starts once the
    first has `calls` calls started (the `started` table's call_started rows), the judges answer only
    once the second says it waits; both must exit 0. The first's stdout, and all the second printed."""
    import threading

    standin.gate = threading.Event()
    first = start_script(*args, *first_only, env=env, text=True)
    second = None
    try:
        wait_until(first, lambda: count(admin, f"SELECT count(*) FROM {started} WHERE call_started") >= calls,
                   f"started {calls} calls")
        second = start_script(*args, env=env, text=True)
        said = []
        for line in second.stdout:
            said.append(line)
            if "waiting for it" in line:
                break
        standin.gate.set()
        out, err = first.communicate(timeout=120)
        rest, second_err = second.communicate(timeout=120)
    finally:
        standin.gate.set()
        for proc in (first, second):
            if proc is not None and proc.poll() is None:
                proc.kill()
    assert first.returncode == 0 and second.returncode == 0, (err, second_err)
    return out, "".join(said) + rest


@pytest.mark.server_timeouts
@pytest.mark.processes
def test_two_identical_runs_at_once_pay_for_each_call_once(env, corpus, standin, admin):
    out, second_out = two_at_once(["run", "takes-quality", "--seed", "11"], env, standin, admin,
                                  "eval_takes_quality_judge_verdicts", 3, first_only=["--json"])
    assert len(standin.requests) == 3  # not 6
    run_id = json.loads(out)["run_id"]
    assert f"run {run_id} is being judged by another runner: waiting for it" in second_out
    assert f"run {run_id} of this eval was recorded earlier" in second_out
    assert count(admin, "SELECT count(*) FROM eval_takes_quality_runs") == 1


def test_a_judge_prompt_over_the_limit_is_refused_before_any_row_and_one_over_a_context_is_warned(
        env, standin, admin, tmp_path):
    big = [{**CORPUS[0], "slug": f"a/{n}", "claim": "x" * 4000} for n in range(130)]
    path = write_jsonl(tmp_path / "big.jsonl", big)
    refused, _ = tq(env, "--source", "fs", "--path", str(path), "--limit", "130")
    assert refused.code == 3
    assert refused.err.startswith("evalledger: error: --max-prompt-chars: the judge prompt is ")
    assert "over the limit of 400,000: judge a smaller sample (--limit), or raise --max-prompt-chars" in refused.err
    assert standin.requests == [] and count(admin, "SELECT count(*) FROM eval_takes_quality_runs") == 0
    # Allowed, it is still about 134,000 tokens: over gpt-4o's 128,000-token context, which is said first.
    warned, receipt = tq(env, "--source", "fs", "--path", str(path), "--limit", "130", "--max-prompt-chars", "1000000")
    assert warned.code == 0, warned.err
    [line] = [line for line in warned.err.splitlines() if "warning" in line]
    assert "tokens: with a reply of up to 1,024 it does not fit the 128,000-token context of openai:gpt-4o" in line
    assert receipt["corpus"]["n_takes"] == 130


# --- work-quality --------------------------------------------------------------------------------


def wq(env, work, *args):
    return run_cli("run", "work-quality", "--kind", "bot", "--name", "review-pr", "--task", "fix add()",
                   "--work-product", str(work), "--models", "openai:gpt-4o,anthropic:claude-opus-4-7",
                   "--retries", "0", "--deadline", "0", *args, env=env)


@pytest.mark.parametrize("failure", [steps.server_error(500), steps.out_of_scale(value=7)],
                         ids=["http-500", "out-of-scale"])
def test_work_quality_retries_a_run_id_whose_judges_all_failed_and_lists_it_open(env, standin, admin, tmp_path,
                                                                                 failure):
    from evalledger.suites.work_quality.snapshot import DIMENSIONS

    work = tmp_path / "fix.diff"
    work.write_text("--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-return a - b\n+return a + b\n")
    standin.responder = lambda model, system, user: {
        **{d: 0.8 for d in DIMENSIONS}, "narrative": "read it", "confidence": 0.7,
        "relative_vs_prev": {d: "n/a" for d in DIMENSIONS}, "relative_narrative": ""}
    standin.set_default("*", failure)
    failed = wq(env, work, "--run-id", "build-42")
    assert failed.code == 3
    assert "no judge produced a verdict" in failed.err
    assert "run build-42 stays open in the ledger, and the same command again judges it again" in failed.err
    listed = json.loads(run_cli("work-quality", "list", "--json", env=env).out)["rows"]
    assert [(r["run_id"], r["state"], r["regression"]) for r in listed] == [("build-42", "open", None)]
    text = run_cli("work-quality", "list", env=env).out
    assert "open" in text and " no " not in f" {text} "
    standin.reset()
    standin.responder = lambda model, system, user: {
        **{d: 0.8 for d in DIMENSIONS}, "narrative": "read it", "confidence": 0.7,
        "relative_vs_prev": {d: "n/a" for d in DIMENSIONS}, "relative_narrative": ""}
    judged = wq(env, work, "--run-id", "build-42")
    assert judged.code == 0, judged.err
    assert len(standin.requests) == 2
    listed = json.loads(run_cli("work-quality", "list", "--json", env=env).out)["rows"]
    assert [(r["run_id"], r["state"], r["regression"]) for r in listed] == [("build-42", "complete", False)]
    assert count(admin, "SELECT count(*) FROM eval_work_quality_snapshots") == 1


def test_a_work_quality_retry_finishes_when_a_judge_contributes_before_the_next_is_asked(env, standin, admin,
                                                                                          tmp_path):
    """Issue 37, item 7: a retry of a run whose judges all failed on content plans both judges; once
    the first contributes, the second's failure is its verdict (the database refuses another row:
    "nothing to retry"). The retry skips it with a note and finishes, instead of exit 3 with the
    database's raw message. One provider with one call at a time asks the judges in turn."""
    from evalledger.suites.work_quality.snapshot import DIMENSIONS

    work = tmp_path / "fix.diff"
    work.write_text("--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-return a - b\n+return a + b\n")
    standin.responder = lambda model, system, user: {
        **{d: 0.8 for d in DIMENSIONS}, "narrative": "read it", "confidence": 0.7,
        "relative_vs_prev": {d: "n/a" for d in DIMENSIONS}, "relative_narrative": ""}
    one_provider = ("--models", "openai:gpt-4o,openai:gpt-4.1", "--concurrency", "1")
    standin.set_default("*", steps.out_of_scale(value=7))
    failed = wq(env, work, "--run-id", "build-7", *one_provider)
    assert failed.code == 3 and "no judge produced a verdict" in failed.err
    standin.reset()
    standin.responder = lambda model, system, user: {
        **{d: 0.8 for d in DIMENSIONS}, "narrative": "read it", "confidence": 0.7,
        "relative_vs_prev": {d: "n/a" for d in DIMENSIONS}, "relative_narrative": ""}
    judged = wq(env, work, "--run-id", "build-7", *one_provider)
    assert judged.code == 0, judged.err
    assert [r.model for r in standin.requests] == ["gpt-4o"]  # the second is never asked: nothing to pay for
    assert ("judge openai:gpt-4.1: its verdict on this run was stored earlier and another judge has contributed "
            "since: skipped, not retried\n") in judged.out
    assert judged.err == ""
    listed = json.loads(run_cli("work-quality", "list", "--json", env=env).out)["rows"]
    assert [(r["run_id"], r["state"]) for r in listed] == [("build-7", "complete")]
    note = count(admin, "SELECT snapshot_json #>> '{aggregate,note}' FROM eval_work_quality_snapshots")
    assert "judge openai:gpt-4.1 skipped: out_of_scale" in note


@pytest.mark.server_timeouts
@pytest.mark.processes
def test_two_work_quality_runs_of_one_run_id_at_once_pay_for_each_judge_once(env, standin, admin, tmp_path):
    from evalledger.suites.work_quality.snapshot import DIMENSIONS

    work = tmp_path / "fix.diff"
    work.write_text("--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-return a - b\n+return a + b\n")
    standin.responder = lambda model, system, user: {
        **{d: 0.8 for d in DIMENSIONS}, "narrative": "read it", "confidence": 0.7,
        "relative_vs_prev": {d: "n/a" for d in DIMENSIONS}, "relative_narrative": ""}
    argv = ["run", "work-quality", "--kind", "bot", "--name", "review-pr", "--task", "fix add()",
            "--work-product", str(work), "--models", "openai:gpt-4o,anthropic:claude-opus-4-7", "--retries", "0",
            "--deadline", "0", "--run-id", "build-9"]
    _, second_out = two_at_once(argv, env, standin, admin, "eval_work_quality_judge_verdicts", 2)
    assert len(standin.requests) == 2  # not 4
    assert "run build-9 is being judged by another runner: waiting for it" in second_out
    assert "run build-9 of review-pr was recorded earlier: reading it back, no calls made" in second_out
    assert count(admin, "SELECT count(*) FROM eval_work_quality_snapshots") == 1
    assert count(admin, "SELECT count(*) FROM eval_work_quality_judge_verdicts WHERE NOT call_started") == 2
