"""`--batch`: a run's judge calls through OpenAI's Batch API, Anthropic's Message Batches and
Gemini's batch mode (the real openai, anthropic and google-genai SDKs against the stand-in),
recorded in the ledger before the runner waits, resumed by the same command after a kill, never
submitted twice, failed and expired requests retried once."""

from __future__ import annotations

import threading
from decimal import Decimal

from psycopg.types.json import Jsonb

import pytest

from tests.cli import kill_when, run_cli, start_script
from tests.e2e.test_takes_quality_cli import CORPUS, count, tq, write_jsonl

PANEL = "openai:gpt-4o,anthropic:claude-opus-4-7,google:gemini-1.5-pro"


@pytest.fixture
def env(standin, dsn, tmp_path):
    return {**standin.env(), "DATABASE_URL": dsn, "EVALLEDGER_HOME": str(tmp_path / "home")}


@pytest.fixture
def corpus(env, tmp_path):
    path = write_jsonl(tmp_path / "takes.jsonl", CORPUS)
    assert run_cli("corpus", "load", str(path), env=env).code == 0
    return path


def batch_lines(standin, model="gpt-4o"):
    """The stand-in's requests for a model that came as lines of a batch (no HTTP headers of their own)."""
    return [r for r in standin.requests_for(model) if not r.headers]


def sync_calls(standin, model="gpt-4o"):
    return [r for r in standin.requests_for(model) if r.headers]


def verdicts(admin, run_id):
    return admin.execute(
        "SELECT model, response_json, contributes, error_kind FROM eval_takes_quality_judge_verdicts "
        "WHERE run_id = %s AND NOT call_started AND error_kind IS DISTINCT FROM 'provider_error' ORDER BY model",
        (run_id,)).fetchall()


def test_a_batched_run_decides_what_the_same_run_decides_synchronously(env, corpus, standin, admin):
    result, synced = tq(env, "--models", PANEL)
    assert result.code == 0, result.err
    assert synced["calls"] == {"sync": 3, "batch": 0, "cached_input_tokens": 0}
    standin.batch_delay_s = 0.2
    result, batched = tq(env, "--models", PANEL, "--batch", "--rerun")
    assert result.code == 0, result.err
    assert batched["calls"] == {"sync": 0, "batch": 3, "cached_input_tokens": 0}
    # One batch per provider: OpenAI's, Anthropic's and Gemini's (through its own API), one line each.
    assert len(standin.batch_creates) == 3
    for model in ("gpt-4o", "claude-opus-4-7", "gemini-1.5-pro"):
        assert len(batch_lines(standin, model)) == 1 and len(sync_calls(standin, model)) == 1, model
    # The same stored replies, the same decision.
    assert verdicts(admin, batched["run_id"]) == verdicts(admin, synced["run_id"])
    for key in ("verdict", "scores", "overall_score", "successes_per_cycle", "verdictMessage"):
        assert batched[key] == synced[key], key
    # The batched call is billed at the batch rates (half of gpt-4o's list price), the others at list.
    rates = admin.execute("SELECT r.id, v.price_input, v.price_output, v.cost_usd FROM eval_takes_quality_judge_verdicts v "
                          "JOIN eval_takes_quality_runs r ON r.id = v.run_id WHERE v.model = 'openai:gpt-4o' "
                          "AND NOT v.call_started ORDER BY r.id").fetchall()
    (_, sync_in, sync_out, sync_cost), (_, batch_in, batch_out, batch_cost) = rates
    assert (sync_in, sync_out, batch_in, batch_out) == (Decimal("2.5"), Decimal("10.0"), Decimal("1.25"), Decimal("5.0"))
    assert batch_cost * 2 == sync_cost
    for model in ("anthropic:claude-opus-4-7", "google:gemini-1.5-pro"):
        rates = admin.execute("SELECT v.price_input, v.price_output FROM eval_takes_quality_judge_verdicts v "
                              "WHERE v.model = %s AND NOT v.call_started ORDER BY v.run_id", (model,)).fetchall()
        assert rates[1][0] * 2 == rates[0][0] and rates[1][1] * 2 == rates[0][1], model
    # The ledger has the batch, its request and outcome, and what the provider said of it.
    assert admin.execute("SELECT b.provider, b.attempt, b.run_key, q.item, q.model, r.outcome "
                         "FROM judge_batch b JOIN judge_batch_request q USING (batch_id) "
                         "JOIN judge_batch_result r USING (batch_id, custom_id) ORDER BY b.batch_id").fetchall() == \
        [("openai", 1, str(batched["run_id"]), "cycle 1 openai:gpt-4o", "openai:gpt-4o", "succeeded"),
         ("anthropic", 1, str(batched["run_id"]), "cycle 1 anthropic:claude-opus-4-7", "anthropic:claude-opus-4-7",
          "succeeded"),
         ("google", 1, str(batched["run_id"]), "cycle 1 google:gemini-1.5-pro", "google:gemini-1.5-pro", "succeeded")]
    statuses = [s for (s,) in admin.execute("SELECT status FROM judge_batch_event ORDER BY event_id")]
    assert statuses[0] == "submitted" and "completed" in statuses and statuses[-1] == "ended"


def test_failed_and_expired_requests_are_retried_once_in_the_next_batch(env, corpus, standin, admin):
    standin.batch_fail["gpt-4o"] = 1
    standin.batch_expire["gpt-4o-mini"] = 1
    standin.batch_fail["claude-opus-4-7"] = 1
    standin.batch_fail["gemini-1.5-pro"] = 1
    standin.batch_expire["gemini-2.0-flash"] = 1
    models = ("openai:gpt-4o,openai:gpt-4o-mini,anthropic:claude-opus-4-7,google:gemini-1.5-pro,"
              "google:gemini-2.0-flash")
    result, receipt = tq(env, "--models", models, "--batch")
    assert result.code == 0, result.err
    assert receipt["final"] is True and receipt["successes_per_cycle"] == [5]
    # Each provider's first (Gemini's one per model), and the retry of its failures.
    assert len(standin.batch_creates) == 4 + 4
    assert receipt["calls"] == {"sync": 0, "batch": 10, "cached_input_tokens": 0}
    assert sorted(admin.execute("SELECT q.model, b.attempt, r.outcome FROM judge_batch b JOIN judge_batch_request q "
                                "USING (batch_id) JOIN judge_batch_result r USING (batch_id, custom_id)").fetchall()) == [
        ("anthropic:claude-opus-4-7", 1, "errored"), ("anthropic:claude-opus-4-7", 2, "succeeded"),
        ("google:gemini-1.5-pro", 1, "errored"), ("google:gemini-1.5-pro", 2, "succeeded"),
        ("google:gemini-2.0-flash", 1, "expired"), ("google:gemini-2.0-flash", 2, "succeeded"),
        ("openai:gpt-4o", 1, "errored"), ("openai:gpt-4o", 2, "succeeded"),
        ("openai:gpt-4o-mini", 1, "expired"), ("openai:gpt-4o-mini", 2, "succeeded")]


def test_a_request_failing_twice_is_retried_once_and_the_run_stays_open(env, corpus, standin, admin):
    standin.batch_fail["gpt-4o"] = 5
    result, receipt = tq(env, "--models", PANEL, "--batch")
    assert result.code == 2 or receipt["final"] is False, result.err
    assert receipt["final"] is False
    assert len(standin.batch_creates) == 4  # OpenAI's, Anthropic's, Gemini's, OpenAI's retry
    # The same command again: a new batch for the call still without an answer, and the run is final.
    standin.batch_fail.clear()
    result, receipt = tq(env, "--models", PANEL, "--batch")
    assert receipt["final"] is True and len(standin.batch_creates) == 5


def test_batch_fallback_sync_calls_only_what_the_batch_failed(env, corpus, standin, admin):
    standin.batch_expire["gpt-4o"] = 1
    standin.batch_fail["gemini-1.5-pro"] = 1
    models = "openai:gpt-4o,openai:gpt-4o-mini,anthropic:claude-opus-4-7,google:gemini-1.5-pro"
    result, receipt = tq(env, "--models", models, "--batch", "--batch-fallback", "sync")
    assert result.code == 0, result.err
    assert len(standin.batch_creates) == 3
    assert len(sync_calls(standin, "gpt-4o")) == 1 and sync_calls(standin, "gpt-4o-mini") == []
    assert len(sync_calls(standin, "gemini-1.5-pro")) == 1 and sync_calls(standin, "claude-opus-4-7") == []
    assert len(batch_lines(standin, "gpt-4o-mini")) == 1
    assert receipt["calls"] == {"sync": 2, "batch": 4, "cached_input_tokens": 0}  # the failed ones stored as failed batch calls


# --- a runner killed: the same command resumes the same batch --------------------------------------


def _kill_when(env, until, what):
    kill_when(start_script("run", "takes-quality", "--seed", "11", "--json", "--models", PANEL, "--batch", env=env),
              until, what)


def _resumed_once(env, standin, admin):
    result, receipt = tq(env, "--models", PANEL, "--batch")
    assert result.code == 0, result.err
    assert receipt["final"] is True
    assert len(standin.batch_creates) == 3  # one submission of each provider's batch
    for model in ("gpt-4o", "claude-opus-4-7", "gemini-1.5-pro"):  # one request per item
        assert len(batch_lines(standin, model)) == 1 and sync_calls(standin, model) == [], model
    assert receipt["calls"] == {"sync": 0, "batch": 3, "cached_input_tokens": 0}
    # The cost counted once: the answers' costs, no estimate of a started call beside them.
    answered = count(admin, "SELECT sum(cost_usd) FROM eval_takes_quality_judge_verdicts WHERE NOT call_started")
    assert receipt["cost_usd"] == pytest.approx(float(answered), abs=0)
    assert count(admin, "SELECT count(*) FROM eval_takes_quality_judge_verdicts "
                        "WHERE model = 'openai:gpt-4o' AND NOT call_started") == 1
    assert count(admin, "SELECT count(*) FROM judge_batch") == 3
    assert count(admin, "SELECT count(*) FROM judge_batch_event WHERE status = 'submitted'") == 3


# The provider's batch ids by API (the stand-in's): what a batch create of each looks like.
CREATED = {"openai": "batch_", "anthropic": "msgbatch_", "gemini": "batches/"}
LEDGER_PROVIDER = {"openai": "openai", "anthropic": "anthropic", "gemini": "google"}


@pytest.mark.processes
@pytest.mark.parametrize("api", ["openai", "anthropic", "gemini"])
def test_killed_after_the_provider_created_the_batch_the_next_command_finds_it(env, corpus, standin, admin, api):
    """OpenAI's batch carries the ledger's batch id as metadata, Gemini's as its display_name;
    Anthropic's, which carries none, is told by its size, its time and its results' custom_ids once
    it ends: the next command finds the batch the provider created and adopts it."""
    hold = threading.Event()
    standin.batch_hold_create = hold  # the provider has the batch; the runner never hears its id
    standin.batch_hold_api = api
    try:
        _kill_when(env, lambda: any(b.startswith(CREATED[api]) for b in standin.batch_creates), "submitted")
    finally:
        hold.set()
    assert count(admin, "SELECT count(*) FROM judge_batch_event e JOIN judge_batch b USING (batch_id) "
                        "WHERE b.provider = %s", LEDGER_PROVIDER[api]) == 0
    assert count(admin, "SELECT count(*) FROM judge_batch WHERE provider = %s", LEDGER_PROVIDER[api]) == 1
    standin.batch_hold_create = None
    _resumed_once(env, standin, admin)


@pytest.mark.processes
def test_killed_while_polling_the_next_command_resumes_the_batch(env, corpus, standin, admin):
    standin.batch_delay_s = 3
    _kill_when(env, lambda: count(admin, "SELECT count(*) FROM judge_batch_event WHERE status = 'submitted'") == 3,
               "recorded the three submissions")
    standin.batch_delay_s = 0
    _resumed_once(env, standin, admin)


@pytest.mark.processes
def test_a_run_resumed_without_batch_while_its_batch_is_unread_asks_nothing_again(env, corpus, standin, admin):
    """The provider bills a submitted batch whether it is read or not: the same run resumed without
    --batch would ask its calls again one by one and pay twice. It stops, says how to resume, and
    asks nothing; with --batch it reads the batch once."""
    standin.batch_delay_s = 3
    _kill_when(env, lambda: count(admin, "SELECT count(*) FROM judge_batch_event WHERE status = 'submitted'") == 3,
               "recorded the three submissions")
    standin.batch_delay_s = 0
    result, _ = tq(env, "--models", PANEL)
    assert result.code == 3 and result.out == ""
    assert result.err.startswith("evalledger: error: run ") and result.err.count("\n") == 1, result.err
    assert "whose results are not read yet: run the same command with --batch to read them" in result.err
    assert [r for r in standin.requests if r.headers and r.model] == []  # not one call made one by one
    _resumed_once(env, standin, admin)


@pytest.mark.processes
@pytest.mark.parametrize("api", [None, "gemini"])
def test_killed_while_reading_results_the_next_command_reads_them_once(env, corpus, standin, admin, api):
    """Killed while it reads a batch's results (OpenAI's output file, the first to finish; Gemini's
    finished batch, its responses inlined)."""
    hold = threading.Event()
    standin.batch_hold_content = hold
    standin.batch_hold_api = api
    try:
        _kill_when(env, lambda: standin.batch_content_reads, "read the results")
    finally:
        hold.set()
    standin.batch_hold_content = None
    _resumed_once(env, standin, admin)


# --- evalledger batch list | status | cancel -------------------------------------------------------


def test_batch_list_and_status_read_the_ledger(env, corpus, standin, admin):
    result, receipt = tq(env, "--models", PANEL, "--batch")
    assert result.code == 0, result.err
    listed = run_cli("batch", "list", "--format", "json", env=env)
    assert listed.code == 0, listed.err
    rows = __import__("json").loads(listed.out)["rows"]
    assert [(r["batch_id"], r["suite"], r["run"], r["provider"], r["status"], r["requests"], r["succeeded"], r["failed"])
            for r in rows] == [(3, "takes-quality", str(receipt["run_id"]), "google", "ended", 1, 1, 0),
                               (2, "takes-quality", str(receipt["run_id"]), "anthropic", "ended", 1, 1, 0),
                               (1, "takes-quality", str(receipt["run_id"]), "openai", "ended", 1, 1, 0)]
    assert rows[2]["provider_batch_id"] == standin.batch_creates[0]
    assert rows[0]["provider_batch_id"] == standin.batch_creates[2] and rows[0]["provider_batch_id"].startswith("batches/")
    assert run_cli("batch", "list", "--open", "-q", env=env).out == ""
    shown = run_cli("batch", "status", "1", env=env)
    assert shown.code == 0, shown.err
    assert "submitted" in shown.out and "cycle 1 openai:gpt-4o  succeeded" in shown.out
    refused = run_cli("batch", "cancel", "1", env=env)
    assert refused.code == 3 and refused.err.strip() == "evalledger: error: batch 1 is ended already: nothing to cancel"
    missing = run_cli("batch", "status", "9", env=env)
    assert missing.code == 3 and "no judge batch 9" in missing.err


@pytest.mark.processes
def test_a_cancelled_batch_is_read_as_cancelled_and_not_retried(env, corpus, standin, admin):
    standin.batch_delay_s = 60
    _kill_when(env, lambda: count(admin, "SELECT count(*) FROM judge_batch_event WHERE status = 'submitted'") == 3,
               "recorded the three submissions")
    assert run_cli("batch", "list", "--open", "-q", env=env).out == "3\n2\n1\n"
    cancelled = run_cli("batch", "cancel", "1", env=env)
    assert cancelled.code == 0, cancelled.err
    assert cancelled.out == f"batch 1 ({standin.batch_creates[0]}): cancel asked, the provider says cancelled\n"
    assert run_cli("batch", "cancel", "2", env=env).code == 0  # Anthropic's
    gemini = run_cli("batch", "cancel", "3", env=env)  # Gemini's
    assert gemini.out == f"batch 3 ({standin.batch_creates[2]}): cancel asked, the provider says cancelled\n"
    result, receipt = tq(env, "--models", PANEL, "--batch")
    assert receipt["final"] is False and len(standin.batch_creates) == 3  # read as cancelled, not retried
    assert admin.execute("SELECT outcome FROM judge_batch_result").fetchall() == [("cancelled",)] * 3
    standin.batch_delay_s = 0
    result, receipt = tq(env, "--models", PANEL, "--batch")  # the same command again judges it anew
    assert receipt["final"] is True and len(standin.batch_creates) == 6


# --- run work-quality --batch --------------------------------------------------------------------


def test_a_batched_work_quality_run_stores_what_the_synchronous_run_stores(standin, dsn, tmp_path, admin):
    from tests.e2e.test_work_quality_cli import Judges, wq

    Judges(standin)
    work = tmp_path / "fix.diff"
    work.write_text("--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-return a - b\n+return a + b\n")
    wq_env = {**standin.env(), "DATABASE_URL": dsn, "EVALLEDGER_HOME": str(tmp_path / "home"),
              "EVALLEDGER_WORK_QUALITY_MODELS": None}
    synced = wq(wq_env, work, "--run-id", "r-sync", "--json")
    assert synced.exit_code == 0, synced.output
    standin.batch_delay_s = 0.2
    batched = wq(wq_env, work, "--run-id", "r-batch", "--batch", "--json")
    assert batched.exit_code == 0, batched.output
    assert len(standin.batch_creates) == 2 and len(batch_lines(standin)) == 1
    rows = admin.execute("SELECT s.run_id, v.model, v.response_json, v.price_input FROM eval_work_quality_judge_verdicts v "
                         "JOIN eval_work_quality_snapshots s USING (snapshot_id) WHERE NOT v.call_started "
                         "ORDER BY v.model, s.run_id").fetchall()
    by_model = {}
    for run_id, model, response, price in rows:
        by_model.setdefault(model, {})[run_id] = (response, price)
    assert by_model["openai:gpt-4o"]["r-batch"][0] == by_model["openai:gpt-4o"]["r-sync"][0]
    assert by_model["openai:gpt-4o"]["r-batch"][1] * 2 == by_model["openai:gpt-4o"]["r-sync"][1]
    assert admin.execute("SELECT b.suite, q.item FROM judge_batch b JOIN judge_batch_request q USING (batch_id) "
                         "ORDER BY b.batch_id").fetchall() == [("work-quality", "openai:gpt-4o"),
                                                               ("work-quality", "anthropic:claude-opus-4-7")]


@pytest.mark.processes
def test_a_work_quality_run_resumed_without_batch_while_its_batch_is_unread_asks_nothing_again(
        standin, dsn, tmp_path, admin):
    """work-quality's twin of the takes-quality test above: killed with both judges' batches
    submitted and unread, the same command without --batch stops (exit 3) and asks no judge; with
    --batch it reads the two batches once, submitting nothing again."""
    from tests.e2e.test_work_quality_cli import PANEL as WQ_PANEL, Judges, wq

    Judges(standin)
    work = tmp_path / "fix.diff"
    work.write_text("--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-return a - b\n+return a + b\n")
    wq_env = {**standin.env(), "DATABASE_URL": dsn, "EVALLEDGER_HOME": str(tmp_path / "home"),
              "EVALLEDGER_WORK_QUALITY_MODELS": None}
    standin.batch_delay_s = 3
    kill_when(start_script("run", "work-quality", "--kind", "bot", "--name", "review-pr", "--task", "fix add()",
                           "--work-product", str(work), "--models", WQ_PANEL, "--retries", "0", "--deadline", "0",
                           "--run-id", "r-killed", "--batch", env=wq_env),
              lambda: count(admin, "SELECT count(*) FROM judge_batch_event WHERE status = 'submitted'") == 2,
              "recorded the two submissions")
    standin.batch_delay_s = 0
    resumed = wq(wq_env, work, "--run-id", "r-killed")
    assert resumed.exit_code == 3, resumed.output
    assert "whose results are not read yet: run the same command with --batch to read them" in resumed.output
    assert [r for r in standin.requests if r.headers and r.model] == []  # no judge asked one by one
    assert count(admin, "SELECT count(*) FROM eval_work_quality_snapshots WHERE completed_at IS NOT NULL") == 0
    read = wq(wq_env, work, "--run-id", "r-killed", "--batch", "--json")
    assert read.exit_code == 0, read.output
    assert len(standin.batch_creates) == 2 and [r for r in standin.requests if r.headers and r.model] == []
    assert count(admin, "SELECT count(*) FROM eval_work_quality_judge_verdicts WHERE NOT call_started") == 2


def test_batch_auto_calls_a_gated_run_synchronously(standin, dsn, tmp_path):
    from tests.e2e.test_work_quality_cli import Judges, wq

    Judges(standin)
    work = tmp_path / "fix.diff"
    work.write_text("--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-return a - b\n+return a + b\n")
    wq_env = {**standin.env(), "DATABASE_URL": dsn, "EVALLEDGER_HOME": str(tmp_path / "home"),
              "EVALLEDGER_WORK_QUALITY_MODELS": None}
    gated = wq(wq_env, work, "--run-id", "r-gate", "--batch", "auto", "--gate")
    assert gated.exit_code == 0, gated.output
    assert standin.batch_creates == []
    auto = wq(wq_env, work, "--run-id", "r-auto", "--batch", "auto")
    assert auto.exit_code == 0, auto.output
    assert len(standin.batch_creates) == 2


# --- run brain-eval --batch: the judges' drafts -------------------------------------------------


def _harness(env, tmp_path, model="anthropic:claude-sonnet-4-6"):
    """The demo catalog loaded, AGT-902 registered with the demo levers (its model `model`), a folder of views."""
    from tests.e2e import test_harness_cli as h

    demo_file = tmp_path / "catalog.json"
    demo_file.write_text(h.DEMO_TEXT)
    assert run_cli("catalog", "load", str(demo_file), env=env).code == 0
    prompt = tmp_path / "prompt.txt"
    prompt.write_text(h.BRAIN_PROMPT)
    levers = [arg for lever in h.DEMO_LEVERS for arg in ("--lever", lever)]
    added = run_cli("brain", "add", "AGT-902", "--model", model, "--prompt-file", str(prompt), *levers, env=env)
    assert added.code == 0, added.err
    views = tmp_path / "views"
    views.mkdir()
    (views / "accounts.sql").write_text(h.VIEW_FILE)
    return views


ANSWER = {"narrative": "EMEA is at 71% of plan.", "proposed_actions": [],
          "claims": [{"text": "attainment 71%", "numerical": True, "source_ids": ["quota_attainment_emea"],
                      "confidence": "high"}]}
DRAFT = {"total_claims": 1, "unsupported_claims": [], "diagnosis_accuracy": 1, "staleness_recognised": None,
         "notes": "Fine."}


def test_a_batched_harness_run_stores_the_drafts_the_synchronous_one_stores(standin, dsn, reviewers, tmp_path,
                                                                            monkeypatch, admin):
    from tests.e2e import test_harness_cli as h

    env = {"DATABASE_URL": dsn}
    views = _harness(env, tmp_path)
    standin.install_env(monkeypatch)
    answer = {"narrative": "EMEA is at 71% of plan.", "proposed_actions": [],
              "claims": [{"text": "attainment 71%", "numerical": True, "source_ids": ["quota_attainment_emea"],
                          "confidence": "high"}]}
    draft = {"total_claims": 1, "unsupported_claims": [], "diagnosis_accuracy": 1, "staleness_recognised": None,
             "notes": "Fine."}
    standin.responder = lambda model, system, user: answer if model == "claude-sonnet-4-6" else draft
    standin.batch_fail["gpt-4o"] = 1  # one draft failed by the batch: retried once, stored once
    done = run_cli(*h.live_args(views, "--questions", "EVAL-Q01,EVAL-Q02", "--batch"), env=env)
    assert done.code == 0, done.err
    assert "suggestions: 6 drafted by 3 judges; 6 asked now" in done.out, done.out
    # Every judge's drafts came as batch lines (OpenAI's batch failed one, its retry answered it),
    # after the brain's answers came as the lines of a batch of their own.
    assert len(standin.batch_creates) == 1 + 4
    assert len(batch_lines(standin, "claude-sonnet-4-6")) == 2 and sync_calls(standin, "claude-sonnet-4-6") == []
    assert len(batch_lines(standin, "gpt-4o")) == 2 and sync_calls(standin, "gpt-4o") == []
    assert len(batch_lines(standin, "claude-opus-4-7")) == 2 and len(batch_lines(standin, "gemini-1.5-pro")) == 2
    assert sync_calls(standin, "gemini-1.5-pro") == []
    rows = admin.execute("SELECT model, count(*), bool_and(contributes), min(price_input), max(price_input) "
                         "FROM brain_eval_judge_suggestion GROUP BY model ORDER BY model").fetchall()
    assert rows == [("anthropic:claude-opus-4-7", 2, True, Decimal("2.5"), Decimal("2.5")),
                    ("google:gemini-1.5-pro", 2, True, Decimal("0.625"), Decimal("0.625")),
                    ("openai:gpt-4o", 2, True, Decimal("1.25"), Decimal("1.25"))]
    assert sorted(admin.execute("SELECT q.model, r.outcome FROM judge_batch b JOIN judge_batch_request q USING "
                                "(batch_id) JOIN judge_batch_result r USING (batch_id, custom_id) "
                                "WHERE b.suite = 'brain-eval'").fetchall()) == sorted(
        [("anthropic:claude-opus-4-7", "succeeded")] * 2 + [("google:gemini-1.5-pro", "succeeded")] * 2
        + [("openai:gpt-4o", "errored")]
        + [("openai:gpt-4o", "succeeded")] * 2 + [("anthropic:claude-sonnet-4-6", "succeeded")] * 2)


def test_batch_auto_batches_only_a_run_whose_deadline_outlasts_the_window(env, corpus, standin, admin):
    result, receipt = tq(env, "--models", PANEL, "--batch", "auto")
    assert result.code == 0, result.err
    assert receipt["calls"] == {"sync": 0, "batch": 3, "cached_input_tokens": 0}  # 14 days to its deadline
    # A rubric whose open runs are abandoned after a day: a batch (24 hours) could outlive the run.
    definition = admin.execute("SELECT definition FROM rubric "
                               "WHERE rubric_id = active_rubric_v1('takes-quality')").fetchone()[0]
    admin.execute("SET ROLE evalledger_owner")
    admin.execute("INSERT INTO rubric (suite, version, definition) VALUES ('takes-quality', 'v1.9', %s)",
                  (Jsonb({**definition, "version": "v1.9", "open_run_days": 1}),))
    admin.execute("RESET ROLE")
    admin.execute("INSERT INTO rubric_activation (suite, rubric_id, reason) SELECT suite, rubric_id, 'a day' "
                  "FROM rubric WHERE suite = 'takes-quality' AND version = 'v1.9'")
    result, receipt = tq(env, "--models", PANEL, "--batch", "auto", "--rubric-version", "v1.9")
    assert result.code == 0, result.err
    assert receipt["calls"] == {"sync": 3, "batch": 0, "cached_input_tokens": 0}
    assert len(standin.batch_creates) == 3


@pytest.mark.processes
def test_a_harness_run_killed_while_its_drafts_are_batched_resumes_the_batches(standin, dsn, reviewers, tmp_path,
                                                                              admin):
    from tests.e2e import test_harness_cli as h

    env = {**standin.env(), "DATABASE_URL": dsn, "EVALLEDGER_HOME": str(tmp_path / "home")}
    views = _harness(env, tmp_path)
    standin.responder = lambda model, system, user: ANSWER if model == "claude-sonnet-4-6" else DRAFT
    standin.batch_delay_s = 4
    args = h.live_args(views, "--questions", "EVAL-Q01,EVAL-Q02", "--batch")
    kill_when(start_script(*args, env=env),
              lambda: count(admin, "SELECT count(*) FROM judge_batch_event WHERE status = 'submitted'") >= 1 + 3,
              "recorded the brain's submission and the judges' three")
    assert count(admin, "SELECT count(*) FROM brain_eval_judge_suggestion") == 0
    standin.batch_delay_s = 0
    done = run_cli(*args, env=env)
    assert done.code == 0, done.err
    assert "(resumed)" in done.out and "suggestions: 6 drafted by 3 judges" in done.out, done.out
    assert len(standin.batch_creates) == 1 + 3  # each provider's batch of each round submitted once
    for model in ("gpt-4o", "claude-opus-4-7", "gemini-1.5-pro"):  # one request per draft
        assert len(batch_lines(standin, model)) == 2 and sync_calls(standin, model) == []
    assert len(standin.requests_for("claude-sonnet-4-6")) == 2  # no question asked twice
    assert sync_calls(standin, "claude-sonnet-4-6") == []
    assert admin.execute("SELECT count(*), count(DISTINCT (question_id, model)) FROM brain_eval_judge_suggestion"
                         ).fetchone() == (6, 6)


def test_each_repeat_is_a_request_of_the_batch_and_a_numbered_verdict(env, corpus, standin, admin):
    """--batch with --repeats 2: each judge's two repeats are two requests of its provider's batch,
    each stored as its own numbered verdict row at the batch rates; the receipt counts them."""
    standin.batch_delay_s = 0.1
    result, receipt = tq(env, "--models", PANEL, "--batch", "--repeats", "2")
    assert result.code == 0, result.err
    assert receipt["calls"] == {"sync": 0, "batch": 6, "cached_input_tokens": 0}
    assert len(standin.batch_creates) == 3
    for model in ("gpt-4o", "claude-opus-4-7", "gemini-1.5-pro"):
        assert len(batch_lines(standin, model)) == 2, model
    assert sorted(admin.execute("SELECT q.item, r.outcome FROM judge_batch_request q "
                                "JOIN judge_batch_result r USING (batch_id, custom_id)").fetchall()) == [
        ("cycle 1 anthropic:claude-opus-4-7", "succeeded"), ("cycle 1 anthropic:claude-opus-4-7 repeat 2", "succeeded"),
        ("cycle 1 google:gemini-1.5-pro", "succeeded"), ("cycle 1 google:gemini-1.5-pro repeat 2", "succeeded"),
        ("cycle 1 openai:gpt-4o", "succeeded"), ("cycle 1 openai:gpt-4o repeat 2", "succeeded")]
    rows = admin.execute("SELECT model, repeat_no, price_input FROM eval_takes_quality_judge_verdicts "
                         "WHERE run_id = %s AND NOT call_started ORDER BY model, repeat_no",
                         (receipt["run_id"],)).fetchall()
    assert [(m, r) for m, r, _ in rows] == [(m, r) for m in ("anthropic:claude-opus-4-7", "google:gemini-1.5-pro",
                                                             "openai:gpt-4o") for r in (1, 2)]
    assert {p for m, _, p in rows if m == "openai:gpt-4o"} == {Decimal("1.25")}


def test_a_provider_that_fails_a_batch_stops_the_run_in_one_line_and_the_same_command_resumes(env, corpus, standin,
                                                                                             admin):
    """Gemini's batch API unreachable (GOOGLE_GEMINI_BASE_URL at a closed port): the run stops with
    one line naming the batch and what failed, the other providers' batches recorded; with the
    address right, the same command submits Gemini's batch once and finishes."""
    result, _ = tq({**env, "GOOGLE_GEMINI_BASE_URL": "http://127.0.0.1:9/"}, "--models", PANEL, "--batch")
    assert result.code == 3
    assert result.err.startswith("evalledger: error: batch 3: google failed while submitting it: connection error: ")
    assert result.err.strip().endswith("the same command again resumes it") and len(result.err.splitlines()) == 1
    assert len(standin.batch_creates) == 2 and count(admin, "SELECT count(*) FROM judge_batch") == 3
    result, receipt = tq(env, "--models", PANEL, "--batch")
    assert result.code == 0, result.err
    assert receipt["final"] is True and len(standin.batch_creates) == 3
    assert receipt["calls"] == {"sync": 0, "batch": 3, "cached_input_tokens": 0}


# --- run brain-eval --batch: the brain's own answers ---------------------------------------------

BRAIN_MODEL = "claude-sonnet-4-6"
QUESTIONS = "EVAL-Q01,EVAL-Q02,EVAL-Q03"


def _varied(model, system, user):
    """The stand-in's replies: the brain's answer differs by question (its claims and what they cite),
    the judges' drafts by answer; the same in a synchronous run and a batched one."""
    if model == BRAIN_MODEL:
        n = len(user) % 3
        return {"narrative": f"An answer of {len(user)} characters.", "proposed_actions": [],
                "claims": [{"text": f"claim {i}", "numerical": i == 0,
                            "source_ids": ["quota_attainment_emea"] if i != n else ["nowhere"],
                            "confidence": "high"} for i in range(n + 1)]}
    return {**DRAFT, "total_claims": len(user) % 4, "notes": f"{model} read {len(user)} characters."}


def _brain_eval_json(args, env):
    import json

    done = run_cli(*args, "--json", env=env)
    assert done.code == 0, done.err
    return json.loads(done.out)


def _same(run):
    """What a run decides, without what is its own (ids, latency, the price its calls were billed at)."""
    return ([{k: v for k, v in a.items() if k not in ("latency_ms", "token_cost_usd")} for a in run["answers"]],
            run["suggestions"])


def test_a_batched_harness_run_decides_what_the_same_run_decides_synchronously(standin, dsn, reviewers, tmp_path,
                                                                               admin):
    """The brain's answers through Anthropic's Message Batches (no synchronous call), then the judges'
    drafts through each provider's batch: the same stored answers, scores and drafts as the run
    made one call at a time, the brain's answers billed at the batch rates; `calls` counts both."""
    from tests.e2e import test_harness_cli as h

    env = {**standin.env(), "DATABASE_URL": dsn, "EVALLEDGER_HOME": str(tmp_path / "home")}
    views = _harness(env, tmp_path)
    standin.responder = _varied
    args = h.live_args(views, "--questions", QUESTIONS)
    synced = _brain_eval_json(args, env)
    assert synced["calls"] == {"sync": 3 + 9, "batch": 0, "cached_input_tokens": 0}
    cancelled = run_cli("brain-eval", "cancel", synced["eval_run_id"], "--reason", "asked again, batched", env=env)
    assert cancelled.code == 1, cancelled.err
    standin.batch_delay_s = 0.2
    batched = _brain_eval_json([*args, "--batch"], env)
    assert batched["eval_run_id"] != synced["eval_run_id"] and batched["failed"] == {}
    assert _same(batched) == _same(synced)
    assert len({a["citation_rate"] for a in batched["answers"]}) > 1  # the answers differ: the comparison says something
    assert batched["calls"] == {"sync": 0, "batch": 3 + 9, "cached_input_tokens": 0}
    # The synchronous run's three calls, the batched run's three lines; one brain batch, then one per judge.
    assert len(sync_calls(standin, BRAIN_MODEL)) == 3 and len(batch_lines(standin, BRAIN_MODEL)) == 3
    assert len(standin.batch_creates) == 1 + 3
    assert admin.execute("SELECT b.provider, b.attempt, q.item, q.model FROM judge_batch b JOIN judge_batch_request q "
                         "USING (batch_id) WHERE q.model = 'anthropic:claude-sonnet-4-6' ORDER BY q.item").fetchall() == [
        ("anthropic", 1, f"answer {q}", "anthropic:claude-sonnet-4-6") for q in QUESTIONS.split(",")]
    prices = admin.execute("SELECT a.eval_run_id, min(l.price_input), max(l.price_input) FROM brain_eval_harness_answer a "
                           "JOIN brain_analysis_log l USING (analysis_id) GROUP BY a.eval_run_id").fetchall()
    by_run = {str(run): (low, high) for run, low, high in prices}
    (sync_low, sync_high), (batch_low, batch_high) = by_run[synced["eval_run_id"]], by_run[batched["eval_run_id"]]
    assert sync_low == sync_high and batch_low == batch_high and batch_low * 2 == sync_low


def _brain_killed(env, tmp_path, admin, standin, until, what):
    from tests.e2e import test_harness_cli as h

    views = _harness(env, tmp_path)
    standin.responder = lambda model, system, user: ANSWER if model == BRAIN_MODEL else DRAFT
    args = h.live_args(views, "--questions", "EVAL-Q01,EVAL-Q02", "--batch")
    kill_when(start_script(*args, env=env), until, what)
    assert count(admin, "SELECT count(*) FROM brain_eval_harness_answer") == 0
    return args


def _brain_resumed_once(args, env, standin, admin):
    standin.batch_delay_s = 0
    done = _brain_eval_json(args, env)
    assert done["resumed"] is True and len(done["answers"]) == 2 and len(done["suggestions"]) == 6
    assert len(standin.batch_creates) == 1 + 3  # the brain's batch once, then each judge provider's
    assert len(batch_lines(standin, BRAIN_MODEL)) == 2 and sync_calls(standin, BRAIN_MODEL) == []  # one line a question
    for model in ("gpt-4o", "claude-opus-4-7", "gemini-1.5-pro"):
        assert len(batch_lines(standin, model)) == 2 and sync_calls(standin, model) == [], model
    assert done["calls"] == {"sync": 0, "batch": 2 + 6, "cached_input_tokens": 0}
    assert count(admin, "SELECT count(*) FROM judge_batch_event WHERE status = 'submitted'") == 1 + 3
    assert count(admin, "SELECT count(*) FROM brain_analysis_log") == 2  # each answer stored (and billed) once


@pytest.mark.processes
def test_a_harness_run_killed_after_the_brain_batch_was_created_adopts_it(standin, dsn, reviewers, tmp_path, admin):
    """Killed after Anthropic created the brain's batch, before the runner heard its id: the next
    command finds it (its size, its time, its results' custom_ids) and submits nothing again."""
    env = {**standin.env(), "DATABASE_URL": dsn, "EVALLEDGER_HOME": str(tmp_path / "home")}
    hold = threading.Event()
    standin.batch_hold_create, standin.batch_hold_api = hold, "anthropic"
    try:
        args = _brain_killed(env, tmp_path, admin, standin, lambda: standin.batch_creates, "created the brain's batch")
    finally:
        hold.set()
    standin.batch_hold_create = None
    assert count(admin, "SELECT count(*) FROM judge_batch") == 1
    assert count(admin, "SELECT count(*) FROM judge_batch_event") == 0
    _brain_resumed_once(args, env, standin, admin)


@pytest.mark.processes
def test_a_harness_run_killed_while_polling_the_brain_batch_resumes_it(standin, dsn, reviewers, tmp_path, admin):
    env = {**standin.env(), "DATABASE_URL": dsn, "EVALLEDGER_HOME": str(tmp_path / "home")}
    standin.batch_delay_s = 30
    args = _brain_killed(env, tmp_path, admin, standin,
                         lambda: count(admin, "SELECT count(*) FROM judge_batch_event WHERE status = 'submitted'") == 1,
                         "recorded the brain's submission")
    _brain_resumed_once(args, env, standin, admin)


@pytest.mark.processes
def test_a_harness_run_resumed_without_batch_while_the_brain_batch_is_unread_asks_nothing_again(
        standin, dsn, reviewers, tmp_path, admin):
    env = {**standin.env(), "DATABASE_URL": dsn, "EVALLEDGER_HOME": str(tmp_path / "home")}
    standin.batch_delay_s = 30
    args = _brain_killed(env, tmp_path, admin, standin,
                         lambda: count(admin, "SELECT count(*) FROM judge_batch_event WHERE status = 'submitted'") == 1,
                         "recorded the brain's submission")
    unbatched = run_cli(*[a for a in args if a != "--batch"], env=env)
    assert unbatched.code == 3, unbatched.err
    assert "whose results are not read yet: run the same command with --batch to read them" in unbatched.err
    assert sync_calls(standin, BRAIN_MODEL) == []
    assert count(admin, "SELECT count(*) FROM brain_analysis_log") == 0
    _brain_resumed_once(args, env, standin, admin)


@pytest.mark.processes
def test_a_harness_run_killed_while_reading_the_brain_batch_reads_it_once(standin, dsn, reviewers, tmp_path, admin):
    env = {**standin.env(), "DATABASE_URL": dsn, "EVALLEDGER_HOME": str(tmp_path / "home")}
    hold = threading.Event()
    standin.batch_hold_content, standin.batch_hold_api = hold, "anthropic"
    try:
        args = _brain_killed(env, tmp_path, admin, standin, lambda: standin.batch_content_reads,
                             "read the brain's results")
    finally:
        hold.set()
    standin.batch_hold_content = None
    _brain_resumed_once(args, env, standin, admin)


def test_a_brain_answer_the_batch_failed_is_retried_once(standin, dsn, reviewers, tmp_path, admin):
    from tests.e2e import test_harness_cli as h

    env = {**standin.env(), "DATABASE_URL": dsn, "EVALLEDGER_HOME": str(tmp_path / "home")}
    views = _harness(env, tmp_path)
    standin.responder = lambda model, system, user: ANSWER if model == BRAIN_MODEL else DRAFT
    standin.batch_fail[BRAIN_MODEL] = 1
    standin.batch_expire[BRAIN_MODEL] = 1
    done = _brain_eval_json(h.live_args(views, "--questions", QUESTIONS, "--batch"), env)
    assert done["failed"] == {} and len(done["answers"]) == 3 and len(done["suggestions"]) == 9
    assert len(standin.batch_creates) == 2 + 3  # the brain's batch and its retry, then the judges'
    # One line answered a question (the stand-in serves no line it draws to fail or expire).
    assert sync_calls(standin, BRAIN_MODEL) == [] and len(batch_lines(standin, BRAIN_MODEL)) == 3
    assert sorted(admin.execute("SELECT b.attempt, r.outcome FROM judge_batch b JOIN judge_batch_request q "
                                "USING (batch_id) JOIN judge_batch_result r USING (batch_id, custom_id) "
                                "WHERE q.model = 'anthropic:claude-sonnet-4-6'").fetchall()) == [
        (1, "errored"), (1, "expired"), (1, "succeeded"), (2, "succeeded"), (2, "succeeded")]
    assert done["calls"] == {"sync": 0, "batch": 5 + 9, "cached_input_tokens": 0}


def test_a_brain_answer_failing_twice_is_not_stored_and_the_same_command_asks_it_again(standin, dsn, reviewers,
                                                                                     tmp_path, admin):
    from tests.e2e import test_harness_cli as h

    env = {**standin.env(), "DATABASE_URL": dsn, "EVALLEDGER_HOME": str(tmp_path / "home")}
    views = _harness(env, tmp_path)
    standin.responder = lambda model, system, user: ANSWER if model == BRAIN_MODEL else DRAFT
    standin.batch_fail[BRAIN_MODEL] = 2
    args = h.live_args(views, "--questions", "EVAL-Q01", "--batch")
    failed = run_cli(*args, env=env)
    assert failed.code == 3 and "EVAL-Q01: no answer: provider_error: batch request errored" in failed.out, failed.out
    assert len(standin.batch_creates) == 2 and count(admin, "SELECT count(*) FROM brain_eval_harness_answer") == 0
    done = _brain_eval_json(args, env)
    assert done["resumed"] is True and len(done["answers"]) == 1 and len(standin.batch_creates) == 3 + 3


def test_batch_fallback_sync_asks_only_the_answers_the_batch_failed_one_by_one(standin, dsn, reviewers, tmp_path,
                                                                             admin):
    from tests.e2e import test_harness_cli as h

    env = {**standin.env(), "DATABASE_URL": dsn, "EVALLEDGER_HOME": str(tmp_path / "home")}
    views = _harness(env, tmp_path)
    standin.responder = lambda model, system, user: ANSWER if model == BRAIN_MODEL else DRAFT
    standin.batch_expire[BRAIN_MODEL] = 1
    done = _brain_eval_json(h.live_args(views, "--questions", QUESTIONS, "--batch", "--batch-fallback", "sync"), env)
    assert done["failed"] == {} and len(done["answers"]) == 3
    assert len(standin.batch_creates) == 1 + 3  # no retry batch for the brain
    # Two lines answered (the expired one unserved), the third question asked one by one.
    assert len(sync_calls(standin, BRAIN_MODEL)) == 1 and len(batch_lines(standin, BRAIN_MODEL)) == 2
    assert done["calls"] == {"sync": 1, "batch": 3 + 9, "cached_input_tokens": 0}


def test_a_brain_without_a_batch_api_is_asked_one_by_one_and_the_run_says_so(standin, dsn, reviewers, tmp_path,
                                                                           admin):
    from tests.e2e import test_harness_cli as h

    env = {**standin.env(), "DATABASE_URL": dsn, "EVALLEDGER_HOME": str(tmp_path / "home")}
    views = _harness(env, tmp_path, model="compat:brain-7b")
    standin.responder = lambda model, system, user: ANSWER if model == "brain-7b" else DRAFT
    done = run_cli(*h.live_args(views, "--questions", "EVAL-Q01,EVAL-Q02", "--batch"), env=env)
    assert done.code == 0, done.err
    said = [line for line in done.out.splitlines() if "no batch API" in line]
    assert said == ["brain: compat:brain-7b has no batch API in evalledger (compat): its answers are asked one by one, "
                    "the judges' drafts batched"]
    assert len(sync_calls(standin, "brain-7b")) == 2 and batch_lines(standin, "brain-7b") == []
    assert len(standin.batch_creates) == 3


def test_a_brain_answer_the_budget_cannot_hold_is_left_out_of_the_batch(standin, dsn, reviewers, tmp_path, admin):
    from tests.e2e import test_harness_cli as h

    env = {**standin.env(), "DATABASE_URL": dsn, "EVALLEDGER_HOME": str(tmp_path / "home")}
    views = _harness(env, tmp_path)
    standin.responder = lambda model, system, user: ANSWER if model == BRAIN_MODEL else DRAFT
    done = run_cli(*h.live_args(views, "--questions", "EVAL-Q01", "--batch", "--budget-usd", "0"), env=env)
    assert done.code == 3, done.err
    assert "EVAL-Q01: no answer: budget_exhausted: skipped: projected cost of anthropic:claude-sonnet-4-6 would pass " \
           "the budget cap" in done.out, done.out
    assert standin.batch_creates == [] and standin.requests_for(BRAIN_MODEL) == []
    assert count(admin, "SELECT count(*) FROM judge_batch_request") == 0
    assert count(admin, "SELECT count(*) FROM judge_batch") == 0  # no batch with nothing to send


# --- a resumed batch is charged to the budget before anything more is asked ------------------------


def _killed_with_gemini_failing(env, admin, standin):
    """A run killed while it polls its three batches, Gemini's failing its request: the resumed run
    reads two verdicts and one failure, and the failure's retry is a new request to submit."""
    standin.batch_delay_s = 3
    standin.batch_fail["gemini-1.5-pro"] = 1
    _kill_when(env, lambda: count(admin, "SELECT count(*) FROM judge_batch_event WHERE status = 'submitted'") == 3,
               "recorded the three submissions")
    standin.batch_delay_s = 0
    # What the retry is projected to cost: the started row's estimate (the same prompt, the batch rates).
    return count(admin, "SELECT estimated_cost_usd FROM eval_takes_quality_judge_verdicts "
                        "WHERE model = 'google:gemini-1.5-pro' AND call_started")


@pytest.mark.processes
def test_a_resumed_batch_is_charged_to_the_budget_before_anything_more_is_asked(env, corpus, standin, admin):
    """The batch an earlier, killed command submitted is billed whether read or not: the command
    that resumes and reads it pays for it out of its --budget-usd before it asks anything more. Here
    the cap holds the failed request's retry alone, not with the two verdicts the resumed batch
    brought: the retry is not submitted, and the run ends as any run its budget stopped does."""
    retry = _killed_with_gemini_failing(env, admin, standin)
    cap = retry * Decimal("1.2")
    assert cap > 0
    result, receipt = tq(env, "--models", PANEL, "--batch", "--budget-usd", str(cap))
    assert result.code in (0, 1, 2), result.err
    assert len(standin.batch_creates) == 3  # the three resumed, nothing submitted since
    assert [r for r in standin.requests if r.headers and r.model] == []  # and nothing asked one by one
    assert count(admin, "SELECT count(*) FROM judge_batch") == 3  # no retry batch with nothing to send
    assert "retrying" not in result.out + result.err
    read = count(admin, "SELECT sum(cost_usd) FROM eval_takes_quality_judge_verdicts WHERE NOT call_started "
                        "AND error_kind IS NULL")
    assert read + retry > cap  # what the resumed batch cost is what left no room for the retry
    assert receipt["final"] is False
    assert any(e.startswith("cycle 1 google:gemini-1.5-pro: budget_exhausted: skipped: projected cost of "
                            "google:gemini-1.5-pro would pass the budget cap") for e in receipt["errors"]), \
        receipt["errors"]
    assert "call(s) not made: the budget cap would have been passed; not final" in receipt["verdictMessage"]
    assert "is not final: some calls failed outside the judges' content" in result.err  # as a run out of budget
    # With a budget that holds both, the same command retries it in a batch of its own, as before.
    result, receipt = tq(env, "--models", PANEL, "--batch", "--budget-usd", "5")
    assert receipt["final"] is True, result.err
    assert len(standin.batch_creates) == 4


@pytest.mark.processes
def test_a_resumed_batch_within_the_budget_is_read_and_retried_as_before(env, corpus, standin, admin):
    _killed_with_gemini_failing(env, admin, standin)
    result, receipt = tq(env, "--models", PANEL, "--batch", "--budget-usd", "5")
    assert result.code == 0, result.err
    assert receipt["final"] is True and receipt["successes_per_cycle"] == [3]
    assert len(standin.batch_creates) == 4  # the three resumed, and the failed request's retry
    assert receipt["calls"] == {"sync": 0, "batch": 4, "cached_input_tokens": 0}
    assert 0 < receipt["cost_usd"] <= 5


def test_a_batched_run_submits_nothing_its_budget_cannot_hold(env, corpus, standin, admin):
    """A batched request is held against --budget-usd at the batch rates before it is written: with a
    zero budget nothing is submitted, and the run ends as the same run made one by one does."""
    result, receipt = tq(env, "--models", PANEL, "--batch", "--budget-usd", "0")
    assert standin.batch_creates == [] and standin.requests == []
    assert result.code == 2 and receipt["final"] is False
    assert sorted(receipt["errors"]) == [f"cycle 1 {m}: budget_exhausted: skipped: projected cost of {m} would pass the budget cap"
                                 for m in sorted(PANEL.split(","))], receipt["errors"]
    assert receipt["verdictMessage"].endswith(  # as tests/e2e/test_takes_quality_cli.py's zero budget without --batch
        "; 3 call(s) not made: the budget cap would have been passed; not final: 3 call(s) failed outside the judges' "
        "content, and running the same eval again retries them")
    assert receipt["calls"] == {"sync": 0, "batch": 0, "cached_input_tokens": 0}
    assert count(admin, "SELECT count(*) FROM judge_batch_request") == 0
    assert count(admin, "SELECT count(*) FROM judge_batch") == 0  # no batch with nothing to send


@pytest.mark.processes
def test_a_harness_run_resumed_past_its_budget_reads_the_brain_batch_and_asks_no_judge(standin, dsn, reviewers,
                                                                                      tmp_path, admin):
    """The brain's batch, submitted by a killed command, is billed whether read or not: the command
    that resumes it with a budget it already passes reads and stores its answers, and asks no judge,
    neither in a batch nor one by one: no draft is stored (a stored one would be final), the command
    says how many were not sent, and the same command with room in its budget batches them."""
    env = {**standin.env(), "DATABASE_URL": dsn, "EVALLEDGER_HOME": str(tmp_path / "home")}
    standin.batch_delay_s = 30
    args = _brain_killed(env, tmp_path, admin, standin,
                         lambda: count(admin, "SELECT count(*) FROM judge_batch_event WHERE status = 'submitted'") == 1,
                         "recorded the brain's submission")
    standin.batch_delay_s = 0
    capped = run_cli(*args, "--budget-usd", "0", env=env)
    assert capped.code == 0, capped.err
    assert len(standin.batch_creates) == 1  # the brain's, resumed; no judge's
    assert [r for r in standin.requests if r.headers and r.model] == []  # nothing asked one by one
    assert count(admin, "SELECT count(*) FROM brain_analysis_log") == 2  # the answers read and stored
    assert "answers: 2 of 2 stored (0 before this resumption); 2 asked now" in capped.out
    assert "suggestions: 0 drafted by 3 judges; 6 asked now, cost $0.0000" in capped.out
    assert count(admin, "SELECT count(*) FROM brain_eval_judge_suggestion") == 0
    assert "6 drafts not sent: the budget cap would have been passed; run the same command again with room in " \
           "--budget-usd to ask only those" in capped.err
    again = run_cli(*args, "--budget-usd", "5", env=env)
    assert again.code == 0, again.err
    assert "suggestions: 6 drafted by 3 judges; 6 asked now" in again.out, again.out
    assert [r for r in standin.requests if r.headers and r.model] == []  # the drafts batched, none asked one by one
    assert len(standin.batch_creates) == 1 + 3
    assert "drafts not sent" not in again.err


@pytest.mark.parametrize("batch", [(), ("--batch",)])
def test_a_brain_without_a_price_under_a_budget_is_refused_before_any_call(standin, dsn, reviewers, tmp_path, admin,
                                                                           batch):
    """A cap needs every model's price, batched or not: a brain whose model has none stops the run
    before its answers are asked (one line, exit 3)."""
    from tests.e2e import test_harness_cli as h

    env = {**standin.env(), "DATABASE_URL": dsn, "EVALLEDGER_HOME": str(tmp_path / "home")}
    views = _harness(env, tmp_path, model="anthropic:claude-without-a-price")
    done = run_cli(*h.live_args(views, "--questions", "EVAL-Q01", *batch, "--budget-usd", "1"), env=env)
    assert done.code == 3, (done.out, done.err)
    assert "no price for model 'anthropic:claude-without-a-price' in pricing.json" in done.err, done.err
    assert standin.batch_creates == [] and standin.requests_for("claude-without-a-price") == []
    assert count(admin, "SELECT count(*) FROM brain_analysis_log") == 0


# --- a batch written but never submitted is this command's own spend ------------------------------

REFUSED = "http://127.0.0.1:9"  # nothing listens: every provider call is refused


def _written_never_submitted(env, admin, standin):
    """A batched run whose every provider refuses the connection: its three batches are written to the
    ledger, none submitted (the provider has none of them), and the command stops saying the same
    command again resumes them."""
    down = {**env, "OPENAI_BASE_URL": REFUSED + "/v1", "ANTHROPIC_BASE_URL": REFUSED,
            "GOOGLE_GEMINI_BASE_URL": REFUSED, "GEMINI_BASE_URL": REFUSED + "/v1"}
    first, _ = tq(down, "--models", PANEL, "--batch", "--timeout", "2", "--retries", "0", json_out=False)
    assert first.code == 3 and first.err.strip().endswith("the same command again resumes it"), first.err
    assert count(admin, "SELECT count(*) FROM judge_batch") == 3
    assert count(admin, "SELECT count(*) FROM judge_batch_event WHERE status = 'submitted'") == 0
    assert standin.batch_creates == []


def _estimate(admin, model):
    return count(admin, "SELECT estimated_cost_usd FROM eval_takes_quality_judge_verdicts "
                        "WHERE model = %s AND call_started", model)


def test_a_batch_never_submitted_is_not_submitted_past_a_zero_budget(env, corpus, standin, admin):
    """The provider bills a batch it has, read or not: one an earlier command wrote and never
    submitted it does not have (looked for first, as a batch whose id the ledger never heard is), so
    resuming it is this command's own spend, under its --budget-usd. A zero budget submits none of
    them: the run ends as a zero budget's run does, each request stored as budget_exhausted and left
    pending in its batch; the same command with a budget that holds them submits each once."""
    _written_never_submitted(env, admin, standin)
    result, receipt = tq(env, "--models", PANEL, "--batch", "--budget-usd", "0")
    assert standin.batch_creates == [], "a zero budget submitted batches (spent money)"
    assert [r for r in standin.requests if r.headers and r.model] == []  # nor asked one by one
    assert result.code == 2 and receipt["final"] is False, result.err
    assert sorted(receipt["errors"]) == [f"cycle 1 {m}: budget_exhausted: skipped: projected cost of {m} would pass "
                                         "the budget cap" for m in sorted(PANEL.split(","))], receipt["errors"]
    assert "3 call(s) not made: the budget cap would have been passed; not final" in receipt["verdictMessage"]
    assert receipt["calls"] == {"sync": 0, "batch": 0, "cached_input_tokens": 0} and receipt["cost_usd"] == 0
    assert count(admin, "SELECT count(*) FROM judge_batch") == 3  # the same three batches, no new one
    assert count(admin, "SELECT count(*) FROM judge_batch_result") == 0  # every request still pending
    assert count(admin, "SELECT count(*) FROM judge_batch_event WHERE status = 'submitted'") == 0
    # A budget that holds them: each batch submitted once, read, its cost counted once.
    lists = standin.batch_lists
    result, receipt = tq(env, "--models", PANEL, "--batch", "--budget-usd", "5")
    assert result.code == 0 and receipt["final"] is True, result.err
    assert len(standin.batch_creates) == 3
    assert standin.batch_lists - lists == 2  # Anthropic's and Gemini's looked for once each, not again to submit
    assert receipt["calls"] == {"sync": 0, "batch": 3, "cached_input_tokens": 0}
    for model in ("gpt-4o", "claude-opus-4-7", "gemini-1.5-pro"):
        assert len(batch_lines(standin, model)) == 1 and sync_calls(standin, model) == [], model
    answered = count(admin, "SELECT sum(cost_usd) FROM eval_takes_quality_judge_verdicts WHERE NOT call_started "
                            "AND error_kind IS NULL")
    assert 0 < answered and receipt["cost_usd"] == pytest.approx(float(answered), abs=0)
    assert count(admin, "SELECT count(*) FROM judge_batch") == 3
    assert count(admin, "SELECT count(*) FROM judge_batch_result WHERE outcome = 'succeeded'") == 3


def test_a_batch_never_submitted_is_submitted_only_when_the_budget_holds_it_whole(env, corpus, standin, admin):
    """A budget that holds OpenAI's never-submitted batch and not the others': OpenAI's is submitted
    once and read, cost counted once; the others stay pending, unsent, their requests stored as
    budget_exhausted. With a larger budget, the same command submits the other two, not OpenAI's again."""
    _written_never_submitted(env, admin, standin)
    gpt = _estimate(admin, "openai:gpt-4o")
    cap = gpt * Decimal("1.01")
    assert _estimate(admin, "anthropic:claude-opus-4-7") > cap - gpt
    assert _estimate(admin, "google:gemini-1.5-pro") > cap - gpt
    result, receipt = tq(env, "--models", PANEL, "--batch", "--budget-usd", str(cap))
    assert result.code in (0, 1, 2), result.err
    assert len(standin.batch_creates) == 1 and standin.batch_creates[0].startswith(CREATED["openai"])
    assert receipt["final"] is False and receipt["calls"] == {"sync": 0, "batch": 1, "cached_input_tokens": 0}
    assert sorted(receipt["errors"]) == [f"cycle 1 {m}: budget_exhausted: skipped: projected cost of {m} would pass "
                                         "the budget cap" for m in ("anthropic:claude-opus-4-7",
                                                                    "google:gemini-1.5-pro")], receipt["errors"]
    read = count(admin, "SELECT cost_usd FROM eval_takes_quality_judge_verdicts WHERE model = 'openai:gpt-4o' "
                        "AND NOT call_started")
    assert 0 < read <= cap and receipt["cost_usd"] == pytest.approx(float(read), abs=0)
    assert count(admin, "SELECT count(*) FROM judge_batch_request q WHERE NOT EXISTS (SELECT 1 FROM "
                        "judge_batch_result r WHERE (r.batch_id, r.custom_id) = (q.batch_id, q.custom_id))") == 2
    result, receipt = tq(env, "--models", PANEL, "--batch", "--budget-usd", "5")
    assert result.code == 0 and receipt["final"] is True, result.err
    assert len(standin.batch_creates) == 3 and len(batch_lines(standin, "gpt-4o")) == 1
    assert receipt["calls"] == {"sync": 0, "batch": 3, "cached_input_tokens": 0}  # the run's, the first included
    assert count(admin, "SELECT count(*) FROM judge_batch") == 3
    assert count(admin, "SELECT count(*) FROM judge_batch_result WHERE outcome = 'succeeded'") == 3
