"""What every command prints, shaped one way: plurals, colour, tables, CSV and JSON.

No click here: the CLI edges echo what these functions return. Colour is ANSI escapes that
click.echo strips when stdout is not a terminal; NO_COLOR (any non-empty value) turns it off
even on one (https://no-color.org).
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
from collections.abc import Iterable, Sequence
from datetime import date, datetime
from decimal import Decimal
from uuid import UUID

_ANSI = {"green": "\x1b[32m", "red": "\x1b[31m", "yellow": "\x1b[33m", "bold": "\x1b[1m"}
_RESET = "\x1b[0m"

# The tone of every verdict and level the ledger prints: good news green, bad red, "a person
# must look" yellow.
TONES = {
    "pass": "green", "pass_with_notes": "green", "ok": "green", "no regression": "green",
    "fail": "red", "regression": "red", "better": "green", "worse": "red",
    "inconclusive": "yellow", "conditional": "yellow", "warn": "yellow", "warning": "yellow",
    "in progress": "yellow", "open": "yellow",
}


def money(usd: float | None) -> str:
    """A cost: '$0.0123', or what is known when the model has no price (never a made-up $0)."""
    return "cost unknown (no price in pricing.json)" if usd is None else f"${usd:.4f}"


def plural(n: int, word: str, many: str | None = None) -> str:
    """'1 row', '2 rows', '0 rows' (many: the plural when it is not word + 's')."""
    return f"{n} {word if n == 1 else (many or word + 's')}"


def interval(label: str, u: dict | None, *, percent: bool, counted: str, places: int = 2) -> str:
    """One aggregate beside a verdict, as the database computed its uncertainty (docs/statistics.md):
    `hallucination rate 0.0% (95% CI 0.0–5.8%, 50 claims in 30 questions)`. counted says what n and
    clusters count, e.g. "{n} claims in {clusters} questions"; a rate is shown in percent."""
    if u is None:
        return f"{label} n/a (nothing to measure)"

    def shown(x: float) -> str:
        return f"{100 * x:.1f}" if percent else f"{x:.{places}f}"

    unit = "%" if percent else ""
    ci = u.get("ci95")
    span = f"95% CI {shown(ci[0])}–{shown(ci[1])}{unit}" if ci else "no interval"
    n = u["n"]
    where = counted.format(n=int(n) if float(n).is_integer() else n, clusters=u["clusters"])
    line = f"{label} {shown(u['estimate'])}{unit} ({span}, {where})"
    criterion = u.get("criterion")
    if criterion and criterion.get("bound") is not None:
        side = "upper" if criterion["op"] == "<=" else "lower"
        line += (f"; criterion {criterion['op']} {shown(criterion['threshold'])}{unit}: "
                 f"{side} bound {shown(criterion['bound'])}{unit}")
    return line


def paired(rows: Sequence[dict], *, items: str, places: int = 3) -> list[str]:
    """Each row of a paired comparison as the database computed it (paired_object_v1, docs/statistics.md),
    one line a row, the names padded to one width: `overall -0.667 (stderr 0.333, 95% CI -1.320 to -0.013; 3 shared judges)`, McNemar's
    exact p for pass/fail items, and then every item one side has and the other has not, by name."""
    lines = []
    width = max((len(row["dimension"]) for row in rows), default=0)
    for row in rows:
        shared, name = row["shared"], row["dimension"].ljust(width)
        if not shared:
            text = f"{name} nothing shared"
        elif row.get("ci95"):
            lo, hi = row["ci95"]
            text = (f"{name} {row['mean_difference']:+.{places}f} (stderr {row['stderr']:.{places}f}, "
                    f"95% CI {lo:+.{places}f} to {hi:+.{places}f}; {plural(shared, 'shared ' + items)})")
        else:
            text = (f"{name} {row['mean_difference']:+.{places}f} (no interval: "
                    f"{plural(shared, 'shared ' + items)}, an interval needs 2)")
        if row.get("mcnemar_p") is not None:
            text += f"; McNemar exact p {row['mcnemar_p']:.3g}"
        if row.get("regressed"):
            text += "  regression"
        lines.append(text)
        for side, key in (("A", "only_a"), ("B", "only_b")):
            if row.get(key):
                lines.append(f"  not shared, only in {side}: {', '.join(row[key])}")
    return lines


def colour_wanted() -> bool:
    """False when NO_COLOR is set to anything but the empty string."""
    return not os.environ.get("NO_COLOR")


def paint(text: str, colour: str | None) -> str:
    """text in colour (a name of _ANSI), or as it is when colour is None or unwanted."""
    if not colour or not colour_wanted():
        return text
    return f"{_ANSI[colour]}{text}{_RESET}"


def verdict(word: str | None, shown: str | None = None) -> str:
    """A verdict, decision or level coloured by its tone; shown is the text (default: word)."""
    text = shown if shown is not None else str(word)
    return paint(text, TONES.get(str(word).lower()) if word is not None else None)


_VERDICT_WORD = re.compile(r"(?<![\w-])(pass_with_notes|pass|fail|inconclusive|conditional|PASS|FAIL|INCONCLUSIVE)(?![\w-])")


def verdicts_in(line: str) -> str:
    """Every verdict word of one line of text coloured (for text built by library code)."""
    return _VERDICT_WORD.sub(lambda m: verdict(m.group(1)), line)


def warning(text: str) -> str:
    """A warning line: 'warning: ...' with the word coloured."""
    return f"{paint('warning', TONES['warning'])}: {text}"


# -- data: tables, CSV and JSON ----------------------------------------------------------------


def plain(value) -> object:
    """A value as JSON holds it: timestamps ISO 8601, decimals as numbers, UUIDs as strings."""
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, Decimal):
        return float(value)
    if isinstance(value, UUID):
        return str(value)
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return value


def to_json(document) -> str:
    """A document as the indented JSON every --json prints (keys in the order given)."""
    return json.dumps(plain(document), indent=2, ensure_ascii=False) + "\n"


# How many decimal places a table cell shows of a decimal stored to more (rounding is for display:
# --json and CSV keep every digit).
CELL_DECIMALS = 6


def cell(value) -> str:
    """One table cell: '-' for nothing, timestamps to the second, JSON for structures."""
    if value is None:
        return "-"
    if isinstance(value, datetime):
        return value.strftime("%Y-%m-%d %H:%M:%S")
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, (dict, list)):
        return json.dumps(plain(value), ensure_ascii=False, separators=(",", ":"))
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, Decimal) and value.is_finite() and -value.as_tuple().exponent > CELL_DECIMALS:
        # An unrounded quotient the database keeps exact (a recall of 1.00000000000000000000, a
        # minimum of 0E-20): a table shows CELL_DECIMALS places at most, trailing zeros dropped; a
        # figure given to fewer places (2.50 hours, 0.0125 USD) is shown as stored.
        text = format(value.quantize(Decimal(1).scaleb(-CELL_DECIMALS)), "f").rstrip("0").rstrip(".")
        return "0" if text in ("", "-0") else text
    return " ".join(str(value).split())


def table(columns: Sequence[str], rows: Iterable[Sequence], max_width: int = 60,
          tone_column: str | None = None) -> str:
    """An aligned text table with a header; cells longer than max_width are cut with '…'.

    tone_column: a column whose values are verdicts, coloured by their tone.
    """
    shown = []
    for row in rows:
        cells = [cell(v) for v in row]
        shown.append([c if len(c) <= max_width else c[:max_width - 1] + "…" for c in cells])
    widths = [max([len(c)] + [len(r[i]) for r in shown]) for i, c in enumerate(columns)]
    toned = columns.index(tone_column) if tone_column in columns else None

    def line(cells, header=False):
        parts = []
        for i, c in enumerate(cells):
            padded = c.ljust(widths[i]) if i < len(cells) - 1 else c
            parts.append(verdict(c, padded) if i == toned and not header else padded)
        return "  ".join(parts).rstrip() + "\n"

    return line(list(columns), header=True) + "".join(line(r) for r in shown)


def to_csv(columns: Sequence[str], rows: Iterable[Sequence]) -> str:
    """RFC 4180 CSV with a header row; structures as JSON, nothing as an empty field."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(columns)
    for row in rows:
        writer.writerow(["" if v is None else json.dumps(plain(v), ensure_ascii=False) if isinstance(v, (dict, list))
                         else plain(v) for v in row])
    return buffer.getvalue()


def listing(fmt: str, kind: str, columns: Sequence[str], rows: Sequence[Sequence], *, empty: str = "",
            tone_column: str | None = None, max_width: int = 60) -> str:
    """A list of rows in one of the formats: 'text' (a table, or `empty` when there are none),
    'csv', or 'json': {"schema_version": 1, "kind": kind, "rows": [{column: value}]}."""
    if fmt == "json":
        return to_json({"schema_version": 1, "kind": kind, "rows": [dict(zip(columns, r)) for r in rows]})
    if fmt == "csv":
        return to_csv(columns, rows)
    if not rows and empty:
        return empty + "\n"
    return table(columns, rows, max_width=max_width, tone_column=tone_column)
