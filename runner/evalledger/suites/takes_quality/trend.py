"""takes-quality over time: the trend table (seed 000) and the regress comparison of two receipts."""

from __future__ import annotations

from dataclasses import dataclass

from evalledger.core import db
from evalledger.core.errors import EvalledgerError

from . import store

TREND_RULE = "─" * 77


def trend_rows(limit: int, rubric_version: str | None) -> list[dict]:
    """Completed runs, newest rubric epoch first, newest run first within an epoch."""
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
        lines.append(f"{row['ts'][:19]:<22}{row['rubric_version']:<10}{row['verdict']:<15}{overall:<10}"
                     f"{'$' + format(row['cost_usd'], '.2f'):<12}{row['corpus_sha8']}{marker}")
    return "\n".join(lines) + "\n"


def trend_json(rows: list[dict]) -> dict:
    """Seed 000's --json shape (rubric_sha8 and judges added per row)."""
    return {"schema_version": 1, "rows": [
        {"id": r["id"], "ts": r["ts"], "rubric_version": r["rubric_version"], "verdict": r["verdict"],
         "overall_score": r["overall_score"], "cost_usd": r["cost_usd"], "corpus_sha8": r["corpus_sha8"],
         "rubric_sha8": r["rubric_sha8"], "judges": r.get("judges", "live")} for r in rows]}


@dataclass
class Comparison:
    """A regress comparison: per dimension (and overall) baseline, now, delta, regressed."""

    rows: list[tuple[str, float | None, float | None, float | None, bool]]
    warnings: list[str]
    comparable: bool

    @property
    def regressed(self) -> list[str]:
        return [name for name, *_, bad in self.rows if bad]


def compare(baseline: dict, now: dict, threshold: float) -> Comparison:
    """Which dimension means (and the overall) dropped by more than threshold."""
    warnings = [f"{name} differs: {a} (baseline) vs {b} (now)"
                for name, a, b in (("corpus_sha8", baseline["corpus"]["corpus_sha8"], now["corpus"]["corpus_sha8"]),
                                   ("prompt_sha8", baseline["prompt_sha8"], now["prompt_sha8"]),
                                   ("rubric_sha8", baseline["rubric_sha8"], now["rubric_sha8"]))
                if a != b]
    rows = []
    comparable = True
    pairs = [(d, (baseline["scores"].get(d) or {}).get("mean"), (now["scores"].get(d) or {}).get("mean"))
             for d in baseline["scores"]]
    pairs.append(("overall", baseline.get("overall_score"), now.get("overall_score")))
    for name, before, after in pairs:
        if not isinstance(before, (int, float)) or not isinstance(after, (int, float)):
            comparable = False
            rows.append((name, before, after, None, False))
            continue
        delta = round(after - before, 4)
        rows.append((name, before, after, delta, -delta > threshold))
    return Comparison(rows, warnings, comparable)


def comparison_text(cmp: Comparison, threshold: float) -> str:
    fmt = lambda v: "-" if v is None else f"{v:.2f}"  # noqa: E731
    lines = [f"{'dimension':<22}{'baseline':>9}{'now':>9}{'delta':>9}"]
    for name, before, after, delta, bad in cmp.rows:
        sign = "" if delta is None else ("+" if delta >= 0 else "")
        lines.append(f"{name:<22}{fmt(before):>9}{fmt(after):>9}{sign + fmt(delta) if delta is not None else '-':>9}"
                     f"{'  regression' if bad else ''}")
    return "\n".join(lines) + "\n"
