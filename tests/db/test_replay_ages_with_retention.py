"""Replay ages with retention (issue 40): replay_run and replay_query are aging tables. Their tier
clock is the run's recording time (replay_run.created_at, the database's; each query carries it as
run_created_at), so a run and its queries age together from when the replay was recorded, whatever
the age of the captured rows it replayed: hot 24 months, cold to 7 years, then purged by the
retention role, open or complete, unless a hold on the brain version's label or a range holding
that time keeps them. The plan counts both tables; each deletion is logged."""

from __future__ import annotations

import re

import psycopg
import pytest
from psycopg import errors

from tests.builders import BRAIN_PROMPTS, register_prompt
from tests.db.test_replay_drift_computed_by_the_database import file_query, file_run
from tests.db.test_retention import AUDITOR, HORIZON, OWNER, RUNNER, SECOND, purge_as_retention
from tests.unguarded import clocks_unguarded


@pytest.fixture(autouse=True)
def registered_prompts(admin):
    for brain, prompt in BRAIN_PROMPTS.items():
        register_prompt(admin, brain, prompt)


def replay(runner, brain: str = "v1", *, complete: bool = True) -> int:
    """A replay run of a file (three queries replayed unchanged), recorded now; completed unless not."""
    run_id = file_run(runner, planned=3, brain=brain)
    for capture_id in (1, 2, 3):
        file_query(runner, run_id, capture_id)
    if complete:
        assert runner.execute("SELECT replay_complete_v1(%s) ->> 'decision'", (run_id,)).fetchone()[0] == "pass"
    return run_id


def set_replay_clock(admin, run_id: int, clock: str) -> None:
    """Within admin's transaction: run_id recorded (and started, and completed if it was) at the SQL
    expression clock, its queries with it."""
    with clocks_unguarded(admin, ["replay_run", "replay_query"]):
        admin.execute(f"UPDATE evalledger.replay_run SET created_at = {clock}, started_at = {clock}, "
                      f"completed_at = CASE WHEN completed_at IS NOT NULL THEN {clock} END WHERE replay_run_id = %s",
                      (run_id,))
        admin.execute(f"UPDATE evalledger.replay_query SET created_at = {clock}, run_created_at = {clock} "
                      "WHERE replay_run_id = %s", (run_id,))


def age(admin, run_id: int, clock: str) -> None:
    with admin.transaction():
        set_replay_clock(admin, run_id, clock)


def kept(admin, run_id: int) -> tuple[int, int]:
    return (admin.execute("SELECT count(*) FROM evalledger.replay_run WHERE replay_run_id = %s", (run_id,)).fetchone()[0],
            admin.execute("SELECT count(*) FROM evalledger.replay_query WHERE replay_run_id = %s",
                          (run_id,)).fetchone()[0])


def test_a_replay_run_goes_with_its_queries_past_the_horizon_to_the_second(admin, connect_as):
    runner = connect_as(RUNNER)
    inside, edge, past = replay(runner, "a"), replay(runner, "b"), replay(runner, "c", complete=False)
    with admin.transaction():
        set_replay_clock(admin, edge, HORIZON)
        set_replay_clock(admin, past, f"{HORIZON} - {SECOND}")  # open: an open run ages too
        # A second inside the horizon the purge's statement computes (see test_retention).
        set_replay_clock(admin, inside, f"clock_timestamp() - interval '7 years' + {SECOND}")
        purged = purge_as_retention(admin)
    assert sorted(p for p in purged if p[0].startswith("replay")) == [("replay_query", 6, None, None),
                                                                       ("replay_run", 2, None, None)]
    assert (kept(admin, inside), kept(admin, edge), kept(admin, past)) == ((1, 3), (0, 0), (0, 0))
    logged = admin.execute("SELECT table_name, row_count FROM evalledger.retention_purge_log "
                           "WHERE table_name LIKE 'replay%' ORDER BY purge_log_id").fetchall()
    assert logged == [("replay_query", 6), ("replay_run", 2)]


def test_the_tier_clock_is_the_replays_not_the_captured_rows(admin, connect_as):
    """A replay recorded now of rows captured long ago (a file's capture times) is hot, and stays."""
    runner = connect_as(RUNNER)
    run_id = file_run(runner, planned=1, brain="today")
    file_query(runner, run_id, 1, capture_created_at="2019-01-01T00:00:00Z")
    with admin.transaction():
        purge_as_retention(admin)
    assert kept(admin, run_id) == (1, 1)
    assert runner.execute("SELECT count(*) FROM evalledger.replay_query WHERE replay_run_id = %s",
                          (run_id,)).fetchone()[0] == 1


def test_the_plan_counts_replay_rows_by_their_runs_clock(admin, connect_as):
    runner = connect_as(RUNNER)
    hot, cold, due = replay(runner, "hot"), replay(runner, "cold"), replay(runner, "due")
    age(admin, cold, "now() - interval '3 years'")
    age(admin, due, "now() - interval '8 years'")
    plan = {r[0]: r[1:5] for r in connect_as(AUDITOR).execute("SELECT * FROM evalledger.retention_plan_v2()")}
    assert plan["replay_run"] == (1, 1, 1, 0)
    assert plan["replay_query"] == (3, 3, 3, 0)
    # Cold is the auditor's alone: the runner reads only the hot run.
    assert [r[0] for r in runner.execute("SELECT replay_run_id FROM evalledger.replay_run")] == [hot]


HOLDS = {
    "brain": "INSERT INTO evalledger.legal_hold (target_id, reason) VALUES ('AGT-902', 'matter 2') RETURNING hold_id",
    "range": "INSERT INTO evalledger.legal_hold (held_from, held_to, reason) VALUES "
             "(now() - interval '9 years', now() - interval '8 years' + interval '1 day', 'matter 3') RETURNING hold_id",
}


@pytest.mark.parametrize("scope", list(HOLDS))
def test_a_hold_keeps_a_replay_run_and_its_queries_until_released(admin, connect_as, scope):
    runner = connect_as(RUNNER)
    held, other = replay(runner, "AGT-902"), replay(runner, "AGT-901")
    age(admin, held, "now() - interval '8 years'")
    age(admin, other, "now() - interval '8 years' - interval '2 years'")  # neither the brain nor the range
    owner = connect_as(OWNER)
    hold_id = owner.execute(HOLDS[scope]).fetchone()[0]
    plan = {r[0]: r[1:] for r in connect_as(AUDITOR).execute("SELECT * FROM evalledger.retention_plan_v2()")}
    assert plan["replay_run"][:4] == (0, 0, 1, 1)
    assert re.match(rf"hold {hold_id} \({scope} .*\): 1$", plan["replay_run"][4])
    assert plan["replay_query"][:4] == (0, 0, 3, 3)

    with admin.transaction():
        purged = purge_as_retention(admin)
    assert sorted(p for p in purged if p[0].startswith("replay")) == [("replay_query", 3, None, None),
                                                                       ("replay_run", 1, None, None)]
    assert (kept(admin, held), kept(admin, other)) == ((1, 3), (0, 0))

    owner.execute("INSERT INTO evalledger.legal_hold_release (hold_id, reason) VALUES (%s, 'settled')", (hold_id,))
    with admin.transaction():
        purged = purge_as_retention(admin)
    assert ("replay_run", 1, None, None) in purged and ("replay_query", 3, None, None) in purged
    assert kept(admin, held) == (0, 0)


@pytest.mark.parametrize("table", ["replay_run", "replay_query"])
def test_only_the_purge_deletes_and_only_what_is_due(admin, connect_as, table):
    runner = connect_as(RUNNER)
    young, old = replay(runner, "young"), replay(runner, "old")
    age(admin, old, "now() - interval '8 years'")
    delete = f"DELETE FROM evalledger.{table} WHERE replay_run_id = %s"
    for role in (OWNER, RUNNER, AUDITOR):
        with pytest.raises(errors.InsufficientPrivilege):
            connect_as(role).execute(delete, (old,))
    # Inside the purge (its marker), a young row is still refused: the guard asks retention_due_v2.
    with admin.transaction():
        admin.execute("INSERT INTO evalledger.retention_purge_marker VALUES (txid_current())")
        with pytest.raises(errors.InsufficientPrivilege, match="append-only: DELETE refused"):
            admin.execute(delete, (young,))
        raise psycopg.Rollback()
    with admin.transaction():
        purge_as_retention(admin)
    assert kept(admin, young) == (1, 3) and kept(admin, old) == (0, 0)
