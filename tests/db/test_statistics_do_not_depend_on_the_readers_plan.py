"""Statistics do not depend on the reader's plan (issue 36): every float8 sum the statistics functions
make runs in a fixed order (the items' keys, byte order; the arrays' own order inside sql/core's
functions), never in the order a plan yields the rows. So the same stored rows give the same bits
whoever reads them (the runner at the completion, the auditor under row-level security, the
recompute), whatever the plan (a sequential scan in insert order, an index in key order, a hash or a
sort grouping) and whatever order the rows were inserted in, and `ledger verify --recompute` never
names an honest run because the auditor's plan summed in another order than the completion's
(the PostgreSQL 15 leg once saw 0.8311409617565029 against ...028). docs/statistics.md, "Order of
summation"; docs/guards.md, "Verdicts with their uncertainty"."""

from __future__ import annotations

import json

import psycopg
import pytest
from psycopg import sql

from tests.builders import OUT_OF_BAND, record_run
from tests.ledger_forge import kinds, verified

pytestmark = pytest.mark.db

TYPES = ("plan_diagnosis", "coverage_gap", "play_retrospective", "forecast_bias", "churn_diagnosis")

# The reader's plan, as a session may choose it: every scan, grouping and join the functions' rows can
# come through.
PLANS = {
    "sequential scan (insert order)": {"enable_indexscan": "off", "enable_bitmapscan": "off",
                                       "enable_indexonlyscan": "off"},
    "index scan (key order)": {"enable_seqscan": "off", "enable_bitmapscan": "off"},
    "bitmap scan (heap order)": {"enable_seqscan": "off", "enable_indexscan": "off", "enable_indexonlyscan": "off"},
    "sorted groups, merge joins": {"enable_hashagg": "off", "enable_hashjoin": "off", "enable_nestloop": "off"},
    "hashed groups, hash joins": {"enable_sort": "off", "enable_mergejoin": "off", "enable_nestloop": "off"},
    "nested loops": {"enable_hashjoin": "off", "enable_mergejoin": "off"},
}


def spread(number: int, row: dict) -> None:
    """Thirty questions whose float8 sums round differently in different orders: citation rates,
    claims and types that vary from question to question."""
    row["question_type"] = TYPES[(number * 3) % len(TYPES)]
    row["citation_rate"] = round(0.5 + ((number * 37 + 11) % 50) / 100, 2)
    row["total_claims"] = 3 + (number * 5) % 11
    row["hallucinations_detected"] = (number * 7) % 3 if number % 4 == 0 else 0
    row["narrative_coherence_rating"] = 1 + (number * 3) % 5
    row["diagnosis_accuracy_score"] = (0.0, 0.5, 1.0)[(number * 2) % 3]
    if number % 5 == 0:
        row["confidence_distribution"] = dict(OUT_OF_BAND)


def planned(dsn: str, role: str | None, settings: dict) -> psycopg.Connection:
    """A session acting as role (None: the superuser) whose planner is held to settings."""
    conn = psycopg.connect(dsn, autocommit=True)
    conn.execute("SET search_path = evalledger, public")
    if role:
        conn.execute(sql.SQL("SET ROLE {}").format(sql.Identifier(role)))
    for name, value in settings.items():
        conn.execute(sql.SQL("SET {} = {}").format(sql.Identifier(name), sql.Literal(value)))
    return conn


def stored(admin, run) -> dict:
    return admin.execute("SELECT uncertainty FROM evalledger.brain_eval_run_uncertainty WHERE eval_run_id = %s",
                         (run,)).fetchone()[0]


def asked(conn, run) -> str:
    """brain_eval_uncertainty_v1 of run as conn's reader asks it again, as its exact JSON text."""
    return conn.execute("SELECT evalledger.brain_eval_uncertainty_v1(%s)::text", (run,)).fetchone()[0]


@pytest.fixture
def twins(connect_as, reviewer_id):
    """Two completed runs of the same thirty question rows, one inserted first question first, the
    other last first (its sequential and bitmap scans yield the rows in the reverse of its index's order)."""
    runner = connect_as("evalledger_runner")
    forward = record_run(runner, reviewer_id, bend=spread).eval_run_id
    backward = record_run(runner, reviewer_id, bend=spread, reverse=True).eval_run_id
    return forward, backward


def test_the_same_rows_give_the_same_bits_whatever_their_insert_order_the_plan_or_the_reader(
        admin, dsn, twins, reviewer_id):
    forward, backward = twins
    # The completion stored the same object, to the last bit, for both physical orders.
    assert json.dumps(stored(admin, forward), sort_keys=True) == json.dumps(stored(admin, backward), sort_keys=True)
    want = admin.execute("SELECT uncertainty::text FROM evalledger.brain_eval_run_uncertainty WHERE eval_run_id = %s",
                         (forward,)).fetchone()[0]
    seen = {}
    for plan, settings in PLANS.items():
        for role in (None, "evalledger_runner", "evalledger_auditor", "evalledger_revops",
                     "evalledger_test_reviewer_a"):
            with planned(dsn, role, settings) as conn:
                for run in (forward, backward):
                    seen[(plan, role, run)] = asked(conn, run)
    assert {key: got for key, got in seen.items() if got != want} == {}


def test_the_core_statistics_give_the_same_bits_under_every_plan(dsn):
    # Values whose sums round differently in different orders, in clusters that interleave: the
    # grouping (hashed or sorted) and the join (hash, merge or nested loop) must not pick the order.
    values = [0.1 * (k % 7) + 0.01 * k + 1e-3 * (k % 3) for k in range(1, 61)]
    clusters = [f"c{(k * 7) % 11}" for k in range(1, 61)]
    items = [f"q{(k * 13) % 61:02d}" for k in range(1, 61)]
    others = [v * 1.1 + 0.013 * (k % 5) for k, v in enumerate(values)]
    query = """
        SELECT to_jsonb(evalledger.mean_stderr_v1(%(x)s))::text, to_jsonb(evalledger.clustered_stderr_v1(%(x)s, %(g)s))::text,
               to_jsonb(evalledger.ratio_stderr_v1(%(x)s, %(y)s, %(g)s))::text,
               to_jsonb(evalledger.ratio_stderr_v1(%(x)s, %(y)s, %(i)s))::text,
               to_jsonb(evalledger.paired_difference_v1(%(i)s, %(x)s, %(i2)s, %(y)s))::text"""
    params = {"x": values, "y": others, "g": clusters, "i": items, "i2": list(reversed(items))}
    seen = {}
    for plan, settings in PLANS.items():
        with planned(dsn, "evalledger_auditor", settings) as conn:
            seen[plan] = conn.execute(query, params).fetchone()
    assert len(set(seen.values())) == 1, seen


def test_verify_recompute_stays_clean_when_the_rows_were_inserted_in_another_order_than_the_readers_plan(
        admin, dsn, twins):
    forward, backward = twins
    for plan, settings in PLANS.items():
        with planned(dsn, None, settings) as conn:
            assert conn.execute("SELECT * FROM evalledger.ledger_recompute_v3()").fetchall() == [], plan
    # The auditor's `ledger verify --recompute`, with the package's own functions.
    report = verified(dsn, recompute=True)
    assert [k for k in kinds(report) if k[0] == "recomputed"] == []
