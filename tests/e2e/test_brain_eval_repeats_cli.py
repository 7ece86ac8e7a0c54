"""`run brain-eval --repeats K` end to end against the provider stand-in (issue 36, item 4): each
judge drafts K times on each answer, each repeat a numbered draft row; a judge whose repeats
straddle a question's pass criterion is listed as flaky; a run of one repeat reads as before; a
resumption asks only the repeats not yet stored."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from tests.cli import run_cli
from tests.e2e.test_harness_cli import demo_file, env, harness, killed_once_committed, run_args  # noqa: F401
from tests.e2e.test_harness_json import read_json
from tests.standin import steps

JUDGES = ("gpt-4o", "claude-opus-4-7", "gemini-1.5-pro")
DRAFT = {"total_claims": 3, "unsupported_claims": [], "diagnosis_accuracy": 1, "staleness_recognised": None,
         "notes": "steady"}


def judged(standin) -> int:
    return sum(len(standin.requests_for(m)) for m in JUDGES)


def test_three_repeats_store_three_numbered_drafts_per_judge_and_flag_a_straddle(env, admin, harness, standin,
                                                                                monkeypatch):
    standin.install_env(monkeypatch)
    asked = Counter()

    def responder(model, system, user):
        # gpt-4o quotes an unsupported claim on its second asking only: EVAL-Q01 allows none.
        asked[model] += 1
        if model == "gpt-4o" and asked[model] % 3 == 2:
            return {**DRAFT, "unsupported_claims": ["coverage 2.1x"], "notes": "wobbly"}
        return DRAFT

    standin.responder = responder
    args = run_args(harness, "--questions", "EVAL-Q01,EVAL-Q02", "--concurrency", "1", "--repeats", "3",
                    judges="auto")
    done = run_cli(*args, env=env)
    assert done.code == 0, done.err
    assert judged(standin) == 2 * 3 * 3
    rows = admin.execute("SELECT question_id, model, array_agg(repeat_no ORDER BY repeat_no) "
                         "FROM brain_eval_judge_suggestion GROUP BY 1, 2 ORDER BY 1, 2").fetchall()
    assert len(rows) == 2 * 3 and all(r[2] == [1, 2, 3] for r in rows)
    assert admin.execute("SELECT repeats FROM brain_eval_harness_run").fetchall() == [(3,)]
    assert "suggestions: 18 drafted by 3 judges, each 3 times; 18 asked now" in done.out
    flagged = [line for line in done.out.splitlines() if line.startswith("  flaky: ")]
    assert flagged == [f"  flaky: {q} openai:gpt-4o: 3 repeats from 0 to 1 straddle max_hallucinations 0"
                       for q in ("EVAL-Q01", "EVAL-Q02")]


def test_json_names_each_repeat_and_the_flaky_questions(env, admin, harness, standin, monkeypatch):
    standin.install_env(monkeypatch)
    asked = Counter()

    def responder(model, system, user):
        asked[model] += 1
        return {**DRAFT, "diagnosis_accuracy": 0 if model == "claude-opus-4-7" and asked[model] == 1 else 1}

    standin.responder = responder
    # Valid against run_brain_eval.v1.schema.json, repeats and flaky being its optional fields.
    document = read_json(run_cli(*run_args(harness, "--questions", "EVAL-Q01", "--concurrency", "1", "--repeats", "2",
                                           "--json", judges="auto"), env=env), "run_brain_eval")
    assert document["repeats"] == 2
    assert sorted((s["model"], s["repeat_no"]) for s in document["suggestions"]) == sorted(
        (f"{p}:{m}", n) for p, m in (("openai", "gpt-4o"), ("anthropic", "claude-opus-4-7"),
                                     ("google", "gemini-1.5-pro")) for n in (1, 2))
    assert document["flaky"] == [{"question_id": "EVAL-Q01", "judge_model": "anthropic:claude-opus-4-7",
                                  "criterion": "min_diagnosis_accuracy", "threshold": 0.5, "repeats": 2,
                                  "lowest": 0.0, "highest": 1.0}]


def test_one_repeat_is_the_run_as_before(env, admin, harness, standin, monkeypatch):
    standin.install_env(monkeypatch)
    standin.responder = lambda model, system, user: DRAFT
    document = read_json(run_cli(*run_args(harness, "--questions", "EVAL-Q01", "--concurrency", "1", "--json",
                                           judges="auto"), env=env), "run_brain_eval")
    assert "repeats" not in document and "flaky" not in document
    assert all("repeat_no" not in s for s in document["suggestions"]) and len(document["suggestions"]) == 3
    assert judged(standin) == 3
    assert admin.execute("SELECT repeats FROM brain_eval_harness_run").fetchall() == [(1,)]
    assert admin.execute("SELECT DISTINCT repeat_no FROM brain_eval_judge_suggestion").fetchall() == [(1,)]


@pytest.mark.parametrize("k", ["0", "11"])
def test_repeats_outside_one_to_ten_is_refused_before_anything_is_written(env, admin, harness, k):
    refused = run_cli(*run_args(harness, "--questions", "EVAL-Q01", "--repeats", k), env=env)
    assert refused.code != 0 and "--repeats" in refused.err
    assert admin.execute("SELECT count(*) FROM brain_eval_log").fetchone() == (0,)


@pytest.mark.processes
def test_a_resumed_run_asks_only_the_repeats_not_stored(env, admin, harness, standin, monkeypatch):
    standin.install_env(monkeypatch)
    for model in JUDGES:
        standin.set_default(model, steps.ok(latency_s=0.3))
    args = run_args(harness, "--questions", "EVAL-Q01,EVAL-Q02", "--concurrency", "1", "--repeats", "3",
                    judges="auto")
    killed_once_committed(args, env, admin, "brain_eval_judge_suggestion", 4)
    drafted = admin.execute("SELECT count(*) FROM brain_eval_judge_suggestion").fetchone()[0]
    assert 4 <= drafted < 18
    asked = judged(standin)
    resumed = run_cli(*args, env=env)
    assert resumed.code == 0, resumed.err
    assert "(resumed)" in resumed.out
    assert judged(standin) - asked == 18 - drafted
    assert admin.execute("SELECT count(*), count(DISTINCT (question_id, model, repeat_no)) "
                         "FROM brain_eval_judge_suggestion").fetchone() == (18, 18)


def test_a_batched_run_asks_each_repeat_as_its_own_item(env, admin, harness, standin, monkeypatch):
    """--batch with --repeats 2: each judge's two drafts on an answer are two requests of its
    provider's batch, the second named `repeat 2`, each stored as its own numbered draft."""
    from tests.e2e.test_batch_cli import batch_lines, sync_calls

    standin.install_env(monkeypatch)
    standin.batch_delay_s = 0.1
    standin.responder = lambda model, system, user: DRAFT
    done = run_cli(*run_args(harness, "--questions", "EVAL-Q01", "--repeats", "2", "--batch", judges="auto"), env=env)
    assert done.code == 0, done.err
    assert "suggestions: 6 drafted by 3 judges, each 2 times; 6 asked now" in done.out, done.out
    assert len(batch_lines(standin, "gpt-4o")) == 2 and sync_calls(standin, "gpt-4o") == []
    assert len(batch_lines(standin, "claude-opus-4-7")) == 2 and len(batch_lines(standin, "gemini-1.5-pro")) == 2
    assert sync_calls(standin, "gemini-1.5-pro") == []
    assert sorted(admin.execute("SELECT q.item, r.outcome FROM judge_batch_request q "
                                "JOIN judge_batch_result r USING (batch_id, custom_id)").fetchall()) == [
        ("EVAL-Q01 anthropic:claude-opus-4-7", "succeeded"), ("EVAL-Q01 anthropic:claude-opus-4-7 repeat 2", "succeeded"),
        ("EVAL-Q01 google:gemini-1.5-pro", "succeeded"), ("EVAL-Q01 google:gemini-1.5-pro repeat 2", "succeeded"),
        ("EVAL-Q01 openai:gpt-4o", "succeeded"), ("EVAL-Q01 openai:gpt-4o repeat 2", "succeeded")]
    assert admin.execute("SELECT model, array_agg(repeat_no ORDER BY repeat_no) FROM brain_eval_judge_suggestion "
                         "GROUP BY model ORDER BY model").fetchall() == [
        (m, [1, 2]) for m in ("anthropic:claude-opus-4-7", "google:gemini-1.5-pro", "openai:gpt-4o")]


def test_a_run_of_another_k_is_another_eval_never_resumed(env, admin, harness, standin, monkeypatch):
    """K is a part of a run's identity, as in takes-quality (test_repeats_cli.py::test_one_repeat_reads_as_before):
    the same command with another K (K = 1 included, --repeats left out) does not resume the open run
    of K = 2; it is another run, refused while that one is open (one open run per brain, prompt and
    catalog). The same K resumes it."""
    standin.install_env(monkeypatch)
    standin.responder = lambda model, system, user: DRAFT
    args = run_args(harness, "--questions", "EVAL-Q01", "--concurrency", "1", judges="auto")
    first = run_cli(*args, "--repeats", "2", env=env)
    assert first.code == 0, first.err
    run_id = first.out.split()[1]
    asked = judged(standin)
    for other in ((), ("--repeats", "3")):
        refused = run_cli(*args, *other, env=env)
        assert refused.code == 3 and f"run {run_id} of AGT-902" in refused.err and "is open" in refused.err, \
            (other, refused.out, refused.err)
        assert "(resumed)" not in refused.out
    assert judged(standin) == asked
    again = run_cli(*args, "--repeats", "2", env=env)
    assert again.code == 0 and again.out.startswith(f"run {run_id} (resumed): "), again.out
    assert admin.execute("SELECT count(*), max(repeats) FROM brain_eval_harness_run").fetchone() == (1, 2)
    # Once it is cancelled, the command of K = 1 starts a run of its own, and its K again resumes it.
    assert run_cli("brain-eval", "cancel", run_id, "--reason", "asked twice per judge", env=env).code == 1
    single = run_cli(*args, env=env)
    assert single.code == 0 and "(started)" in single.out and single.out.split()[1] != run_id, single.out
    resumed = run_cli(*args, env=env)
    assert resumed.out.startswith(f"run {single.out.split()[1]} (resumed): "), resumed.out


def test_the_review_views_say_which_repeat_each_draft_is(env, harness, standin, monkeypatch):
    """`review show` (text and --json, valid against review_show.v1) names each draft's repeat,
    "repeat N of K", where K > 1; the walk's lines say it alike. A run of one repeat's drafts name none."""
    import jsonschema

    from evalledger.suites.brain_eval import harness as harness_module
    from evalledger.suites.brain_eval.guided import suggestion_lines
    from tests.conftest import REVIEWER_ROLE

    standin.install_env(monkeypatch)
    standin.responder = lambda model, system, user: DRAFT
    done = run_cli(*run_args(harness, "--questions", "EVAL-Q01", "--concurrency", "1", "--repeats", "2",
                             judges="auto"), env=env)
    assert done.code == 0, done.err
    run_id = done.out.split()[1]
    shown = run_cli("review", "show", run_id, "EVAL-Q01", "--as", REVIEWER_ROLE, "--show-suggestions", env=env)
    assert shown.code == 0, shown.err
    judges = [line.split(": 3 claims")[0] for line in shown.out.splitlines() if line.startswith("  judge ")]
    assert judges == [f"  judge {m} (repeat {n} of 2)" + (" (the brain’s family)" if m.startswith("anthropic") else "")
                      for m in ("anthropic:claude-opus-4-7", "google:gemini-1.5-pro", "openai:gpt-4o")
                      for n in (1, 2)], shown.out
    document = json.loads(run_cli("review", "show", run_id, "--as", REVIEWER_ROLE, "--json", env=env).out)
    jsonschema.validate(document, json.loads(
        (Path(harness_module.__file__).parent / "schemas" / "review_show.v1.schema.json").read_text("utf-8")))
    assert [(s["model"], s["repeat_no"], s["repeats"]) for s in document[0]["suggestions"]] == [
        (m, n, 2) for m in ("anthropic:claude-opus-4-7", "google:gemini-1.5-pro", "openai:gpt-4o") for n in (1, 2)]
    walk = suggestion_lines(document[0]["suggestions"])
    assert sum(1 for line in walk if "(repeat 2 of 2)" in line) == 3

    # A run of one repeat (after the first is cancelled: one open run per brain, prompt and catalog).
    assert run_cli("brain-eval", "cancel", run_id, "--reason", "asked twice", env=env).code == 1
    single = run_cli(*run_args(harness, "--questions", "EVAL-Q01", "--concurrency", "1", judges="auto"), env=env)
    single_id = single.out.split()[1]
    shown = run_cli("review", "show", single_id, "EVAL-Q01", "--as", REVIEWER_ROLE, "--show-suggestions", env=env)
    assert shown.code == 0 and "  judge openai:gpt-4o: " in shown.out and "repeat" not in shown.out, shown.out
    document = json.loads(run_cli("review", "show", single_id, "--as", REVIEWER_ROLE, "--json", env=env).out)
    assert all("repeat_no" not in s and "repeats" not in s for s in document[0]["suggestions"])
