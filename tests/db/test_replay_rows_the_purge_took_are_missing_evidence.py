"""A replay run still open when the retention purge takes captured rows it planned and has not
replayed (issue 40): the purge records each such row for the run (outcome and status
capture_purged, its captured fields copied) before it drops the month, so the run completes, and
the database decides it without passing on what it never asked: inconclusive, the rows counted and
named in the rationale and the summary (fail when what was replayed fails anyway). Only the purge
writes that outcome. Two sessions racing, the purge and a replay writer: the writer that waited for
the purge's lock finds its row recorded by the purge and is skipped (READ COMMITTED) or refused
(REPEATABLE READ), the purge never waits for a writer holding the captured rows (it leaves the
month to the next purge), and either way every planned row is recorded once.

A run over rows past the purge horizon is planned only by a login that reads every tier (the
installer, here the superuser): the runner plans the hot tier (24 months), so its own run never
held the rows the purge takes, and the purge records none for it."""

from __future__ import annotations

from datetime import timedelta

import psycopg
import pytest
from psycopg import errors

from tests.conftest import capture_partition_ago, capture_times_since
from tests.db.insider_logins import in_thread, logins, wait_until_waiting  # noqa: F401 (fixture)
from tests.db.test_replay_drift_computed_by_the_database import CAPTURE, ledger_run
from tests.db.test_retention import purge_as_retention
from tests.ledger_forge import kinds, verified

REPLAYED = ("INSERT INTO evalledger.replay_query (replay_run_id, capture_id, capture_created_at, outcome, "
            "retrieved_slugs, retrieved_chunk_ids, source_ids, vector_enabled, expansion_applied, latency_ms) "
            "VALUES (%s, %s, %s, 'answered', %s, '{1}', '{wiki}', true, false, 90) RETURNING status")


@pytest.fixture
def planned(admin):
    """An open replay run (the superuser's, which plans every tier) of seven captured rows: three
    of a month past the purge horizon, four of now; the four recent ones and the oldest old one
    replayed. (run id, partition, old rows, recent rows)."""
    old = capture_partition_ago(admin, "8 years")
    since = capture_times_since(admin, 2)
    olds = [admin.execute(CAPTURE, (["a"], [1], ["wiki"], True, True, old + timedelta(days=1, minutes=n))).fetchone()
            for n in range(3)]
    recents = [admin.execute(CAPTURE, (["a"], [1], ["wiki"], True, True, since + timedelta(minutes=n))).fetchone()
               for n in range(4)]
    until = admin.execute("SELECT evalledger.capture_export_bound_v2()").fetchone()[0]
    run_id, count = ledger_run(admin, old, until)
    assert count == 7
    for capture_id, created_at in recents + olds[:1]:
        assert admin.execute(REPLAYED, (run_id, capture_id, created_at, ["a"])).fetchone() == ("replayed",)
    return run_id, f"eval_candidates_p{old:%Y%m}", olds, recents


def statuses(admin, run_id) -> dict[int, str]:
    return dict(admin.execute("SELECT capture_id, status FROM evalledger.replay_query WHERE replay_run_id = %s",
                              (run_id,)).fetchall())


def complete_as_runner(connect_as, run_id) -> dict:
    return connect_as("evalledger_runner").execute("SELECT evalledger.replay_complete_v1(%s)", (run_id,)).fetchone()[0]


def test_an_open_run_whose_rows_the_purge_took_completes_inconclusive_naming_them(admin, connect_as, dsn, planned):
    run_id, partition, olds, _ = planned
    # Not whole before the purge: two planned rows not asked.
    with pytest.raises(errors.CheckViolation, match="not whole: 5 of 7"):
        admin.execute("SELECT evalledger.replay_complete_v1(%s)", (run_id,))
    with admin.transaction():
        purged = purge_as_retention(admin)
    assert ("eval_candidates", 3, None, partition) in purged
    gone = sorted(c for c, _ in olds[1:])
    assert sorted(c for c, s in statuses(admin, run_id).items() if s == "capture_purged") == gone
    # Recorded with the captured fields they would have been measured against, and why.
    kept = admin.execute("SELECT captured_slugs, captured_source_ids, captured_latency_ms, outcome, error, recall "
                         "FROM evalledger.replay_query WHERE replay_run_id = %s AND capture_id = %s",
                         (run_id, gone[0])).fetchone()
    assert kept == (["a"], ["wiki"], 100.0, "capture_purged",
                    f"captured row purged by retention ({partition}) before the run replayed it", None)
    # The runner completes it; the database decides: not a pass, the missing rows named.
    decided = complete_as_runner(connect_as, run_id)
    assert decided["decision"] == "inconclusive"
    assert decided["rationale"].startswith(
        f"Inconclusive: 2 captured rows the run planned were purged by retention before they were replayed "
        f"(capture {gone[0]}, capture {gone[1]}), and missing evidence never counts as met; "
        "the 5 replayed queries alone would pass")
    assert (decided["capture_purged"], decided["asked"], decided["replayed"]) == (2, 5, 5)
    assert admin.execute("SELECT count(*) FROM evalledger.ledger_recompute_v3()").fetchone()[0] == 0
    # verify finds nothing of the replay's: the purge's rows are journalled inserts like any other
    # (what it names is the captured rows this test backdated, first journalled today).
    found = {(kind, table) for kind, table, _, _ in kinds(verified(dsn, recompute=True))}
    assert found <= {("deleted_too_young", "eval_candidates"), ("deleted_too_young", "eval_candidate_keys")}


def test_a_failing_replay_still_fails_and_names_the_purged_rows(admin, connect_as, planned):
    run_id, _, olds, recents = planned
    # Two more replayed rows of another run, recall 0: that run fails on what it asked.
    until = admin.execute("SELECT until_at FROM evalledger.replay_run WHERE replay_run_id = %s", (run_id,)).fetchone()
    other, _ = ledger_run(admin, olds[0][1], until[0], brain_version="v2")
    for capture_id, created_at in recents + olds[:1]:
        admin.execute(REPLAYED, (other, capture_id, created_at, ["z"]))
    with admin.transaction():
        purge_as_retention(admin)
    decided = complete_as_runner(connect_as, other)
    assert decided["decision"] == "fail"
    assert decided["rationale"].startswith("Fail: mean recall 0.000 below 0.9")
    assert "2 captured rows the run planned were purged by retention before they were replayed" in decided["rationale"]


def test_only_the_purge_records_a_captured_row_as_purged(admin, connect_as, planned):
    run_id, _, olds, _ = planned
    capture_id, created_at = olds[1]
    statement = ("INSERT INTO evalledger.replay_query (replay_run_id, capture_id, capture_created_at, outcome, error) "
                 "VALUES (%s, %s, %s, 'capture_purged', 'gone')")
    for conn in (admin, connect_as("evalledger_runner")):
        with pytest.raises(errors.InsufficientPrivilege, match="only the retention purge records a captured row"):
            conn.execute(statement, (run_id, capture_id, created_at))
    assert "capture_purged" not in statuses(admin, run_id).values()


def test_a_runners_run_never_planned_the_rows_the_purge_takes(admin, connect_as, planned):
    _, _, olds, recents = planned
    runner = connect_as("evalledger_runner")
    until = admin.execute("SELECT evalledger.capture_export_bound_v2()").fetchone()[0]
    run_id, count = ledger_run(runner, olds[0][1], until, brain_version="runner's")
    assert count == 4  # the hot tier only
    with admin.transaction():
        purge_as_retention(admin)
    assert statuses(admin, run_id) == {}
    for capture_id, created_at in recents:
        runner.execute(REPLAYED, (run_id, capture_id, created_at, ["a"]))
    assert complete_as_runner(connect_as, run_id)["decision"] == "pass"


@pytest.mark.parametrize("isolation", ["read committed", "repeatable read"])
def test_a_writer_waiting_for_the_purge_finds_its_row_recorded(admin, connect_as, dsn, logins, planned, isolation):  # noqa: F811
    """The purge holds the captured rows (its DROP's lock) and has not committed; a writer records
    an answer for one of the month's rows and waits. Once the purge commits, the writer at READ
    COMMITTED finds the row recorded by the purge and its insert is skipped (no row returned); at
    REPEATABLE READ (a snapshot from before the purge) it is refused, writing nothing. Either way the
    row is recorded once, as purged, and the run completes inconclusive."""
    run_id, partition, olds, _ = planned
    capture_id, created_at = olds[1]
    purge = logins("retention", autocommit=False)
    assert ("eval_candidates", 3, None, partition) in purge.execute("SELECT * FROM evalledger.retention_purge_v2()"
                                                                    ).fetchall()
    writer = psycopg.connect(dsn, autocommit=False)
    try:
        writer.execute(f"SET TRANSACTION ISOLATION LEVEL {isolation}")
        writer.execute("SELECT 1")  # the transaction's snapshot, taken before the purge commits
        thread, outcome = in_thread(lambda: writer.execute(REPLAYED, (run_id, capture_id, created_at, ["a"])
                                                           ).fetchall())
        wait_until_waiting(admin, writer.info.user)
        purge.commit()
        thread.join(20)
        if isolation == "read committed":
            assert outcome == {"result": []}, outcome
            writer.commit()
        else:
            assert isinstance(outcome.get("error"), errors.ForeignKeyViolation), outcome
            assert "is not one of replay run" in str(outcome["error"])
            writer.rollback()
    finally:
        writer.close()
    assert statuses(admin, run_id)[capture_id] == "capture_purged"
    assert admin.execute("SELECT count(*) FROM evalledger.replay_query WHERE replay_run_id = %s",
                         (run_id,)).fetchone()[0] == 7
    assert complete_as_runner(connect_as, run_id)["decision"] == "inconclusive"


@pytest.mark.server_timeouts
def test_a_purge_never_waits_for_a_writer_holding_the_month(admin, connect_as, dsn, logins, planned):  # noqa: F811
    """A writer has recorded an answer for one of the month's rows and not committed: the purge does
    not wait for it (nor record that row as purged); it leaves the month to the next purge, which
    records only the row still not replayed."""
    run_id, partition, olds, _ = planned
    writer = psycopg.connect(dsn, autocommit=False)
    try:
        assert writer.execute(REPLAYED, (run_id, *olds[1], ["a"])).fetchall() == [("replayed",)]
        purge = logins("retention")
        first = purge.execute("SELECT * FROM evalledger.retention_purge_v2()").fetchall()
        assert [p for p in first if p[0] == "eval_candidates"] == []
        assert "capture_purged" not in statuses(admin, run_id).values()
        writer.commit()
    finally:
        writer.close()
    assert ("eval_candidates", 3, None, partition) in purge.execute("SELECT * FROM evalledger.retention_purge_v2()"
                                                                    ).fetchall()
    assert statuses(admin, run_id)[olds[1][0]] == "replayed"
    assert statuses(admin, run_id)[olds[2][0]] == "capture_purged"
    decided = complete_as_runner(connect_as, run_id)
    assert decided["decision"] == "inconclusive" and f"(capture {olds[2][0]})" in decided["rationale"]
