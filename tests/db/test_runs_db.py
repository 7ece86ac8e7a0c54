"""What the database holds of a run's identity, its retries and its claims (docs/runs.md).

An eval's identity says how it was judged; a failure outside the judges' content is retried, never
read back as a verdict; a call is recorded as started before it is sent; a run claim is a row no
transaction commits, which only the runner may take.
"""

from __future__ import annotations

import threading
import time
from decimal import Decimal

import psycopg
import pytest
from psycopg.types.json import Jsonb

from tests.db.test_takes_quality_db import DIMS, PANEL, start_run, verdict


@pytest.fixture
def runner(connect_as):
    return connect_as("evalledger_runner")


def complete(conn, run_id):
    return conn.execute("SELECT evalledger.takes_quality_complete_v1(%s)",
                        (run_id,)).fetchone()[0]


def identity(conn, run_id):
    return conn.execute("SELECT scope_sha8, judges, rerun FROM eval_takes_quality_runs WHERE id = %s",
                        (run_id,)).fetchone()


def start(conn, model, run_id, cycle=1, estimate="0.01"):
    conn.execute("INSERT INTO eval_takes_quality_judge_verdicts (run_id, cycle, model, recorded, call_started, "
                 "estimated_cost_usd) VALUES (%s, %s, %s, false, true, %s)", (run_id, cycle, model, estimate))


# --- identity ----------------------------------------------------------------------------------


def test_recorded_replies_never_occupy_a_live_runs_identity(runner):
    recorded = start_run(runner, judges="recorded")
    live = start_run(runner, judges="live")
    assert recorded != live
    assert identity(runner, recorded)[1:] == ("recorded", 0) and identity(runner, live)[1:] == ("live", 0)
    with pytest.raises(psycopg.errors.CheckViolation, match="judged by live judges: a recorded reply is not one"):
        verdict(runner, live, PANEL[0], recorded=True)
    with pytest.raises(psycopg.errors.CheckViolation, match="judged by recorded judges: a live reply is not one"):
        verdict(runner, recorded, PANEL[0], recorded=False)
    with pytest.raises(psycopg.errors.CheckViolation, match="judges_known"):
        start_run(runner, judges="mixed")


def test_the_scope_of_the_sample_is_part_of_the_identity_and_the_databases_fingerprint(runner):
    from_db = start_run(runner)
    from_files = start_run(runner, corpus_source="fs", corpus_path="/data/takes.jsonl")
    prefixed = start_run(runner, slug_prefix="demo/")
    scopes = {identity(runner, r)[0] for r in (from_db, from_files, prefixed)}
    assert len(scopes) == 3 and all(len(s) == 8 for s in scopes)
    # The same scope again is the same eval: no second row.
    again = runner.execute(
        "INSERT INTO eval_takes_quality_runs (corpus_source, corpus_path, sample_limit, seed, n_takes, corpus_sha8, "
        "prompt_sha8, models) VALUES ('fs', '/data/takes.jsonl', 10, 99, 3, 'aaaaaaaa', 'bbbbbbbb', %s) "
        "ON CONFLICT ON CONSTRAINT eval_takes_quality_runs_identity_key DO NOTHING", (PANEL,))
    assert again.rowcount == 0
    with pytest.raises(psycopg.errors.InsufficientPrivilege):  # the database's fingerprint, not the runner's
        runner.execute("INSERT INTO eval_takes_quality_runs (corpus_source, sample_limit, seed, n_takes, corpus_sha8, "
                       "prompt_sha8, models, scope_sha8) VALUES ('db', 10, 1, 3, 'cccccccc', 'bbbbbbbb', %s, "
                       "'00000000')", (PANEL,))


def test_a_rerun_is_the_next_judging_of_a_complete_eval(runner):
    first = start_run(runner)
    with pytest.raises(psycopg.errors.CheckViolation, match="rerun 1 of this takes-quality eval needs its judging 0"):
        start_run(runner, rerun=1)
    for model in PANEL:
        verdict(runner, first, model)
    complete(runner, first)
    with pytest.raises(psycopg.errors.CheckViolation, match="rerun 2 of this takes-quality eval needs its judging 1"):
        start_run(runner, rerun=2)
    second = start_run(runner, rerun=1)
    assert identity(runner, second)[2] == 1
    with pytest.raises(psycopg.errors.UniqueViolation, match="identity_key"):
        start_run(runner, rerun=1)
    for model in PANEL:
        verdict(runner, second, model)
    assert complete(runner, second)["rerun"] == 1


# --- retries and started calls ----------------------------------------------------------------


def test_an_outage_decides_nothing_and_a_retry_of_exactly_the_failed_call_does(runner):
    run_id = start_run(runner)
    verdict(runner, run_id, PANEL[0])
    verdict(runner, run_id, PANEL[1], error_kind="provider_error", error_message="HTTP 500", response_json=None)
    verdict(runner, run_id, PANEL[2], error_kind="budget_exhausted", error_message="skipped", response_json=None)
    with pytest.raises(psycopg.errors.CheckViolation, match="is not final: cycle 1 anthropic:claude-opus-4-7 "
                                                            r"\(provider_error\), cycle 1 google:gemini-1.5-pro "
                                                            r"\(budget_exhausted\)"):
        complete(runner, run_id)
    # A later cycle waits for the one before to be decided.
    with pytest.raises(psycopg.errors.CheckViolation, match="cycle 1 of takes-quality run .* is not decided"):
        verdict(runner, run_id, PANEL[0], cycle=2)
    # The answered judge's verdict stands; the failed calls are retried, each once more.
    with pytest.raises(psycopg.errors.CheckViolation, match="has its verdict in cycle 1"):
        verdict(runner, run_id, PANEL[0])
    verdict(runner, run_id, PANEL[1])
    verdict(runner, run_id, PANEL[2], scores={d: 4 for d in DIMS})
    rows = runner.execute("SELECT model, retry_no, contributes FROM eval_takes_quality_judge_verdicts "
                          "WHERE run_id = %s ORDER BY model, retry_no", (run_id,)).fetchall()
    assert rows == [("anthropic:claude-opus-4-7", 0, False), ("anthropic:claude-opus-4-7", 1, True),
                    ("google:gemini-1.5-pro", 0, False), ("google:gemini-1.5-pro", 1, True),
                    ("openai:gpt-4o", 0, True)]
    receipt = complete(runner, run_id)
    assert receipt["final"] is True and receipt["successes_per_cycle"] == [3] and receipt["verdict"] == "fail"
    assert receipt["errors"] == ["cycle 1 anthropic:claude-opus-4-7: provider_error: HTTP 500; retried",
                                 "cycle 1 google:gemini-1.5-pro: budget_exhausted: skipped; retried"]


def test_a_started_call_without_an_answer_counts_its_estimate(runner):
    run_id = start_run(runner)
    start(runner, PANEL[0], run_id, estimate="0.0125")  # answered below
    verdict(runner, run_id, PANEL[0], cost_usd="0.00027", input_tokens=108)
    start(runner, PANEL[1], run_id, estimate="0.0200")  # lost: its runner was killed
    start(runner, PANEL[1], run_id, estimate="0.0200")  # the resumed runner's call
    verdict(runner, run_id, PANEL[1], cost_usd="0.00027")
    verdict(runner, run_id, PANEL[2], cost_usd="0.00027")
    receipt = complete(runner, run_id)
    # Exactly: three answers at $0.00027 and the estimate of the lost call; nothing rounded.
    assert Decimal(str(receipt["cost_usd"])) == Decimal("0.02081")
    assert receipt["errors"] == ["cycle 1 anthropic:claude-opus-4-7: no reply: the runner stopped while the call "
                                 "was in flight (estimated $0.02 counted); retried"]
    assert runner.execute("SELECT cost_usd FROM eval_takes_quality_runs WHERE id = %s", (run_id,)).fetchone()[0] \
        == Decimal("0.02081")


def test_a_started_call_carries_its_estimate_and_nothing_else(runner):
    run_id = start_run(runner)
    with pytest.raises(psycopg.errors.CheckViolation, match="needs the estimate of its cost"):
        runner.execute("INSERT INTO eval_takes_quality_judge_verdicts (run_id, cycle, model, recorded, call_started) "
                       "VALUES (%s, 1, %s, false, true)", (run_id, PANEL[0]))
    with pytest.raises(psycopg.errors.CheckViolation, match="carries only the estimate of its cost"):
        runner.execute("INSERT INTO eval_takes_quality_judge_verdicts (run_id, cycle, model, recorded, call_started, "
                       "estimated_cost_usd, response_json) VALUES (%s, 1, %s, false, true, 0.01, %s)",
                       (run_id, PANEL[0], Jsonb({"scores": {d: 10 for d in DIMS}})))
    with pytest.raises(psycopg.errors.CheckViolation, match="only a started call carries an estimated cost"):
        verdict(runner, run_id, PANEL[0], estimated_cost_usd="0.01")
    start(runner, PANEL[0], run_id)
    # A call still in flight (or lost) is no verdict: the run cannot complete on it.
    verdict(runner, run_id, PANEL[1])
    verdict(runner, run_id, PANEL[2])
    with pytest.raises(psycopg.errors.CheckViolation, match=r"not final: cycle 1 openai:gpt-4o \(started, no reply\)"):
        complete(runner, run_id)


# --- work-quality -------------------------------------------------------------------------------


def wq_start(conn, run_id="r1", judges="live", models=("openai:gpt-4o",)):
    return conn.execute("INSERT INTO eval_work_quality_snapshots (origin, kind, name, run_id, evidence_sha256, models, "
                        "judges) VALUES ('run', 'bot', 'b', %s, %s, %s, %s) RETURNING snapshot_id",
                        (run_id, "a" * 64, list(models), judges)).fetchone()[0]


def wq_verdict(conn, sid, response, model="openai:gpt-4o", recorded=False, **extra):
    values = {"snapshot_id": sid, "model": model, "recorded": recorded,
              "response_json": None if response is None else Jsonb(response), **extra}
    cols = ", ".join(values)
    marks = ", ".join(f"%({k})s" for k in values)
    return conn.execute(f"INSERT INTO eval_work_quality_judge_verdicts ({cols}) VALUES ({marks}) "
                        "RETURNING retry_no, contributes, error_kind", values).fetchone()


def wq_reply(score=0.7):
    from evalledger.suites.work_quality.snapshot import DIMENSIONS

    return {**{d: score for d in DIMENSIONS}, "narrative": "Grounded.", "confidence": 0.8}


def test_work_quality_retries_a_run_id_whose_judges_all_failed(runner):
    sid = wq_start(runner)
    assert wq_verdict(runner, sid, wq_reply(1.5)) == (0, False, "out_of_scale")
    with pytest.raises(psycopg.errors.CheckViolation, match="no judge produced a verdict"):
        runner.execute("SELECT evalledger.work_quality_complete_v1(%s)", (sid,))
    # Nothing contributed, so even a reply out of scale is judged again (the run could never complete).
    assert wq_verdict(runner, sid, None, error_kind="provider_error", error_message="HTTP 500") == (1, False,
                                                                                                 "provider_error")
    assert wq_verdict(runner, sid, wq_reply()) == (2, True, None)
    with pytest.raises(psycopg.errors.CheckViolation, match="has its verdict on work-quality snapshot"):
        wq_verdict(runner, sid, wq_reply())
    doc = runner.execute("SELECT evalledger.work_quality_complete_v1(%s)", (sid,)).fetchone()[0]
    assert doc["aggregate"]["note"] == "" and doc["aggregate"]["mean_scores"]["overall"] == 0.7


def test_work_quality_recorded_and_live_runs_of_one_run_id_are_two_snapshots(runner):
    recorded = wq_start(runner, judges="recorded")
    wq_verdict(runner, recorded, wq_reply(0.2), recorded=True)
    runner.execute("SELECT evalledger.work_quality_complete_v1(%s)", (recorded,))
    live = wq_start(runner, judges="live")
    assert live != recorded
    # A live run is compared with live snapshots only: a recorded one is no baseline.
    assert runner.execute("SELECT prev_snapshot_id FROM eval_work_quality_snapshots WHERE snapshot_id = %s",
                          (live,)).fetchone() == (None,)
    with pytest.raises(psycopg.errors.CheckViolation, match="judged by live judges: a recorded reply"):
        wq_verdict(runner, live, wq_reply(), recorded=True)
    second_recorded = wq_start(runner, run_id="r2", judges="recorded")
    assert runner.execute("SELECT prev_run_id FROM eval_work_quality_snapshots WHERE snapshot_id = %s",
                          (second_recorded,)).fetchone() == ("r1",)


# --- claims -------------------------------------------------------------------------------------


def test_a_claim_is_never_committed(runner, admin):
    runner.execute("BEGIN")
    runner.execute("INSERT INTO run_claim (suite, run_id) VALUES ('takes-quality', 1)")
    with pytest.raises(psycopg.errors.InvalidTransactionTermination, match="roll it back, never commit it"):
        runner.execute("COMMIT")
    assert admin.execute("SELECT count(*) FROM run_claim").fetchone() == (0,)


@pytest.mark.parametrize("role", ["evalledger_reviewer", "evalledger_revops", "evalledger_auditor",
                                  "evalledger_agent"])
def test_only_the_runner_can_take_a_claim(connect_as, role):
    other = connect_as(role)
    # The agent does not even see the schema (no USAGE): the table is not there for it.
    refused = psycopg.errors.UndefinedTable if role == "evalledger_agent" else psycopg.errors.InsufficientPrivilege
    with pytest.raises(refused):
        other.execute("INSERT INTO run_claim (suite, run_id) VALUES ('takes-quality', 1)")


@pytest.mark.server_timeouts
def test_a_second_claim_waits_for_the_first_and_an_advisory_lock_holds_nothing_up(connect_as):
    first, second, reader = (connect_as("evalledger_runner"), connect_as("evalledger_runner"),
                             connect_as("evalledger_auditor"))
    # A well-known advisory key, taken by anyone, does not keep the runner from its claim.
    reader.execute("SELECT pg_advisory_lock(hashtext('takes-quality 7'))")
    first.execute("BEGIN")
    first.execute("INSERT INTO run_claim (suite, run_id) VALUES ('takes-quality', 7)")
    second.execute("BEGIN")
    second.execute("SET LOCAL lock_timeout = '100ms'")
    with pytest.raises(psycopg.errors.LockNotAvailable):
        second.execute("INSERT INTO run_claim (suite, run_id) VALUES ('takes-quality', 7)")
    second.execute("ROLLBACK")
    got = []

    def wait_for_it():
        second.execute("BEGIN")
        second.execute("INSERT INTO run_claim (suite, run_id) VALUES ('takes-quality', 7)")
        got.append(time.monotonic())
        second.execute("ROLLBACK")

    waiter = threading.Thread(target=wait_for_it)
    waiter.start()
    time.sleep(0.3)
    assert got == []  # still waiting on the first claim
    released = time.monotonic()
    first.execute("ROLLBACK")
    waiter.join(10)
    assert got and got[0] >= released


def test_work_quality_counts_a_lost_calls_estimate_and_waits_for_a_call_in_flight(runner):
    sid = wq_start(runner, models=("openai:gpt-4o", "anthropic:claude-opus-4-7"))
    for model in ("openai:gpt-4o", "anthropic:claude-opus-4-7"):
        runner.execute("INSERT INTO eval_work_quality_judge_verdicts (snapshot_id, model, recorded, call_started, "
                       "estimated_cost_usd) VALUES (%s, %s, false, true, 0.0125)", (sid, model))
    wq_verdict(runner, sid, wq_reply(), cost_usd="0.00027")  # gpt-4o answered
    with pytest.raises(psycopg.errors.CheckViolation, match="lacks a verdict from anthropic:claude-opus-4-7"):
        runner.execute("SELECT evalledger.work_quality_complete_v1(%s)", (sid,))
    # Its runner was killed; the next one starts the call again and it answers.
    runner.execute("INSERT INTO eval_work_quality_judge_verdicts (snapshot_id, model, recorded, call_started, "
                   "estimated_cost_usd) VALUES (%s, 'anthropic:claude-opus-4-7', false, true, 0.0125)", (sid,))
    wq_verdict(runner, sid, wq_reply(), model="anthropic:claude-opus-4-7", cost_usd="0.00027")
    runner.execute("SELECT evalledger.work_quality_complete_v1(%s)", (sid,))
    cost = runner.execute("SELECT judges_cost_usd FROM eval_work_quality_snapshots WHERE snapshot_id = %s",
                          (sid,)).fetchone()[0]
    assert cost == Decimal("0.01304")  # two answers, and the estimate of the call lost at the kill
