"""Each brain-eval aggregate with its uncertainty, beside the decision and never changing it (issue 36,
docs/statistics.md "brain-eval"): brain_eval_uncertainty_v1 computes it from the stored question rows
as its reader may read them, and the numbers it returns match statsmodels' on those same rows: the
question clustered by question_type, the claims' ratio clustered by question, the exact bound when
every question (or claim) passed or failed, the bound that matters under a hard criterion."""

from __future__ import annotations

from statistics import fmean

import pytest
import statsmodels.api as sm
from scipy import stats

from tests.builders import OUT_OF_BAND, record_run

pytestmark = pytest.mark.db

TYPES = ("plan_diagnosis", "coverage_gap", "play_retrospective", "forecast_bias", "churn_diagnosis",
         "expansion_qualification", "handoff_briefing", "qbr_narrative")
Z = stats.norm.ppf(0.975)


def varied(number: int, row: dict) -> None:
    """Thirty questions over eight types, with scores that vary within and between types."""
    row["question_type"] = TYPES[number % len(TYPES)]
    row["citation_rate"] = round(0.80 + (number * 7 % 20) / 100, 2)
    row["total_claims"] = 3 + number % 5
    row["hallucinations_detected"] = 1 if number % 9 == 0 else 0
    row["narrative_coherence_rating"] = 3 + number % 3
    # Diagnosis accuracy applies to the first five types only (the rubric's diagnosis types).
    row["diagnosis_accuracy_score"] = (0.0, 0.5, 1.0, 1.0)[number % 4] if number % len(TYPES) < 5 else None
    if number % 6 == 0:
        row["confidence_distribution"] = dict(OUT_OF_BAND)


def cluster_se(values, groups) -> float:
    index = {g: i for i, g in enumerate(sorted(set(groups)))}
    fit = sm.OLS([float(v) for v in values], [[1.0]] * len(values)).fit(
        cov_type="cluster", cov_kwds={"groups": [index[g] for g in groups]})
    return float(fit.bse[0])


def rows_of(admin, run_id):
    return admin.execute(
        "SELECT question_id, question_type, citation_rate::float8, hallucinations_detected, total_claims,"
        "       narrative_coherence_rating, diagnosis_accuracy_score::float8, uses_stale_fixture,"
        "       staleness_correctly_recognized"
        "  FROM evalledger.brain_eval_question_score WHERE eval_run_id = %s ORDER BY question_id", (run_id,)).fetchall()


def uncertainty_as(connect_as, role, run_id):
    return connect_as(role).execute("SELECT evalledger.brain_eval_uncertainty_v1(%s)", (run_id,)).fetchone()[0]


def test_each_aggregate_matches_statsmodels_on_the_stored_rows(admin, connect_as, reviewer_id):
    decided = record_run(connect_as("evalledger_runner"), reviewer_id, bend=varied)
    u = uncertainty_as(connect_as, "evalledger_auditor", decided.eval_run_id)
    rows = rows_of(admin, decided.eval_run_id)
    kinds = [r[1] for r in rows]

    for key, column, low, high in (("citation_rate", 2, 0, 1), ("narrative_coherence_mean", 5, 1, 5),
                                   ("diagnosis_accuracy_mean", 6, 0, 1)):
        scored = [(r[column], r[1]) for r in rows if r[column] is not None]
        values = [v for v, _ in scored]
        got = u[key]
        assert got["method"] == "clustered"
        assert (got["n"], got["clusters"]) == (len(scored), len({k for _, k in scored}))
        assert got["estimate"] == pytest.approx(float(decided.aggregated_scores[key]), rel=1e-12)
        assert got["stderr"] == pytest.approx(cluster_se(values, [k for _, k in scored]), rel=1e-9)
        want = (max(low, fmean(values) - Z * got["stderr"]), min(high, fmean(values) + Z * got["stderr"]))
        assert got["ci95"] == pytest.approx(list(want), rel=1e-9)

    # The claims' ratio, clustered by question (each claim a 0/1 outcome of its question).
    outcomes, groups = [], []
    for r in rows:
        outcomes += [1.0] * r[3] + [0.0] * (r[4] - r[3])
        groups += [r[0]] * r[4]
    got = u["hallucination_rate"]
    assert (got["method"], got["n"], got["clusters"]) == ("ratio", sum(r[4] for r in rows), 30)
    assert got["estimate"] == pytest.approx(float(decided.aggregated_scores["hallucination_rate"]), rel=1e-12)
    assert got["stderr"] == pytest.approx(cluster_se(outcomes, groups), rel=1e-9)
    # Under the hard criterion (<= 2%), the bound that matters is the upper one.
    assert got["criterion"] == {"op": "<=", "threshold": 0.02, "bound": got["ci95"][1]}

    # Confidence in band: a proportion of questions, clustered by type like a mean.
    in_band = [0.0 if int(r[0][-2:]) % 6 == 0 else 1.0 for r in rows]
    got = u["confidence_calibration_in_band"]
    assert got["estimate"] == pytest.approx(fmean(in_band), rel=1e-12)
    assert got["stderr"] == pytest.approx(cluster_se(in_band, kinds), rel=1e-9)
    # AGT-901 has no lever mapping: nothing to measure, as in aggregated_scores.
    assert u["lever_mapping_correctness"] is None and decided.aggregated_scores["lever_mapping_correctness"] is None


def test_every_question_passing_shows_the_exact_bound(admin, connect_as, reviewer_id):
    """The builder's run passes everything: 0 hallucinations in 300 claims, 5 of 5 stale fixtures
    recognised. The standard error is 0 there and says nothing; the exact bound speaks."""
    decided = record_run(connect_as("evalledger_runner"), reviewer_id)
    assert decided.decision == "pass"
    u = uncertainty_as(connect_as, "evalledger_auditor", decided.eval_run_id)
    hallucination = u["hallucination_rate"]
    assert hallucination["method"] == "exact" and hallucination["stderr"] == 0
    assert hallucination["ci95"] == pytest.approx([0, stats.beta.ppf(0.95, 1, 300)], rel=1e-9)
    assert hallucination["criterion"]["bound"] == hallucination["ci95"][1]
    stale = u["staleness_recognition_rate"]
    assert (stale["method"], stale["n"], stale["estimate"]) == ("exact", 5, 1)
    assert stale["ci95"] == pytest.approx([stats.beta.ppf(0.05, 5, 1), 1], rel=1e-9)
    # >= 100%: the lower bound is the one that matters, and it is far below the criterion.
    assert stale["criterion"] == {"op": ">=", "threshold": 1.0, "bound": stale["ci95"][0]}
    assert stale["criterion"]["bound"] < 0.6
    # All questions of one type: no clustered error, the plain one instead.
    citation = u["citation_rate"]
    assert (citation["clusters"], citation["method"], citation["stderr"]) == (1, "mean", 0)


def test_the_decision_is_unchanged_and_a_reviewer_reads_only_their_own(admin, connect_as, reviewer_id):
    decided = record_run(connect_as("evalledger_runner"), reviewer_id, bend=varied)
    stored = admin.execute("SELECT aggregated_scores, decision::text, decision_rationale FROM evalledger.brain_eval_log"
                           " WHERE eval_run_id = %s", (decided.eval_run_id,)).fetchone()
    for role in ("evalledger_auditor", "evalledger_revops"):
        assert uncertainty_as(connect_as, role, decided.eval_run_id)["citation_rate"]["n"] == 30
    assert admin.execute("SELECT aggregated_scores, decision::text, decision_rationale FROM evalledger.brain_eval_log"
                         " WHERE eval_run_id = %s", (decided.eval_run_id,)).fetchone() == stored


def test_the_interval_views_read_under_each_readers_own_policies(admin, connect_as, reviewer_id):
    import psycopg

    decided = record_run(connect_as("evalledger_runner"), reviewer_id, bend=varied)
    u = uncertainty_as(connect_as, "evalledger_auditor", decided.eval_run_id)
    seen = connect_as("evalledger_auditor").execute(
        "SELECT aggregate, estimate, stderr, ci95_lo, ci95_hi, n, clusters, method, criterion_bound"
        "  FROM evalledger.brain_eval_intervals_v1 WHERE eval_run_id = %s", (decided.eval_run_id,)).fetchall()
    assert {r[0]: r[1:] for r in seen} == {
        k: (v["estimate"], v["stderr"], v["ci95"][0], v["ci95"][1], v["n"], v["clusters"], v["method"],
            (v.get("criterion") or {}).get("bound"))
        for k, v in u.items() if v is not None}
    # RevOps reads the hot tier; the runner and the brain agents have no grant.
    assert connect_as("evalledger_revops").execute(
        "SELECT count(*) FROM evalledger.brain_eval_intervals_v1").fetchone()[0] == len(seen)
    for role in ("evalledger_runner", "evalledger_agent"):
        for view in ("brain_eval_intervals_v1", "takes_quality_intervals_v1", "work_quality_intervals_v1"):
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                connect_as(role).execute(f"SELECT * FROM evalledger.{view}")
