"""The dashboards' panels: seed 002's six, production beside eval, the judges' agreement with
reviewers, the takes-quality trend by rubric epoch, work-quality history per target, and the failed
runs. Each reads its view's
function with the filters, as the reader (row-level security decides what it sees), and comes with
a chart (charts.py) and the table under it. The web app's dashboards and `evalledger report` show
the same Panel objects."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date

import psycopg
from markupsafe import Markup
from psycopg.rows import dict_row

from evalledger.core.errors import EvalledgerError
from evalledger.core.queries import Queries

from . import charts
from .filters import Filters

QUERIES = Queries(__package__)


def dicts(conn: psycopg.Connection, query: str, params: dict | None = None) -> list[dict]:
    """A panel query's rows as objects, planned for the values given each time: a panel's filters
    are often NULL ("all"), and a generic plan that cannot tell would read what they leave out,
    so its statements are never prepared on the server (psycopg would after five runs)."""
    with conn.cursor(row_factory=dict_row) as cur:
        return cur.execute(query, params or {}, prepare=False).fetchall()


DIMENSIONS = (
    ("citation_rate", "citation rate", 0, 1), ("hallucination_rate", "hallucination rate", 0, 1),
    ("staleness_recognition_rate", "staleness recognition", 0, 1), ("diagnosis_accuracy_mean", "diagnosis accuracy", 0, 1),
    ("lever_mapping_correctness", "lever mapping", 0, 1),
    ("confidence_calibration_in_band", "confidence calibration", 0, 1), ("narrative_coherence_mean", "narrative coherence", 1, 5),
)
OPS = {">=": "≥", "<=": "≤"}


@dataclass
class Column:
    """A table column: the row's key, its heading, how its values read (text, rate 0-1, pct 0-100,
    usd, hours, count, kappa, when, month, bool, hash, and the links run, takes, snapshot, question)."""

    key: str
    label: str
    kind: str = "text"


@dataclass
class Table:
    title: str | None
    columns: list[Column]
    rows: list[dict]


@dataclass
class Panel:
    """One panel: what it answers, the views behind it, its chart(s), its table(s), its notes."""

    key: str
    title: str
    answers: str
    source: str
    charts: list[Markup] = field(default_factory=list)
    tables: list[Table] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    unavailable: str | None = None


@dataclass
class Dashboard:
    """Every panel the reader may see, for the filters, with what it covers."""

    filters: Filters
    brains: list[str]
    panels: list[Panel]
    coverage: str
    # What an empty table says: why it is empty, when the reason is known.
    empty: str = "No rows for these filters."


def known_brains(conn: psycopg.Connection) -> list[str]:
    """The brains a filter may name, in order."""
    return [r["target_id"] for r in dicts(conn, QUERIES["brains"])]


def _f(value) -> float | None:
    return None if value is None else float(value)


def _pct(value) -> str:
    return "—" if value is None else f"{float(value) * 100:.0f}%"


def _short(run_id) -> str:
    return str(run_id)[:8]


def _n(value, places: int = 3) -> str:
    """A number as the eye reads it, rounded (the exact one is the table cell's title and data-value)."""
    if value is None:
        return "n/a"
    text = f"{float(value):.{places}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def _ci(lo, hi, places: int = 3) -> str:
    """ ' (95% CI lo–hi)', or nothing without an interval."""
    return "" if lo is None or hi is None else f" (95% CI {_n(lo, places)}–{_n(hi, places)})"


# -- the panels ------------------------------------------------------------------------------------

def trend(conn: psycopg.Connection, filters: Filters) -> Panel:
    rows = dicts(conn, QUERIES["panel_trend"], filters.params())
    trigger = filters.trigger or "quarterly"
    panel = Panel("trend", "Per-brain trend", f"How has each brain scored on each dimension over its last 8 {trigger} "
                  "runs, against the rubric's thresholds?",
                  "brain_quarterly_trend_v1's runs with their error bars (brain_trend_rows_v2); the intervals "
                  "brain_eval_intervals_v1")
    criteria = dicts(conn, QUERIES["rubric_criteria"], {"eval_run_id": rows[0]["eval_run_id"]}) if rows else []
    # Each run's ci95_lo and ci95_hi are in DIMENSIONS' order (seed 002's), NULL where nothing was measured.
    intervals = {(r["eval_run_id"], key): (lo, hi) for r in rows if r["ci95_lo"] is not None
                 for (key, _, _, _), lo, hi in zip(DIMENSIONS, r["ci95_lo"], r["ci95_hi"])}
    brains = sorted({r["brain_under_test"] for r in rows})
    for key, label, low, high in DIMENSIONS:
        series = []
        for brain in brains:
            mine = sorted((r for r in rows if r["brain_under_test"] == brain), key=lambda r: -r["recency_rank"])
            series.append(charts.Series(brain, [
                charts.Point(8 - len(mine) + i, _f(r[key]), f"{brain} {r['quarter']} ({_short(r['eval_run_id'])}, "
                             f"{r['decision']}): {label} {_n(r[key])}"
                             + _ci(*intervals.get((r["eval_run_id"], key), (None, None))),
                             {"run": r["eval_run_id"], "started": r["started_at"].isoformat()},
                             *intervals.get((r["eval_run_id"], key), (None, None)))
                for i, r in enumerate(mine)]))
        lines = [charts.Line(float(c["threshold"]), f"{c['kind']} {OPS.get(c['op'], c['op'])} {c['threshold']:g}"
                             + (f" ({', '.join(c['applies_to'])} only)" if c["applies_to"] else ""))
                 for c in criteria if c["key"] == key]
        title = label + (f" ({lines[0].label})" if lines else "")
        panel.charts.append(charts.line_chart(
            f"trend-{key}", title, f"{label} of each brain's last {trigger} runs, oldest to latest",
            [f"−{7 - i}" if i < 7 else "latest" for i in range(8)], series, y_min=low, y_max=high, lines=lines,
            width=320, height=170))
    if criteria:
        panel.notes.append(f"Thresholds of rubric {criteria[0]['suite']} {criteria[0]['version']} (the latest run's).")
    if rows:
        panel.notes.append("Each point's bar is its 95% interval (brain_eval_intervals_v1, as the run's completion stored it: "
                           "the questions clustered by question_type; docs/statistics.md); the decision uses the point alone.")
    panel.tables.append(Table(None, [
        Column("brain_under_test", "brain"), Column("recency_rank", "rank", "count"), Column("eval_run_id", "run", "run"),
        Column("quarter", "quarter"), Column("decision", "decision"),
        *[Column(key, label, "score" if key == "narrative_coherence_mean" else "rate") for key, label, _, _ in DIMENSIONS],
    ], rows))
    return panel


def most_failing(conn: psycopg.Connection, filters: Filters) -> Panel:
    rows = dicts(conn, QUERIES["panel_most_failing"], filters.params())
    brains = sorted({r["brain_under_test"] for r in rows})
    bars = [charts.Bar(f"{r['question_id']} · {r['brain_under_test']} · {r['question_catalog_version']}",
                       float(r["fail_pct"]), f"{r['fail_pct']}% ({r['runs_failed']} of {r['runs_seen']} runs)",
                       brains.index(r["brain_under_test"]),
                       {"question": r["question_id"], "catalog": r["question_catalog_version"],
                        "brain": r["brain_under_test"]}) for r in rows]
    return Panel("most-failing", "Most-failing questions",
                 "Which catalog questions fail in the largest share of the runs that ask them, per brain and catalog "
                 "version (questions that may be too hard, ambiguous or misaligned)?", "most_failing_questions_v2",
                 [charts.bar_chart("most-failing-chart", "Share of runs failed, worst 20",
                                   "Each question's share of completed runs it failed in", bars, max_value=100,
                                   styles=brains, width=700, label_width=260)],
                 [Table(None, [Column("brain_under_test", "brain"), Column("question_catalog_version", "catalog"),
                               Column("question_id", "question", "question"), Column("runs_seen", "runs", "count"),
                               Column("runs_failed", "failed", "count"), Column("fail_pct", "fail %", "pct"),
                               Column("fail_rank", "rank in catalog", "count")], rows)])


STALE_STYLES = ("every stale question recognised", "sev-2: a stale question missed", "no stale-fixture question")


def stale_fixture(conn: psycopg.Connection, filters: Filters) -> Panel:
    runs = dicts(conn, QUERIES["panel_stale_runs"], filters.params())
    total = dicts(conn, QUERIES["panel_stale_total"], filters.params())[0]
    misses = dicts(conn, QUERIES["panel_stale_misses"], filters.params())
    bars = [charts.Bar(f"{r['started_at']:%Y-%m-%d} {r['brain_under_test']} {_short(r['eval_run_id'])}",
                       _f(r["stale_pass_rate"]) or 0,
                       "no stale-fixture question" if not r["stale_questions"]
                       else f"{_pct(r['stale_pass_rate'])} ({r['stale_recognised']} of {r['stale_questions']})",
                       2 if not r["stale_questions"] else 1 if r["sev2_incident"] else 0,
                       {"run": r["eval_run_id"], "started": r["started_at"].isoformat()},
                       flag="sev-2" if r["sev2_incident"] else "") for r in runs]
    panel = Panel("stale-fixture", "Stale-fixture pass rate",
                  "Did every stale-fixture question of each run have its staleness recognised? Any miss is a sev-2 "
                  "incident.", "stale_fixture_pass_rate_v2, stale_fixture_by_month_v1",
                  [charts.bar_chart("stale-chart", "Stale-fixture pass rate of the latest runs",
                                    "Per run, newest first: recognised stale-fixture questions of those asked",
                                    bars, max_value=1, styles=STALE_STYLES, width=700, label_width=220)])
    panel.notes.append(f"In the range: {total['runs']} completed runs, {total['runs_with_stale']} with stale-fixture "
                       f"questions, {total['runs_all_recognised']} recognised all of them, {total['sev2_runs']} sev-2 "
                       f"incidents; {total['stale_recognised']} of {total['stale_questions']} stale-fixture questions "
                       f"recognised ({_pct(total['stale_pass_rate'])}).")
    panel.tables.append(Table("The latest 40 runs", [
        Column("eval_run_id", "run", "run"), Column("brain_under_test", "brain"), Column("run_trigger", "trigger"),
        Column("started_at", "started", "when"), Column("stale_questions", "stale", "count"),
        Column("stale_recognised", "recognised", "count"), Column("stale_missed", "missed", "count"),
        Column("stale_pass_rate", "pass rate", "rate"), Column("sev2_incident", "sev-2", "bool")], runs))
    panel.tables.append(Table("Sev-2 incidents, the latest 20", [
        Column("eval_run_id", "run", "run"), Column("brain_under_test", "brain"), Column("run_trigger", "trigger"),
        Column("started_at", "started", "when"), Column("missed", "stale-fixture questions missed", "list")], misses))
    return panel


def calibration(conn: psycopg.Connection, filters: Filters, names: dict) -> Panel:
    rows = dicts(conn, QUERIES["panel_calibration"], filters.params())
    for r in rows:
        r["reviewer"] = names.get(r["reviewer_user_id"]) or str(r["reviewer_user_id"])
    stacks = [(r["reviewer"], [r[f"rating_{k}"] for k in range(1, 6)], {"reviewer": r["reviewer_user_id"]})
              for r in rows]
    panel = Panel("calibration", "Reviewer calibration",
                  "How does each reviewer's narrative-coherence rating distribute? Drift in a distribution may mean "
                  "calibration drift.", "reviewer_calibration_v2",
                  [charts.stacked_chart("calibration-chart", "Narrative-coherence ratings per reviewer",
                                        "Each reviewer's ratings 1 to 5 as shares of their ratings", stacks,
                                        ["rating 1", "rating 2", "rating 3", "rating 4", "rating 5"])],
                  [Table(None, [Column("reviewer", "reviewer"), Column("runs_reviewed", "runs", "count"),
                                Column("ratings", "ratings", "count"),
                                *[Column(f"rating_{k}", str(k), "count") for k in range(1, 6)],
                                Column("rating_mean", "mean (1-5)", "score"),
                                Column("rating_stddev", "stddev", "score")], rows)])
    if not names:
        panel.notes.append("Reviewers by id: this login does not read the reviewer registry's names.")
    return panel


def cost(conn: psycopg.Connection, filters: Filters) -> Panel:
    rows = dicts(conn, QUERIES["panel_cost"], filters.params())
    months = sorted({r["started_month"] for r in rows})
    brains = sorted({r["brain_under_test"] for r in rows})

    def by_month(key: str, unit: str) -> list[charts.Series]:
        return [charts.Series(brain, [charts.Point(months.index(r["started_month"]), _f(r[key]),
                                                   f"{brain} {r['started_month']:%Y-%m}: {_n(r[key], 4)} {unit} ({r['runs']} runs)",
                                                   {"month": r["started_month"].isoformat(), "brain": brain})
                                      for r in rows if r["brain_under_test"] == brain]) for brain in brains]

    labels = [f"{m:%Y-%m}" for m in months]
    top_usd = max([_f(r["token_cost_per_run_usd"]) or 0 for r in rows] + [0.0001])
    top_hours = max([_f(r["reviewer_hours_per_run"]) or 0 for r in rows] + [0.01])
    return Panel("cost", "Cost per run over time",
                 "What does a run cost, in brain tokens (USD) and reviewer hours, month by month? Watch for process "
                 "bloat.", "cost_by_month_v1 (per run: cost_per_run_v1)",
                 [charts.line_chart("cost-usd", "Token cost per run (USD)", "Mean token cost per run by month started",
                                    labels, by_month("token_cost_per_run_usd", "USD per run"), y_min=0,
                                    y_max=top_usd * 1.15, y_format=lambda v: f"${v:.3f}", width=420, height=190),
                  charts.line_chart("cost-hours", "Reviewer hours per run", "Mean reviewer hours per reporting run by month",
                                    labels, by_month("reviewer_hours_per_run", "hours per run"), y_min=0,
                                    y_max=top_hours * 1.15, y_format=lambda v: f"{v:.1f} h", width=420, height=190)],
                 [Table(None, [Column("started_month", "month", "month"), Column("brain_under_test", "brain"),
                               Column("runs", "runs", "count"), Column("token_cost_usd", "tokens USD", "usd"),
                               Column("token_cost_per_run_usd", "USD per run", "usd"),
                               Column("reviewer_hours_spent", "reviewer hours", "hours"),
                               Column("runs_with_hours", "runs reporting", "count"),
                               Column("reviewer_hours_per_run", "hours per run", "hours")], rows)])


DRIFT_STATES = ("production on the last passing prompt", "drift: production on a prompt that never passed",
                "no production traffic yet")


def drift(conn: psycopg.Connection, filters: Filters) -> Panel:
    rows = dicts(conn, QUERIES["panel_drift"], filters.params())
    brains = sorted({r["brain_under_test"] for r in rows})
    months = sorted({r["month"] for r in rows})
    cells = {}
    for r in rows:
        state = 2 if r["prompt_drift"] is None else 1 if r["prompt_drift"] else 0
        cells[(brains.index(r["brain_under_test"]), months.index(r["month"]))] = (
            state, ("same", "DRIFT", "—")[state], {"month": r["month"].isoformat(), "brain": r["brain_under_test"]})
    return Panel("drift", "Production-versus-eval prompt drift",
                 "Month by month: is production running the prompt of the last passing eval, or one that never passed?",
                 "prompt_drift_v2 (now: prompt_drift_v1)",
                 [charts.grid_chart("drift-chart", "Prompt drift by month", "Per brain and month, as of the month's end",
                                    brains, [f"{m:%Y-%m}" for m in months], cells, DRIFT_STATES, width=700)],
                 [Table(None, [Column("month", "month", "month"), Column("brain_under_test", "brain"),
                               Column("production_prompt_hash", "production prompt", "hash"),
                               Column("production_last_seen_at", "last seen", "when"),
                               Column("eval_prompt_hash", "last passing prompt", "hash"),
                               Column("eval_run_id", "passing run", "run"), Column("eval_decision", "decision"),
                               Column("prompt_drift", "drift", "bool")], rows)])


BESIDE_STYLES = ("the eval passed it", "the eval failed it", "not judged yet (run open)")


def beside(conn: psycopg.Connection, filters: Filters) -> Panel:
    """Production beside eval: each catalog question production also asked (by prompt hash), per
    brain version, the furthest from production first: the overlap of what production retrieved with
    the sources the catalog gives, and the eval's verdict where judged."""
    rows = dicts(conn, QUERIES["panel_beside"], filters.params())
    for r in rows:
        r["brain_version"] = f"{r['brain_under_test']} · {r['model_id']} · {r['system_prompt_hash'][:8]}"
    bars = [charts.Bar(f"{r['question_id']} · {r['brain_under_test']} · {r['system_prompt_hash'][:8]}",
                       float(r["jaccard"]),
                       f"Jaccard {float(r['jaccard']):.2f}, recall {float(r['recall']):.2f}, RBO {float(r['rbo']):.2f}; "
                       f"asked {r['production_asks']}x in production",
                       2 if r["question_passed"] is None else 0 if r["question_passed"] else 1,
                       {"run": r["eval_run_id"], "question": r["question_id"], "prompt": r["prompt_hash"]})
            for r in rows]
    return Panel("beside", "Production beside eval",
                 "For a catalog question production also asked (the same prompt hash), does the eval still give the "
                 "brain what production retrieves for it, per brain version, and did the eval pass it?",
                 "production_beside_eval_v1",
                 [charts.bar_chart("beside-chart", "Overlap of production's retrieval with the catalog's sources",
                                   "Per question and brain version, the furthest from production first: the Jaccard "
                                   "index of production's slugs and the question's sources", bars, max_value=1,
                                   styles=BESIDE_STYLES, width=700, label_width=240)],
                 [Table(None, [Column("question_id", "question", "question"), Column("brain_version", "brain version"),
                               Column("prompt_hash", "prompt hash", "hash"), Column("question_text", "asked"),
                               Column("production_asks", "production asks", "count"),
                               Column("last_asked_at", "last asked", "when"), Column("capture_id", "capture"),
                               Column("production_slugs", "production retrieved", "list"),
                               Column("eval_sources", "eval gives", "list"), Column("recall", "recall", "rate"),
                               Column("jaccard", "Jaccard", "rate"), Column("rbo", "RBO", "rate"),
                               Column("eval_run_id", "latest run", "run"), Column("run_decision", "decision"),
                               Column("question_passed", "passed", "bool")], rows)],
                 ["Matched by prompt hash: the SHA-256 of the question's normal form (prompt_normal_hash_v1), the same "
                  "for the catalog's text and production's scrubbed query. The overlap is the database's "
                  "(the replay's recall, Jaccard and rank-biased overlap), against the latest captured row."])


def agreement(conn: psycopg.Connection, filters: Filters) -> Panel:
    rows = dicts(conn, QUERIES["panel_agreement"], filters.params())
    totals = dicts(conn, QUERIES["panel_agreement_total"], filters.params())
    quarters = sorted({r["quarter"] for r in rows})
    groups = sorted({(r["brain_under_test"], r["judge_model"]) for r in rows})

    def kappa_series(key: str) -> list[charts.Series]:
        return [charts.Series(f"{judge} ({brain})", [
            charts.Point(quarters.index(r["quarter"]), _f(r[key]), f"{judge} on {brain}, {r['quarter']}: {_n(r[key])}",
                         {"quarter": r["quarter"], "judge": judge, "brain": brain})
            for r in rows if (r["brain_under_test"], r["judge_model"]) == (brain, judge)]) for brain, judge in groups]

    chance = [charts.Line(0, "chance (0)")]
    panel = Panel("agreement", "Judges against reviewers",
                  "Can the judges be trusted to pre-fill? How their drafts agree with the reviewers' final numbers, "
                  "counting only values entered before the reviewer saw the drafts (or without seeing them).",
                  "judge_agreement_v1",
                  [charts.line_chart("agreement-unsupported", "Unsupported claims: Cohen's kappa (bins 0/1/2+)",
                                     "Per judge and quarter", quarters, kappa_series("unsupported_kappa"), y_min=-1,
                                     y_max=1, lines=chance, width=420, height=200),
                   charts.line_chart("agreement-diagnosis", "Diagnosis accuracy: weighted kappa",
                                     "Per judge and quarter", quarters, kappa_series("diagnosis_weighted_kappa"),
                                     y_min=-1, y_max=1, lines=chance, width=420, height=200)])
    for t in totals:
        panel.notes.append(f"{t['judge_model']} on {t['brain_under_test']}, the whole range: unsupported-claims kappa "
                           f"{_n(t['unsupported_kappa'])} ({t['unsupported_pairs']} pairs), diagnosis weighted kappa "
                           f"{_n(t['diagnosis_weighted_kappa'])} ({t['diagnosis_pairs']}), claims mean |difference| "
                           f"{_n(t['claims_mean_abs_difference'])} ({t['claims_pairs']}).")
    panel.tables.append(Table(None, [
        Column("brain_under_test", "brain"), Column("judge_model", "judge"), Column("quarter", "quarter"),
        Column("unsupported_pairs", "pairs", "count"), Column("unsupported_agreement", "same bin", "rate"),
        Column("unsupported_kappa", "kappa", "kappa"), Column("diagnosis_pairs", "pairs", "count"),
        Column("diagnosis_agreement", "same score", "rate"), Column("diagnosis_weighted_kappa", "weighted kappa", "kappa"),
        Column("claims_pairs", "pairs", "count"), Column("claims_mean_abs_difference", "claims mean |diff|", "score")],
        rows))
    return panel


def _pass_lines(rules: list[dict]) -> list[charts.Line]:
    """One line per pass mean the rubrics hold (a rubric that changed it names its versions)."""
    means = sorted({r["every_mean_at_least"] for r in rules if r["every_mean_at_least"] is not None})
    return [charts.Line(float(mean), f"pass: every mean ≥ {float(mean):g}" + (
        f" (rubric {', '.join(r['version'] for r in rules if r['every_mean_at_least'] == mean)})"
        if len(means) > 1 else "")) for mean in means]


def _scale(rubrics: list[dict]) -> tuple[float, float]:
    """The score axis that holds every rubric's scale."""
    lows = [float(r["scale_min"]) for r in rubrics if r["scale_min"] is not None]
    highs = [float(r["scale_max"]) for r in rubrics if r["scale_max"] is not None]
    if not lows or not highs:
        raise EvalledgerError("the takes-quality rubric holds no score scale (scale.min, scale.max)")
    return min(lows), max(highs)


def takes_quality(conn: psycopg.Connection, filters: Filters) -> Panel:
    rows = dicts(conn, QUERIES["panel_takes_quality"], filters.params())
    ordered = list(reversed(rows))
    rubrics = dicts(conn, QUERIES["takes_quality_rubrics"], {"run_ids": [r["run_id"] for r in rows]})
    low, high = _scale(rubrics)
    epochs = sorted({(r["rubric_version"], r["rubric_sha8"]) for r in rows}, key=lambda e: min(
        r["started_at"] for r in rows if (r["rubric_version"], r["rubric_sha8"]) == e))
    intervals = {i["run_id"]: (_f(i["ci95_lo"]), _f(i["ci95_hi"])) for i in dicts(
        conn, QUERIES["panel_takes_quality_intervals"], {"run_ids": [r["run_id"] for r in rows]})} if rows else {}
    series = [charts.Series(f"rubric {v} ({sha})", [
        charts.Point(i, _f(r["overall_score"]), f"{r['started_at']:%Y-%m-%d} run {r['run_id']}: {r['verdict']}, "
                     f"overall {_n(r['overall_score'], 2)}" + _ci(*intervals.get(r["run_id"], (None, None)), 2),
                     {"takes-run": r["run_id"], "started": r["started_at"].isoformat()},
                     *intervals.get(r["run_id"], (None, None)))
        for i, r in enumerate(ordered) if (r["rubric_version"], r["rubric_sha8"]) == (v, sha)]) for v, sha in epochs]
    for r in rows:
        r["epoch"] = f"{r['rubric_version']} ({r['rubric_sha8']})"
        r["dimensions"] = ", ".join(f"{k} {_n(v, 2)}" for k, v in sorted((r["dimension_means"] or {}).items()))
    return Panel("takes-quality", "Takes-quality trend by rubric epoch",
                 "How has the takes layer scored run by run? A stricter rubric is a new epoch, charted apart, never "
                 "read as a drop.", "takes_quality_trend_v1",
                 [charts.line_chart("takes-chart", f"Overall score ({low:g}-{high:g}) of the latest runs, by rubric epoch",
                                    "Oldest to newest; a series per rubric epoch", [f"{r['started_at']:%m-%d}" for r in ordered],
                                    series, y_min=low, y_max=high, lines=_pass_lines(rubrics),
                                    width=700, height=210)],
                 [Table(None, [Column("run_id", "run", "takes"), Column("target_id", "target"),
                               Column("started_at", "started", "when"), Column("epoch", "rubric epoch"),
                               Column("state", "state"), Column("verdict", "verdict"),
                               Column("overall_score", f"overall ({low:g}-{high:g})", "score"),
                               Column("dimensions", "dimension means"), Column("cost_usd", "judges USD", "usd"),
                               Column("judges", "judges")], rows)])


def work_quality(conn: psycopg.Connection, filters: Filters) -> Panel:
    rows = dicts(conn, QUERIES["panel_work_quality"], filters.params())
    ordered = list(reversed(rows))
    names = sorted({r["name"] for r in rows})
    intervals = {i["snapshot_id"]: (_f(i["ci95_lo"]), _f(i["ci95_hi"])) for i in dicts(
        conn, QUERIES["panel_work_quality_intervals"], {"snapshot_ids": [r["snapshot_id"] for r in rows]})} if rows else {}
    series = [charts.Series(name, [
        charts.Point(i, _f(r["overall"]), f"{name} {r['at']:%Y-%m-%d} {r['run_id']}: overall {_n(r['overall'])}"
                     + _ci(*intervals.get(r["snapshot_id"], (None, None)))
                     + (f", {r['verdict']} than {r['prev_run_id']}" if r["verdict"] else "")
                     + (" (regression)" if r["regression"] else ""),
                     {"snapshot": r["snapshot_id"], "at": r["at"].isoformat(), "verdict": r["verdict"]},
                     *intervals.get(r["snapshot_id"], (None, None)))
        for i, r in enumerate(ordered) if r["name"] == name]) for name in names]
    return Panel("work-quality", "Work-quality history per target",
                 "How has each target's real work product scored, snapshot by snapshot, and was each better, the same "
                 "or worse than the one before?", "work_quality_history_v1",
                 [charts.line_chart("work-chart", "Overall score (0-1) of the latest snapshots, per target",
                                    "Oldest to newest; a series per target", [f"{r['at']:%m-%d}" for r in ordered],
                                    series, y_min=0, y_max=1, width=700, height=210)],
                 [Table(None, [Column("snapshot_id", "snapshot", "snapshot"), Column("name", "target"),
                               Column("kind", "kind"), Column("at", "at", "when"), Column("run_id", "run id"),
                               Column("state", "state"),
                               Column("overall", "overall (0-1)", "score"), Column("verdict", "vs previous"),
                               Column("regression", "regression", "bool"), Column("cost_usd", "run USD", "usd")],
                        rows)])


def failed(conn: psycopg.Connection, filters: Filters, suites: tuple[str, ...] = ("brain_eval",)) -> Panel:
    """The failed brain-eval runs, then every run of the suites the reader may read that was not completed
    whole: open (with its deadline), abandoned (past it: a fail, before anything closes it) or cancelled."""
    rows = dicts(conn, QUERIES["panel_failed"], filters.params())
    unfinished = sorted((r for suite in suites for r in dicts(conn, QUERIES[f"panel_unfinished_{suite}"], filters.params())),
                        key=lambda r: r["created_at"], reverse=True)
    return Panel("failed", "Failed runs", "Which runs were decided fail, newest first, and why? Which runs are open, "
                 "or were abandoned or cancelled before completing whole?",
                 "brain_eval_log (decision, started_at DESC); brain_eval_run_state_v1, takes_quality_run_state_v1, "
                 "work_quality_run_state_v1",
                 tables=[Table(None, [Column("eval_run_id", "run", "run"), Column("brain_under_test", "brain"),
                                      Column("run_trigger", "trigger"), Column("started_at", "started", "when"),
                                      Column("decision_rationale", "rationale")], rows),
                         Table("Runs not completed whole (an abandoned one counts as failed in every pass rate)", [
                             Column("suite", "suite"), Column("run", "run", "suite_run"), Column("subject", "brain or target"),
                             Column("created_at", "recorded", "when"), Column("deadline_at", "deadline", "when"),
                             Column("state", "state"), Column("why", "why")], unfinished)])


# -- every panel -----------------------------------------------------------------------------------

WHY_NOT = {
    "most-failing": "not shown to a reviewer: it counts other reviewers' runs",
    "drift": "not shown to a reviewer: production traffic is none of a reviewer's",
    "beside": "not shown to a reviewer: production traffic is none of a reviewer's",
    "agreement": "not shown to a reviewer: it counts the judges' drafts on questions you were never shown",
    "takes-quality": "not shown to this login: it reads no takes-quality runs",
    "work-quality": "not shown to this login: it reads no work-quality snapshots",
}


def load(conn: psycopg.Connection, filters: Filters) -> Dashboard:
    """Every panel the reader may read, for the filters: each is read in the same transaction."""
    may = dicts(conn, QUERIES["readable"])[0]
    names = {}
    if may["reviewer_names"]:
        names = {r["reviewer_user_id"]: r["display_name"] for r in dicts(conn, QUERIES["reviewer_names"])}
    panels: list[Panel] = []
    readers: list[tuple[str, Callable[[], Panel]]] = [
        ("trend", lambda: trend(conn, filters)), ("most-failing", lambda: most_failing(conn, filters)),
        ("stale-fixture", lambda: stale_fixture(conn, filters)), ("calibration", lambda: calibration(conn, filters, names)),
        ("cost", lambda: cost(conn, filters)), ("drift", lambda: drift(conn, filters)),
        ("beside", lambda: beside(conn, filters)),
        ("agreement", lambda: agreement(conn, filters)), ("takes-quality", lambda: takes_quality(conn, filters)),
        ("work-quality", lambda: work_quality(conn, filters)),
        ("failed", lambda: failed(conn, filters, ("brain_eval",) + (("takes_quality",) if may["takes_quality"] else ())
                                  + (("work_quality",) if may["work_quality"] else ()))),
    ]
    for key, read in readers:
        allowed = may[key.replace("-", "_")]
        panels.append(read() if allowed else Panel(key, TITLES[key], "", "", unavailable=WHY_NOT.get(
            key, "not shown to this login: it may not read it")))
    whole: date = may["whole_months_from"]
    whose = "your own " if may["reviewer_only"] else ""
    coverage = ("Aggregates count every completed run the ledger retains." if may["every_month"] else
                f"Aggregates (most-failing, stale-fixture totals, calibration, cost, agreement) count {whose}runs "
                f"recorded from {whole:%Y-%m} on: the months wholly in the 24-month hot tier. Per-run panels show "
                f"every run you may read.")
    empty = Dashboard.empty
    if may["failed"]:
        counted = dicts(conn, QUERIES["completed_runs_readable"])[0]
        if not counted["completed"]:
            empty = ("No completed run you may read yet: the panels count completed runs only"
                     + (f" ({counted['runs']} of yours {'is' if counted['runs'] == 1 else 'are'} still open: review and "
                        "complete one to see it here)." if may["reviewer_only"] and counted["runs"] else "."))
            coverage = empty + " " + coverage
    return Dashboard(filters, known_brains(conn), panels, coverage, empty)


TITLES = {"trend": "Per-brain trend", "most-failing": "Most-failing questions", "stale-fixture": "Stale-fixture pass rate",
          "calibration": "Reviewer calibration", "cost": "Cost per run over time",
          "drift": "Production-versus-eval prompt drift", "beside": "Production beside eval",
          "agreement": "Judges against reviewers",
          "takes-quality": "Takes-quality trend by rubric epoch", "work-quality": "Work-quality history per target",
          "failed": "Failed runs"}
