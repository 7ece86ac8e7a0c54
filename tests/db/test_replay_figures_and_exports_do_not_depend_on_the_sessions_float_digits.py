"""A replay run's stored figures, the recompute and the runner's exports do not follow the session's
extra_float_digits (migration 0160). replay_decision_v1 turns two float8 figures (the replayed and the
captured p95 latencies) into jsonb numbers, whose digits follow that setting, which any role may SET
(or pass in PGOPTIONS): a runner at -15 stored them cut to one digit, and an auditor at 0 had
`ledger verify --recompute` name every honest run. The decision and ledger_recompute_v3 now run with
extra_float_digits = 1 (the shortest digits that read back the same value); the runner's own sessions
(db.connect) set it too, so an NDJSON export writes a latency as the row holds it whatever PGOPTIONS
says. The upgrade under such a session is test_upgrade's (its `upgraded` fixture)."""

from __future__ import annotations

import pytest
from psycopg.conninfo import make_conninfo

from evalledger.core import db
from tests.builders import BRAIN_PROMPTS, register_prompt
from tests.db.test_replay_drift_computed_by_the_database import file_query
from tests.db.test_replay_run_left_open_past_the_hot_tier_is_closed import start
from tests.db.test_retention import AUDITOR, RUNNER
from tests.ledger_forge import kinds, verified

pytestmark = pytest.mark.db

# What a session may set: the shortest exact digits (1, PostgreSQL's default), DBL_DIG's 15 (0), one
# significant digit (-15).
SETTINGS = ("1", "0", "-15")
LATENCIES = ((100.0, 123.456789012345), (90.0, 101.1), (80.0, 77.7))


@pytest.fixture(autouse=True)
def registered_prompts(admin):
    for brain, prompt in BRAIN_PROMPTS.items():
        register_prompt(admin, brain, prompt)


def replayed(conn) -> int:
    """A file replay of three rows whose replayed p95 latency (percentile_cont) needs 17 digits."""
    run_id = start(conn, planned=len(LATENCIES))
    for capture_id, latency in enumerate(LATENCIES, start=1):
        file_query(conn, run_id, capture_id, latency=latency)
    conn.execute("SELECT evalledger.replay_complete_v1(%s)", (run_id,))
    return run_id


@pytest.mark.parametrize("setting", SETTINGS)
def test_a_replay_completed_under_any_setting_stores_the_shortest_exact_figures(admin, connect_as, setting):
    runner = connect_as(RUNNER)
    runner.execute(f"SET extra_float_digits = {setting}")
    run_id = replayed(runner)
    stored, computed = admin.execute(
        "SELECT summary::text, evalledger.replay_decision_v1(r)::text FROM evalledger.replay_run r "
        "WHERE replay_run_id = %s", (run_id,)).fetchone()
    assert stored == computed
    p95 = admin.execute("SELECT (summary ->> 'p95_latency_ms') FROM evalledger.replay_run WHERE replay_run_id = %s",
                        (run_id,)).fetchone()[0]
    assert p95 == "121.22111011111049"  # percentile_cont's float8, shortest exact: not 121.22111011111 nor 1e+02


@pytest.mark.parametrize("setting", SETTINGS)
def test_a_recompute_under_any_setting_names_no_honest_replay(dsn, connect_as, setting):
    replayed(connect_as(RUNNER))
    auditor = connect_as(AUDITOR)
    auditor.execute(f"SET extra_float_digits = {setting}")
    assert auditor.execute("SELECT * FROM evalledger.ledger_recompute_v3()").fetchall() == []
    assert kinds(verified(make_conninfo(dsn, options=f"-c extra_float_digits={setting}"), recompute=True)) == []


def test_the_runners_session_exports_a_latency_as_the_row_holds_it_whatever_pgoptions_says(dsn, admin):
    admin.execute("INSERT INTO evalledger.eval_candidates (tool_name, query, vector_enabled, expansion_applied, "
                  "latency_ms, remote, capture_key) VALUES ('query', 'q', true, false, 123.45678901234567, false, "
                  "'00000000-0000-0000-0000-000000000001')")
    from evalledger.suites.capture.writer import QUERIES

    keys = {"keys": ["00000000-0000-0000-0000-000000000001"]}
    with db.connect(make_conninfo(dsn, options="-c extra_float_digits=-15"), role="runner") as conn:
        line = conn.execute(QUERIES["ndjson_by_capture_key"], keys).fetchone()[0]
        assert conn.execute("SHOW default_transaction_isolation").fetchone()[0] == "read committed"
    assert '"latency_ms":123.45678901234567,' in line
    # The same query in a bare session under that PGOPTIONS would cut it (what db.connect guards).
    admin.execute("SET extra_float_digits = -15")
    assert '"latency_ms":1e+02,' in admin.execute(QUERIES["ndjson_by_capture_key"], keys).fetchone()[0]
