"""Panels as HTML: the same markup in the web app's dashboards and in the report, with a cell for
every value (its exact value in data-value, for a reader's tools and the tests; a rounded one for
the eye) and links into the drill-down where the page is the web app's."""

from __future__ import annotations

import json
from datetime import date, datetime, timezone
from decimal import Decimal

import jinja2
from markupsafe import Markup

from evalledger.core.paths import package_path, read_package_text

from .panels import Panel

DIGITS = {"rate": 4, "kappa": 4, "score": 4, "pct": 2, "usd": 4, "hours": 2}


def exact(value) -> str:
    """A value as its exact text: what data-value holds."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (datetime, date)):
        return value.isoformat()
    if isinstance(value, Decimal):
        return format(value, "f")
    if isinstance(value, (list, tuple)):
        return ",".join(exact(v) for v in value)
    if isinstance(value, dict):
        return json.dumps(value, sort_keys=True, default=str)
    return str(value)


def exact_number(value) -> str:
    """An exact number without its trailing zeros (0.93333333333333333333, 0 rather than 0E-20)."""
    if value is None:
        return ""
    if isinstance(value, Decimal):
        text = format(value.normalize(), "f")
        return "0" if text in ("-0", "0E-20") else text
    return str(value)


def utc(value: datetime | None) -> str:
    """A moment to the second, in UTC: what an audit trail's order rests on."""
    return "—" if value is None else value.astimezone(timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")


def shown(value, kind: str) -> str:
    """A value as a person reads it in a cell: numbers rounded for display, times in UTC."""
    if value is None:
        return "—"
    if kind == "bool":
        return "yes" if value else "no"
    if kind in DIGITS and isinstance(value, (int, float, Decimal)):
        text = f"{float(value):.{DIGITS[kind]}f}"
        return f"${text}" if kind == "usd" else text
    if kind == "when" and isinstance(value, datetime):
        return (value if value.tzinfo is None else value.astimezone(timezone.utc)).strftime("%Y-%m-%d %H:%M UTC")
    if kind == "month" and isinstance(value, date):
        return f"{value:%Y-%m}"
    if kind == "hash":
        return str(value)[:12] + "…"
    if kind in ("run",):
        return str(value)[:8]
    if kind == "list":
        return ", ".join(str(v) for v in value)
    return str(value)


def environment() -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(package_path("templates", package=__package__))),
                             autoescape=True, trim_blocks=True, lstrip_blocks=True)
    env.filters["exact"] = exact
    env.filters["shown"] = shown
    return env


ENV = environment()


def panels_markup(panels: list[Panel], links: bool, empty: str = "No rows for these filters.") -> Markup:
    """Every panel's section: heading, what it answers, its charts, notes and tables; an empty
    table says empty (why, when the dashboard knows: no completed run to count)."""
    return Markup(ENV.get_template("panels.html").render(panels=panels, links=links, empty=empty))


def stylesheet() -> str:
    """The panels' stylesheet (the web app serves it; the report inlines it)."""
    return read_package_text("static", "dashboards.css", package=__package__)
