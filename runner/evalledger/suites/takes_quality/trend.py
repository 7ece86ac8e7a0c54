"""takes-quality over time: the trend table (seed 000) and the regress comparison the database made."""

from __future__ import annotations

from evalledger.core import db
from evalledger.core.errors import EvalledgerError

from . import store

TREND_RULE = "─" * 77


def trend_rows(limit: int, rubric_version: str | None) -> list[dict]:
    """Completed runs (and open ones past their deadline: abandoned, fail), newest rubric epoch first,
    newest run first within an epoch."""
    if limit < 1:
        raise EvalledgerError(f"--limit must be at least 1, got {limit}")
    with db.transaction("runner") as conn:
        return store.trend(conn, limit, rubric_version)


def trend_text(rows: list[dict]) -> str:
    """Seed 000's plain table; a blank line separates rubric epochs."""
    lines = [f"{'ts':<22}{'rubric':<10}{'verdict':<15}{'overall':<10}{'cost':<12}corpus", TREND_RULE]
    previous = None
    for row in rows:
        epoch = (row["rubric_version"], row["rubric_sha8"])
        if previous is not None and epoch != previous:
            lines.append("")
        previous = epoch
        overall = "-" if row["overall_score"] is None else f"{row['overall_score']:.1f}"
        # A run judged by recorded replies never reads like a live one.
        marker = f"  ({row['judges']} judges)" if row.get("judges", "live") != "live" else ""
        # A run cancelled or abandoned is a fail that no judge decided.
        marker += f"  ({row['state']})" if row.get("state", "complete") != "complete" else ""
        lines.append(f"{row['ts'][:19]:<22}{row['rubric_version']:<10}{row['verdict']:<15}{overall:<10}"
                     f"{'$' + format(row['cost_usd'], '.2f'):<12}{row['corpus_sha8']}{marker}")
    return "\n".join(lines) + "\n"


def trend_json(rows: list[dict]) -> dict:
    """Seed 000's --json shape (rubric_sha8, judges and state added per row)."""
    return {"schema_version": 1, "rows": [
        {"id": r["id"], "ts": r["ts"], "rubric_version": r["rubric_version"], "verdict": r["verdict"],
         "overall_score": r["overall_score"], "cost_usd": r["cost_usd"], "corpus_sha8": r["corpus_sha8"],
         "rubric_sha8": r["rubric_sha8"], "judges": r.get("judges", "live"), "state": r.get("state", "complete")}
        for r in rows]}


def comparison_text(compared: dict) -> str:
    """The database's comparison (takes_quality_regression_v1) as a table; it decides each row."""
    fmt = lambda v: f"{v:.2f}" if isinstance(v, (int, float)) else "-"  # noqa: E731
    lines = [f"{'dimension':<22}{'baseline':>9}{'now':>9}{'delta':>9}"]
    for row in compared["rows"]:
        delta = "-" if row["delta"] is None else f"{row['delta']:+.2f}"
        lines.append(f"{row['dimension']:<22}{fmt(row['baseline']):>9}{fmt(row['now']):>9}{delta:>9}"
                     f"{'  regression' if row['regressed'] else ''}")
    return "\n".join(lines) + "\n"
