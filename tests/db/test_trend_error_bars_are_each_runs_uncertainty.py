"""The per-brain trend panel's error bars are each run's own intervals (issue 36): every point the
panel draws carries, as its bar, exactly the 95% interval brain_eval_uncertainty_v1 gives that run's
aggregate, read by the same reader; no point has a bar its run's uncertainty does not give."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from evalledger.bi import charts, panels
from evalledger.bi.filters import Filters
from tests.builders import OUT_OF_BAND, record_run
from tests.conftest import OTHER_REVIEWER_ROLE, REVIEWER_ROLE

pytestmark = pytest.mark.db

TYPES = ("plan_diagnosis", "coverage_gap", "play_retrospective", "forecast_bias", "churn_diagnosis")
NOW = datetime.now(timezone.utc)


def varied(k: int):
    """Run k's thirty questions: scores that vary within and between types, and from run to run."""
    def bend(number: int, row: dict) -> None:
        row["question_type"] = TYPES[(number + k) % len(TYPES)]
        row["citation_rate"] = round(0.70 + ((number * 7 + k) % 30) / 100, 2)
        row["total_claims"] = 2 + (number + k) % 5
        row["hallucinations_detected"] = 1 if (number + k) % 8 == 0 else 0
        row["narrative_coherence_rating"] = 2 + (number + k) % 4
        row["diagnosis_accuracy_score"] = (0.0, 0.5, 1.0)[(number + k) % 3]
        if (number + k) % 6 == 0:
            row["confidence_distribution"] = dict(OUT_OF_BAND)
    return bend


def drawn(conn, monkeypatch) -> dict:
    """The trend panel as conn's reader sees it: {(run, aggregate): (value, lo, hi)} of every point."""
    seen = {}
    real = charts.line_chart

    def capture(chart_id, *args, **kwargs):
        key = chart_id.removeprefix("trend-")
        for series in args[3]:
            for point in series.points:
                seen[(point.data["run"], key)] = (point.y, point.lo, point.hi)
        return real(chart_id, *args, **kwargs)

    monkeypatch.setattr(charts, "line_chart", capture)
    panels.trend(conn, Filters())
    return seen


def intervals_of(conn, run_ids) -> dict:
    """brain_eval_uncertainty_v1 of each run, as conn's reader: {(run, aggregate): (lo, hi)}."""
    got = {}
    for run in run_ids:
        uncertainty = conn.execute("SELECT evalledger.brain_eval_uncertainty_v1(%s)", (run,)).fetchone()[0]
        for key, u in uncertainty.items():
            got[(run, key)] = tuple(u["ci95"]) if u and u["ci95"] is not None else (None, None)
    return got


@pytest.mark.parametrize("reader", ["evalledger_auditor", REVIEWER_ROLE])
def test_each_point_of_the_trend_has_its_runs_interval(connect_as, reviewers, monkeypatch, reader):
    reviewer_id, other_reviewer_id = reviewers[REVIEWER_ROLE], reviewers[OTHER_REVIEWER_ROLE]
    runner = connect_as("evalledger_runner")
    mine = [record_run(runner, reviewer_id, brain=brain, bend=varied(k),
                       started_at=NOW - timedelta(days=40 * (6 - k))).eval_run_id
            for k in range(1, 6) for brain in ("AGT-901", "AGT-902")]
    # Another reviewer's run: the auditor's panel shows it, the reviewer's does not.
    theirs = record_run(runner, other_reviewer_id, bend=varied(9), started_at=NOW - timedelta(days=3)).eval_run_id
    conn = connect_as(reader)
    shown = drawn(conn, monkeypatch)
    runs = {run for run, _ in shown}
    assert runs == set(mine) | ({theirs} if reader == "evalledger_auditor" else set())
    expected = intervals_of(conn, runs)
    # The bars are as the run's completion stored them, and the function asked again now by this reader
    # gives them to the last bit: it sums its float8 rows in a fixed order, never its plan's
    # (docs/statistics.md, "Order of summation"; the PostgreSQL 15 leg once saw ...029 against ...028).
    bars = {(k, end): bound for k, (_, lo, hi) in shown.items() for end, bound in (("lo", lo), ("hi", hi))}
    wanted = {(k, end): bound for k in shown for end, bound in zip(("lo", "hi"), expected.get(k, (None, None)))}
    assert bars == wanted
    # Every value the panel draws has its bar around it (none for an aggregate with nothing to
    # measure: lever mapping of AGT-901), and the bars differ from run to run.
    assert all((y is None) == (lo is None) and (y is None or lo <= y <= hi) for y, lo, hi in shown.values())
    assert sum(y is not None for y, _, _ in shown.values()) >= 6 * len(runs)
    assert len({shown[(run, "citation_rate")] for run in runs}) > 1
