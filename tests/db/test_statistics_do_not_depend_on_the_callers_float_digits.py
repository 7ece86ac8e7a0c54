"""The statistics objects do not depend on the caller's extra_float_digits (issue 36; migration 0156).
uncertainty_v1, paired_object_v1 and takes_quality_uncertainty_v1 turn float8 into jsonb numbers, whose
digits follow that session setting, which any role may SET (or pass in PGOPTIONS): at 0 or below a
completion would store its estimates, standard errors and bounds cut short (at -15, to one digit), and
a recompute under 0 would name every honest stored row. Each runs with extra_float_digits = 1 (the
shortest digits that read back the same value), whatever the caller's. docs/guards.md, "Verdicts
with their uncertainty"."""

from __future__ import annotations

import re

import pytest
from psycopg.conninfo import make_conninfo

from tests.builders import record_run
from tests.db.insider_logins import logins  # noqa: F401 (fixture)
from tests.db.test_statistics_do_not_depend_on_the_readers_plan import spread
from tests.db.test_takes_and_work_quality_intervals_are_stored_at_completion import takes_quality_run
from tests.ledger_forge import kinds, verified

pytestmark = pytest.mark.db

# What a session may set: the shortest exact digits (1, PostgreSQL's default), more (3), DBL_DIG's 15 (0)
# and one significant digit (-15).
SETTINGS = ("1", "3", "0", "-15")


def digits(text: str) -> int:
    """The most significant digits any number in a JSON text carries."""
    return max(len(m.lstrip("0")) for m in (n.replace(".", "").split("e")[0].lstrip("-")
                                            for n in re.findall(r"-?\d+\.\d+(?:e-?\d+)?", text)))


def test_a_runner_completing_under_any_setting_stores_the_same_exact_digits(admin, connect_as, logins, reviewer_id):
    runner = connect_as("evalledger_runner")
    runner.execute("SET extra_float_digits = -15")
    brain_run = record_run(runner, reviewer_id, bend=spread).eval_run_id
    tq_runner = logins("runner")
    tq_runner.execute("SET extra_float_digits = -15")
    tq_run = takes_quality_run(tq_runner, rerun=0)
    brain = admin.execute("SELECT uncertainty::text, evalledger.brain_eval_uncertainty_v1(eval_run_id)::text "
                          "FROM evalledger.brain_eval_run_uncertainty WHERE eval_run_id = %s",
                          (brain_run,)).fetchone()
    takes = admin.execute("SELECT uncertainty::text, evalledger.takes_quality_uncertainty_v1(run_id)::text "
                          "FROM evalledger.eval_takes_quality_run_uncertainty WHERE run_id = %s",
                          (tq_run,)).fetchone()
    # What the completion stored in the runner's -15 session is what a default session computes,
    # digit for digit, and it carries the digits -15 would have cut (the setting would have mattered).
    for stored, asked in (brain, takes):
        assert stored == asked
        assert digits(stored) >= 15, stored


def test_every_caller_setting_gives_the_same_text(dsn, connect_as, reviewer_id, logins):
    runner = connect_as("evalledger_runner")
    brain_run = record_run(runner, reviewer_id, bend=spread).eval_run_id
    tq_run = takes_quality_run(logins("runner"), rerun=0)
    query = """
        SELECT evalledger.brain_eval_uncertainty_v1(%(b)s)::text, evalledger.takes_quality_uncertainty_v1(%(t)s)::text,
               evalledger.uncertainty_v1(0.1::float8 + 0.2::float8, 1 / 3.0::float8, 30, 5, 'clustered',
                                         NULL, NULL, 0, 1)::text,
               evalledger.paired_object_v1('d', ARRAY['a', 'b', 'c'], ARRAY[0.1, 0.7, 0.3]::float8[],
                                           ARRAY['a', 'b', 'c'], ARRAY[0.2, 0.5, 0.65]::float8[])::text"""
    seen = {}
    for setting in SETTINGS:
        auditor = connect_as("evalledger_auditor")
        auditor.execute(f"SET extra_float_digits = {setting}")
        seen[setting] = auditor.execute(query, {"b": brain_run, "t": tq_run}).fetchone()
    assert len(set(seen.values())) == 1, seen
    assert "0.30000000000000004" in seen["1"][2]


def test_a_recompute_under_any_setting_names_no_honest_row(admin, dsn, connect_as, reviewer_id, logins):
    runner = connect_as("evalledger_runner")
    record_run(runner, reviewer_id, bend=spread)
    takes_quality_run(logins("runner"), rerun=0)
    for setting in SETTINGS:
        with admin.transaction():
            admin.execute(f"SET LOCAL extra_float_digits = {setting}")
            assert admin.execute("SELECT * FROM evalledger.ledger_recompute_v3()").fetchall() == [], setting
    # The auditor's `ledger verify --recompute` (the package's own functions) in a session set to 0.
    report = verified(make_conninfo(dsn, options="-c extra_float_digits=0"), recompute=True)
    assert [k for k in kinds(report) if k[0] == "recomputed"] == []
