"""One runner per brain-eval run (issue 39, item 2): two sessions that find no open run start one
run between them, whatever the session's default isolation level, and a run's claim keeps a
second runner out, saying since when the first holds it."""

from __future__ import annotations

import re
import threading
import time

import psycopg
import pytest

from evalledger.core import claims, db
from evalledger.suites.brain_eval import brains, contracts, demo, harness
from evalledger.suites.brain_eval import store as brain_eval
from tests.conftest import REVIEWER_ROLE


def runner_session(dsn: str, isolation: str) -> psycopg.Connection:
    """A runner's connection (db.connect: SET ROLE) on a server whose default isolation is `isolation`."""
    conn = db.connect(dsn, role="runner")
    conn.execute(f"SET default_transaction_isolation = '{isolation}'")
    conn.commit()
    return conn


def planned(conn, questions=("EVAL-Q01", "EVAL-Q02")):
    brain = brains.resolve(conn, demo.DEMO_BRAIN["target_id"], demo.DEMO_BRAIN["version_label"])
    made = harness.plan(conn, brain, "v28-2026Q2", list(questions), REVIEWER_ROLE, "on_demand",
                        contracts.from_folder(demo.views_path()), "recorded")
    conn.commit()
    return made


def wait_until_blocked(admin, pid: int) -> None:
    deadline = time.monotonic() + 10
    while admin.execute("SELECT wait_event_type FROM pg_stat_activity WHERE pid = %s", (pid,)).fetchone() != ("Lock",):
        assert time.monotonic() < deadline, "the second session never waited for the first"
        time.sleep(0.02)


@pytest.mark.parametrize("isolation", ["read committed", "repeatable read"])
def test_two_sessions_that_find_no_open_run_start_one_between_them(dsn, admin, reviewers, isolation):
    demo.register_demo(dsn)
    first, second = runner_session(dsn, "read committed"), runner_session(dsn, isolation)
    plan = planned(first)
    got = []

    def start_second():
        try:
            got.append(harness.start_or_resume(second, plan))
        except Exception as exc:  # the assertion below shows it
            got.append(exc)

    # The first has recorded its run and not yet committed (as a process is between the two): the
    # second finds no open run, and its insert waits for the first's transaction.
    with first.transaction():
        run_id, resumed, _ = harness.start_or_resume(first, plan)
        assert not resumed
        waiter = threading.Thread(target=start_second)
        waiter.start()
        wait_until_blocked(admin, second.info.backend_pid)
    waiter.join(30)
    # Refused by the one-open-run index once the first committed, it looked again and resumed it.
    assert got == [(run_id, True, set())]
    assert admin.execute("SELECT count(*) FROM brain_eval_log").fetchone() == (1,)
    assert admin.execute("SELECT count(*) FROM brain_eval_harness_run").fetchone() == (1,)
    # Its own transactions ran under READ COMMITTED, which admission needs, whatever the default.
    assert second.execute("SHOW default_transaction_isolation").fetchone() == (isolation,)
    first.close()
    second.close()


def test_a_second_start_of_another_command_names_the_open_run(dsn, admin, reviewers):
    """Racing a run of the same brain, prompt and catalog that is not this command's (other
    questions): the second look finds no run of its own, and the database's refusal names the open one."""
    demo.register_demo(dsn)
    first, second = runner_session(dsn, "read committed"), runner_session(dsn, "read committed")
    mine, theirs = planned(first), planned(second, questions=("EVAL-Q03",))
    got = []

    def start_second():
        try:
            got.append(harness.start_or_resume(second, theirs))
        except psycopg.Error as exc:
            got.append(exc)

    with first.transaction():
        run_id, _, _ = harness.start_or_resume(first, mine)
        waiter = threading.Thread(target=start_second)
        waiter.start()
        wait_until_blocked(admin, second.info.backend_pid)
    waiter.join(30)
    [refused] = got
    assert isinstance(refused, psycopg.errors.UniqueViolation)
    assert re.match(rf"evalledger: run {run_id} of AGT-902, this prompt and catalog v28-2026Q2, is open ",
                    refused.diag.message_primary)
    assert admin.execute("SELECT count(*) FROM brain_eval_log").fetchone() == (1,)


@pytest.mark.server_timeouts
def test_a_claimed_brain_eval_run_stops_a_second_runner_saying_since_when(dsn, admin):
    run_id = "0b6e1c9e-6d63-4d5e-9a55-1f0d2c3b4a59"
    query = brain_eval.QUERIES["claim_run"]
    with claims.claimed(query, run_id, suite="brain-eval", url=dsn):
        with pytest.raises(claims.Claimed) as stopped:
            with claims.claimed(query, run_id, suite="brain-eval", url=dsn):
                pytest.fail("a second runner ran a claimed run")
        said = re.fullmatch(rf"run {run_id} is being run by another process since (\S+ \S+) UTC; "
                            "run the same command again when it ends", str(stopped.value))
        assert said, str(stopped.value)
        # The database's clock when the first took its claim, in UTC whatever the session's zone.
        assert admin.execute("SELECT now() - (%s::timestamp AT TIME ZONE 'UTC') BETWEEN '0' AND '1 minute'",
                             (said.group(1),)).fetchone() == (True,)
        assert stopped.value.exit_code == 3
        # Nothing a claim holds is committed, and another run's claim is free.
        assert admin.execute("SELECT count(*) FROM run_claim").fetchone() == (0,)
        with claims.claimed(query, "5f1d7a52-9a2b-4f0e-8c1a-2d3e4f5a6b7c", suite="brain-eval", url=dsn):
            pass
    # Once it ends, the run is free again, and its connection no longer says it holds it.
    with claims.claimed(query, run_id, suite="brain-eval", url=dsn):
        pass
    assert admin.execute("SELECT count(*) FROM pg_stat_activity WHERE application_name LIKE %s",
                         (f"brain-eval run {run_id} %",)).fetchone() == (0,)
