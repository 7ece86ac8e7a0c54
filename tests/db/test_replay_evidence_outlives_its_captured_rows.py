"""Replay evidence outlives its captured rows (issue 40, the replay's retention). A replayed query
keeps every captured field it was measured against, and nothing references eval_candidates: the
retention purge drops a month of captured rows that a completed replay run asked, without failing,
and the run, its queries, its decision and the ledger's recompute are unchanged. The orphaning is
never silent: replay_capture_purged_v1 (the auditor's) names the run, how many of its captured rows
the purge took, the partition and when, and counts a captured row gone without a purge."""

from __future__ import annotations

from datetime import timedelta

import psycopg
import pytest

from tests.conftest import REVIEWER_ROLE, capture_partition_ago, capture_times_since
from tests.db.test_replay_drift_computed_by_the_database import CAPTURE, ledger_run
from tests.db.test_retention import purge_as_retention
from tests.unguarded import clocks_unguarded

REPLAYED = ("INSERT INTO replay_query (replay_run_id, capture_id, capture_created_at, outcome, retrieved_slugs, "
            "retrieved_chunk_ids, source_ids, vector_enabled, expansion_applied, latency_ms) "
            "VALUES (%s, %s, %s, 'answered', '{a}', '{1}', '{wiki}', true, false, 90)")


@pytest.fixture
def replayed(admin):
    """A completed replay run (by the superuser, who reads every tier) of four captured rows: three
    of a month past the purge horizon, one of now; (run id, old partition, the recent row)."""
    old = capture_partition_ago(admin, "8 years")
    since = capture_times_since(admin, 2)
    rows = [admin.execute(CAPTURE, (["a", "b"], [1, 2], ["wiki"], True, True, old + timedelta(days=1, minutes=n))
                          ).fetchone() for n in range(3)]
    rows.append(admin.execute(CAPTURE, (["a"], [1], ["wiki"], True, True, since + timedelta(minutes=1))).fetchone())
    until = admin.execute("SELECT evalledger.capture_export_bound_v2()").fetchone()[0]
    run_id, planned = ledger_run(admin, old, until)
    assert planned == 4
    for capture_id, created_at in rows:
        admin.execute(REPLAYED, (run_id, capture_id, created_at))
    assert admin.execute("SELECT replay_complete_v1(%s) ->> 'decision'", (run_id,)).fetchone()[0] is not None
    return run_id, f"eval_candidates_p{old:%Y%m}", rows[3]


def evidence(admin, run_id):
    return (admin.execute("SELECT to_jsonb(r) FROM replay_run r WHERE replay_run_id = %s", (run_id,)).fetchone(),
            admin.execute("SELECT to_jsonb(q) FROM replay_query q WHERE replay_run_id = %s ORDER BY replay_query_id",
                          (run_id,)).fetchall(),
            admin.execute("SELECT count(*) FROM ledger_journal WHERE table_name IN ('replay_run', 'replay_query')"
                          ).fetchone())


def test_the_purge_takes_captured_rows_a_replay_asked_and_the_replay_stands(admin, connect_as, replayed):
    run_id, partition, _ = replayed
    before = evidence(admin, run_id)
    assert connect_as("evalledger_auditor").execute("SELECT count(*) FROM replay_capture_purged_v1").fetchone()[0] == 0
    with admin.transaction():
        purged = purge_as_retention(admin)
    assert ("eval_candidates", 3, None, partition) in purged
    assert admin.execute("SELECT to_regclass(%s)", (f"evalledger.{partition}",)).fetchone()[0] is None
    # Every replayed query, the run's decision and their journal entries: as they were.
    assert evidence(admin, run_id) == before
    assert admin.execute("SELECT count(*) FROM evalledger.ledger_recompute_v3()").fetchone()[0] == 0
    # Named, not orphaned silently: three of the run's four captured rows went with that purge.
    seen = connect_as("evalledger_auditor").execute(
        "SELECT replay_run_id, queries, captured_rows_purged, captured_rows_missing, partitions_purged, "
        "last_purged_at = (SELECT max(purged_at) FROM retention_purge_log) FROM replay_capture_purged_v1").fetchall()
    assert seen == [(run_id, 4, 3, 0, [partition], True)]
    # The lost-most panel still ranks the run's queries, each with its measures.
    assert connect_as("evalledger_auditor").execute(
        "SELECT count(*) FROM replay_lost_most_v1 WHERE replay_run_id = %s", (run_id,)).fetchone()[0] == 4


def test_a_captured_row_gone_without_a_purge_is_counted_as_missing(admin, connect_as, replayed):
    run_id, _, (capture_id, created_at) = replayed
    partition = admin.execute("SELECT tableoid::regclass::text FROM evalledger.eval_candidates WHERE id = %s",
                              (capture_id,)).fetchone()[0].removeprefix("evalledger.")
    # Past every guard, as only a superuser could: never the ledger's own way.
    with admin.transaction(), clocks_unguarded(admin, ["eval_candidates", partition]):
        admin.execute("DELETE FROM evalledger.eval_candidates WHERE id = %s AND created_at = %s", (capture_id, created_at))
    seen = connect_as("evalledger_auditor").execute(
        "SELECT replay_run_id, queries, captured_rows_purged, captured_rows_missing, partitions_purged "
        "FROM replay_capture_purged_v1").fetchall()
    assert seen == [(run_id, 4, 0, 1, [])]


@pytest.mark.parametrize("role", ["evalledger_revops", "evalledger_runner", REVIEWER_ROLE, "evalledger_agent"])
def test_only_the_auditor_reads_it(connect_as, reviewers, role):
    conn = connect_as(role)
    for statement in ("SELECT * FROM evalledger.replay_capture_purged_v1",
                      "SELECT * FROM evalledger.replay_capture_purged_rows_v1(NULL)"):
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute(statement)
