"""Issue 37, item 2, through the CLI: `brain-eval cancel RUN --reason` records the cancellation and
prints the decision the database made (fail, "Abandoned: cancelled by ..."), and `brain-eval list`
shows cancelled and abandoned runs by state (an open run past its deadline before anything closed it)."""

from __future__ import annotations

import json
import re

import pytest

from tests.cli import run_cli
from tests.unguarded import clocks_unguarded


@pytest.fixture
def demo_env(dsn):
    env = {"DATABASE_URL": dsn}
    done = run_cli("demo", env=env)
    assert done.code == 0, done.err
    return env


def listed(env, *args) -> list[str]:
    return run_cli("brain-eval", "list", *args, "-q", env=env).out.split()


def test_cancel_records_a_reason_and_list_shows_cancelled_and_abandoned_runs(demo_env, admin):
    env = demo_env
    runs = json.loads(run_cli("brain-eval", "list", "--json", env=env).out)["rows"]
    assert [(r["state"], r["decision"]) for r in runs] == [("open", None), ("complete", "fail")]
    yours = runs[0]["eval_run_id"]

    # The demo's open run, past its deadline: read as abandoned and fail before anything closes it.
    with admin.transaction(), clocks_unguarded(admin, ["brain_eval_log"]):
        admin.execute("UPDATE evalledger.brain_eval_log SET created_at = created_at - interval '15 days' "
                      "WHERE eval_run_id = %s", (yours,))
    assert listed(env, "--state", "abandoned") == [yours] and listed(env, "--open") == []
    assert yours in listed(env, "--decision", "fail")
    with admin.transaction(), clocks_unguarded(admin, ["brain_eval_log"]):
        admin.execute("UPDATE evalledger.brain_eval_log SET created_at = created_at + interval '15 days' "
                      "WHERE eval_run_id = %s", (yours,))
    assert listed(env, "--open") == [yours]

    no_reason = run_cli("brain-eval", "cancel", yours, env=env)
    assert no_reason.code == 3 and "Missing option '--reason'" in no_reason.err
    blank = run_cli("brain-eval", "cancel", yours, "--reason", " ", env=env)
    assert (blank.code, blank.err) == (3, "evalledger: error: a cancellation needs a reason "
                                      "(constraint brain_eval_run_closure_reason_given) [SQLSTATE 23514]\n")

    cancelled = run_cli("brain-eval", "cancel", yours, "--reason", "started on the wrong catalog", env=env)
    assert cancelled.code == 1, cancelled.err
    assert re.search(r"Abandoned: cancelled by \w+: started on the wrong catalog", cancelled.out), cancelled.out
    assert listed(env, "--state", "cancelled") == [yours] and listed(env, "--open") == []
    again = run_cli("brain-eval", "cancel", yours, "--reason", "twice", env=env)
    assert (again.code, again.err) == (3, f"evalledger: error: run {yours} is not an open run this role can cancel\n")
