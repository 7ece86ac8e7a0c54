"""Issue 37, item 2, through the CLI for takes-quality and work-quality: a run of another seed (or
another --run-id) of the same subject while one is open is refused naming it, exit 3; `takes-quality
cancel RUN --reason` and `work-quality cancel SNAPSHOT --reason` record the cancellation and print
what the database decided (exit 1), and each suite's `list --state` shows open, cancelled and
abandoned runs (an open run past its deadline before anything closed it)."""

from __future__ import annotations

import json
import re

import pytest

from tests.cli import run_cli
from tests.e2e.test_takes_quality_cli import CORPUS, tq, write_jsonl
from tests.e2e.test_work_quality_cli import Judges, wq
from tests.standin import steps
from tests.unguarded import clocks_unguarded


@pytest.fixture
def env(standin, dsn, tmp_path):
    return {**standin.env(), "DATABASE_URL": dsn, "EVALLEDGER_HOME": str(tmp_path / "home"),
            "EVALLEDGER_WORK_QUALITY_MODELS": None}


@pytest.fixture
def corpus(env, tmp_path):
    path = write_jsonl(tmp_path / "takes.jsonl", CORPUS)
    assert run_cli("corpus", "load", str(path), env=env).code == 0
    return path


@pytest.fixture
def work(tmp_path):
    path = tmp_path / "fix.diff"
    path.write_text("--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-return a - b\n+return a + b\n")
    return path


def listed(env, suite, *args) -> list:
    rows = json.loads(run_cli(suite, "list", *args, "--format", "json", env=env).out)["rows"]
    return [(r["id"] if suite == "takes-quality" else r["snapshot_id"], r["state"]) for r in rows]


def aged(admin, table, key, run, days: int) -> None:
    with admin.transaction(), clocks_unguarded(admin, [table]):
        admin.execute(f"UPDATE evalledger.{table} SET created_at = created_at - make_interval(days => %s) "
                      f"WHERE {key} = %s", (days, run))


def test_takes_quality_one_open_run_cancel_and_list_states(env, corpus, standin, admin, tmp_path):
    standin.script("gemini-1.5-pro", steps.server_error(500), steps.server_error(503))
    first, receipt = tq(env, "--limit", "3", "--deadline", "0")
    assert first.code == 0 and receipt["final"] is False
    run = receipt["run_id"]

    # Another seed draws another sample of the same scope (one that draws the same sample is the same
    # eval, resumed): refused while the first is open.
    tries = [run_cli("run", "takes-quality", "--limit", "3", "--seed", str(seed), "--deadline", "0", env=env)
             for seed in range(20, 26)]
    other = next(t for t in tries if t.code == 3)
    assert re.fullmatch(
        rf"evalledger: error: takes-quality run {run} of no target, this prompt, sample scope and live "
        r"judges, is open \(recorded \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC\): complete or cancel it first \(constraint "
        rf"eval_takes_quality_runs_one_open_idx\); evalledger takes-quality cancel {run} --reason \"...\" "
        r"\[SQLSTATE 23505\]\n", other.err), other.err
    assert listed(env, "takes-quality", "--state", "open") == [(run, "open")]

    # Past its deadline it lists as abandoned, verdict fail, before anything closes it.
    aged(admin, "eval_takes_quality_runs", "id", run, 15)
    assert listed(env, "takes-quality", "--state", "abandoned") == [(run, "abandoned")]
    assert listed(env, "takes-quality", "--verdict", "fail") == [(run, "abandoned")]
    trend = json.loads(run_cli("trend", "--json", env=env).out)["rows"]
    assert [(r["id"], r["verdict"], r["state"]) for r in trend] == [(run, "fail", "abandoned")]
    assert trend[0]["cost_usd"] > 0  # what its answered calls cost
    assert "(abandoned)" in run_cli("trend", env=env).out
    aged(admin, "eval_takes_quality_runs", "id", run, -15)

    no_reason = run_cli("takes-quality", "cancel", str(run), env=env)
    assert no_reason.code == 3 and "Missing option '--reason'" in no_reason.err
    cancelled = run_cli("takes-quality", "cancel", str(run), "--reason", "wrong sample", env=env)
    assert cancelled.code == 1, cancelled.err
    assert re.search(r"Abandoned: cancelled by \w+: wrong sample", cancelled.out), cancelled.out
    assert listed(env, "takes-quality", "--state", "cancelled") == [(run, "cancelled")]
    again = run_cli("takes-quality", "cancel", str(run), "--reason", "twice", env=env)
    assert (again.code, again.err) == (3, f"evalledger: error: run {run} is not an open takes-quality run this role "
                                          "can cancel\n")
    shown = run_cli("takes-quality", "show", str(run), "--json", env=env)
    assert shown.code == 1 and json.loads(shown.out)["run"]["state"] == "cancelled"
    # The HTML report (the dashboards in one file) lists it among the runs not completed whole.
    report = tmp_path / "report.html"
    assert run_cli("report", "--out", str(report), env=env).code == 0
    html = report.read_text()
    assert "Runs not completed whole" in html and "Abandoned: cancelled by" in html and ">cancelled<" in html

    # Its place is free.
    standin.set_default("*", steps.ok())
    assert run_cli("run", "takes-quality", "--limit", "3", "--seed", "20", env=env).code in (0, 1, 2)


def test_work_quality_one_open_run_cancel_and_list_states(env, work, standin, admin):
    Judges(standin)
    standin.set_default("*", steps.server_error(503))
    assert wq(env, work, "--run-id", "a").exit_code == 3  # no judge answered: the run stays open
    [(snapshot, state)] = listed(env, "work-quality", "--state", "open")
    other = wq(env, work, "--run-id", "b")
    assert other.exit_code == 3
    assert re.fullmatch(
        rf"evalledger: error: work-quality run a of review-pr \(live judges\), snapshot {snapshot}, is "
        r"open \(recorded \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC\): complete or cancel it first \(constraint "
        rf"eval_work_quality_snapshots_one_open_idx\); evalledger work-quality cancel {snapshot} --reason \"...\" "
        r"\[SQLSTATE 23505\]\n", other.stderr), other.stderr

    aged(admin, "eval_work_quality_snapshots", "snapshot_id", snapshot, 15)
    assert listed(env, "work-quality", "--state", "abandoned") == [(snapshot, "abandoned")]
    aged(admin, "eval_work_quality_snapshots", "snapshot_id", snapshot, -15)

    cancelled = run_cli("work-quality", "cancel", str(snapshot), "--reason", "wrong diff", env=env)
    assert cancelled.code == 1, cancelled.err
    assert re.fullmatch(rf"work-quality run a of review-pr \(snapshot {snapshot}\): cancelled, a regression: "
                        r"Abandoned: cancelled by \w+: wrong diff\n", cancelled.out), cancelled.out
    assert listed(env, "work-quality", "--state", "cancelled") == [(snapshot, "cancelled")]

    standin.set_default("*", steps.ok())
    assert wq(env, work, "--run-id", "b").exit_code == 0


@pytest.mark.long  # the 503s are retried until the run gives up, as a real run waits them out
def test_a_work_quality_run_resumed_past_its_deadline_fails_the_gate(env, work, standin, admin):
    """Leave a run open, and finish it weeks later only if it looks good: it completes abandoned, a
    regression whose reason is the abandonment, and --gate exits 1."""
    Judges(standin)
    standin.set_default("*", steps.server_error(503))
    assert wq(env, work, "--run-id", "a").exit_code == 3
    [(snapshot, _)] = listed(env, "work-quality", "--state", "open")
    aged(admin, "eval_work_quality_snapshots", "snapshot_id", snapshot, 15)
    standin.set_default("*", steps.ok())
    resumed = wq(env, work, "--run-id", "a", "--gate")
    assert resumed.exit_code == 1, resumed.stdout
    assert "Abandoned: open past its deadline" in resumed.stdout + resumed.stderr
    assert listed(env, "work-quality", "--state", "abandoned") == [(snapshot, "abandoned")]
    history = run_cli("snapshot", "list", "review-pr", "--json", env=env)
    assert "Abandoned: open past its deadline" in history.out
