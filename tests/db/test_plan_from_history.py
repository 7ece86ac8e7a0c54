"""Planning before a run (issue 36, item 6; docs/statistics.md "Planning"): plan_v1 reads each
subject's completed runs from the suites' interval views and gives, per measure, the spread of one
unit, the smallest drop the next run of the latest run's size detects at 80% power, whether that
reaches the suite's own regression threshold (read from the database's policy), and the units a
chosen drop needs. Known histories, checked against scipy and statsmodels."""

from __future__ import annotations

import math

import psycopg
import pytest
from psycopg.types.json import Jsonb
from scipy import stats

from tests.builders import record_run
from tests.db.test_uncertainty_beside_the_decision import cluster_se, rows_of, varied

pytestmark = pytest.mark.db

PANEL = ["openai:gpt-4o", "anthropic:claude-opus-4-7", "google:gemini-1.5-pro"]
DIMS = ["accuracy", "attribution", "weight_calibration", "kind_classification", "signal_density"]
FACTOR = stats.norm.ppf(0.975) + stats.norm.ppf(0.8)  # two-sided 5%, 80% power


def takes_run(runner, judges: list[dict], corpus: str) -> int:
    """A completed takes-quality run whose three judges gave these scores (the rest 8)."""
    run_id = runner.execute(
        "INSERT INTO eval_takes_quality_runs (corpus_source, sample_limit, seed, n_takes, corpus_sha8, prompt_sha8, models)"
        " VALUES ('db', 10, 1, 3, %s, 'bbbbbbbb', %s) RETURNING id", (corpus, PANEL)).fetchone()[0]
    for model, scores in zip(PANEL, judges):
        runner.execute("INSERT INTO eval_takes_quality_judge_verdicts (run_id, cycle, model, recorded, response_json)"
                       " VALUES (%s, 1, %s, false, %s)",
                       (run_id, model, Jsonb({"scores": {**{d: 8 for d in DIMS}, **scores}, "feedback": "fine",
                                              "improvements": ["x"]})))
    assert runner.execute("SELECT evalledger.takes_quality_complete_v1(%s)", (run_id,)).fetchone()[0] is not None
    return run_id


def plan(conn, suite=None, runs=20, effect=None) -> dict:
    rows = conn.execute("SELECT * FROM evalledger.plan_v1(%s, %s, %s)", (suite, runs, effect)).fetchall()
    return {(r[0], r[1], r[2]): dict(zip(("runs", "n", "sd", "mde", "threshold", "detectable", "effect", "needed_n"),
                                         r[3:])) for r in rows}


def test_takes_quality_judges_spread_against_its_regress_threshold(connect_as):
    runner = connect_as("evalledger_runner")
    # accuracy: the judges say 6, 7, 8 then 7, 8, 9 (variance 1 in each run); signal_density nearly
    # agrees (8, 8, 8.1 twice); weight_calibration agrees exactly (8, 8, 8).
    takes_run(runner, [{"accuracy": 6, "signal_density": 8}, {"accuracy": 7, "signal_density": 8},
                       {"accuracy": 8, "signal_density": 8.1}], "aaaaaaa1")
    takes_run(runner, [{"accuracy": 7, "signal_density": 8}, {"accuracy": 8, "signal_density": 8},
                       {"accuracy": 9, "signal_density": 8.1}], "aaaaaaa2")
    planned = plan(connect_as("evalledger_auditor"), "takes-quality", effect=0.5)
    accuracy = planned[("takes-quality", "v1.1", "accuracy")]
    assert (accuracy["runs"], accuracy["n"]) == (2, 3)
    assert accuracy["sd"] == pytest.approx(1.0, rel=1e-12)
    assert accuracy["mde"] == pytest.approx(FACTOR * math.sqrt(2) / math.sqrt(3), rel=1e-12)
    # Seed 000's threshold, 0.5, as the database holds it (takes_quality_threshold_v1): not detectable.
    assert (accuracy["threshold"], accuracy["detectable"]) == (0.5, False)
    assert accuracy["needed_n"] == math.ceil((FACTOR * math.sqrt(2) / 0.5) ** 2) == 63
    density = planned[("takes-quality", "v1.1", "signal_density")]
    assert density["sd"] == pytest.approx(stats.tstd([8, 8, 8.1]), rel=1e-9)
    assert density["detectable"] is True and density["mde"] < 0.5
    # No spread seen: nothing to plan from, and nothing claimed detectable.
    calibration = planned[("takes-quality", "v1.1", "weight_calibration")]
    assert calibration["sd"] == 0 and calibration["mde"] is None and calibration["detectable"] is None
    # --runs 1 reads the latest run alone; another suite's plan has none of these rows.
    assert plan(connect_as("evalledger_auditor"), "takes-quality", runs=1)[("takes-quality", "v1.1", "accuracy")][
        "runs"] == 1
    assert plan(connect_as("evalledger_auditor"), "work-quality") == {}


def test_brain_eval_pools_each_runs_clustered_spread(admin, connect_as, reviewer_id):
    runner = connect_as("evalledger_runner")
    first = record_run(runner, reviewer_id, bend=varied)
    second = record_run(runner, reviewer_id, bend=varied, count=24)
    planned = plan(connect_as("evalledger_auditor"), "brain-eval", effect=0.05)
    # Each run's unit variance is n * stderr^2 (statsmodels' clustered stderr by question_type), pooled
    # with weights n - 1; the next run is the latest's size (24 questions).
    variances, weights = [], []
    for decided in (first, second):
        rows = rows_of(admin, decided.eval_run_id)
        citation = [r[2] for r in rows]
        se = cluster_se(citation, [r[1] for r in rows])
        variances.append(len(citation) * se ** 2)
        weights.append(len(citation) - 1)
    sd = math.sqrt(sum(w * v for w, v in zip(weights, variances)) / sum(weights))
    citation = planned[("brain-eval", "AGT-901", "citation_rate")]
    assert (citation["runs"], citation["n"]) == (2, 24)
    assert citation["sd"] == pytest.approx(sd, rel=1e-9)
    assert citation["mde"] == pytest.approx(FACTOR * math.sqrt(2) * sd / math.sqrt(24), rel=1e-9)
    assert citation["needed_n"] == math.ceil((FACTOR * math.sqrt(2) * sd / 0.05) ** 2)
    # brain-eval's rubric gates on criteria, not on a drop: no threshold to miss.
    assert all(p["threshold"] is None and p["detectable"] is None for p in planned.values())
    # The hallucination rate's units are the claims of the latest run.
    claims = admin.execute("SELECT sum(total_claims) FROM evalledger.brain_eval_question_score WHERE eval_run_id = %s",
                           (second.eval_run_id,)).fetchone()[0]
    assert planned[("brain-eval", "AGT-901", "hallucination_rate")]["n"] == claims


def test_who_may_plan(connect_as, reviewer_id):
    record_run(connect_as("evalledger_runner"), reviewer_id, bend=varied)
    assert plan(connect_as("evalledger_revops"), "brain-eval")
    for role in ("evalledger_runner", "evalledger_agent"):
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            plan(connect_as(role))
