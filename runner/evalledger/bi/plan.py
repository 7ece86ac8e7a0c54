"""`evalledger plan`: what the next run of each suite can detect, as the database computed it
(plan_v1, docs/statistics.md "Planning"); this module only shapes its rows for a reader."""

from __future__ import annotations

from collections.abc import Sequence

SUITES = ("brain-eval", "takes-quality", "work-quality")
COLUMNS = ("suite", "subject", "measure", "runs", "n", "sd", "mde", "threshold", "detectable", "effect", "needed_n")


def unit(suite: str, measure: str) -> str:
    """What one unit of a measure is: a brain-eval run samples questions (claims for the
    hallucination rate); a judged suite's run, its judges' calls."""
    if suite == "brain-eval":
        return "claims" if measure == "hallucination_rate" else "questions"
    return "judges"


def figure(x: float | None) -> str:
    """A number as a reader wants it: three significant figures (the exact value is in --json)."""
    return "-" if x is None else f"{x:.3g}"


def text(rows: Sequence[dict], effect: float | None) -> str:
    """The plan, one block per suite and subject, one line per measure."""
    lines: list[str] = []
    shown = None
    for r in rows:
        if (r["suite"], r["subject"]) != shown:
            shown = (r["suite"], r["subject"])
            if lines:
                lines.append("")
            runs = max(x["runs"] for x in rows if (x["suite"], x["subject"]) == shown)
            lines.append(f"{r['suite']} {r['subject']} (from its last {runs} completed run{'s' if runs != 1 else ''})")
        word = unit(r["suite"], r["measure"])
        if r["mde"] is None:
            line = f"  {r['measure']}: no spread in these runs to plan from ({r['n']} {word} in the latest)"
        else:
            line = (f"  {r['measure']}: with {r['n']} {word} the next run detects a drop of {figure(r['mde'])} "
                    f"(80% power, 5% two-sided; sd {figure(r['sd'])})")
            if r["threshold"] is not None:
                line += (f"; its regression threshold {figure(r['threshold'])} is "
                         + ("detectable" if r["detectable"] else "NOT detectable"))
            if effect is not None:
                line += f"; a drop of {figure(effect)} needs {r['needed_n']} {word}"
        lines.append(line)
    return "\n".join(lines) + "\n"

