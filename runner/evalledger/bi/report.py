"""`evalledger report`: the dashboards in one self-contained HTML file (inline CSS and SVG, no script,
no network), as one reading role sees them, with the ledger's state: its latest sealed block and
that block's hashes when the tamper-evidence journal is installed, or plainly that it is not."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

import psycopg

from evalledger.core import db, files, queries
from evalledger.core.paths import read_package_text

from . import panels, render
from .panels import dicts
from .filters import Filters

QUERIES = panels.QUERIES


def ledger_state(conn: psycopg.Connection) -> dict:
    """What the report says of the ledger's integrity: installed or not, readable or not, the latest
    sealed block (None before the first seal) and the entries recorded since."""
    found = dicts(conn, QUERIES["ledger_installed"])[0]
    if not found["readable"]:
        return {"installed": found["installed"], "readable": False, "block": None}
    state = dicts(conn, QUERIES["ledger_state"])[0]
    return {"installed": True, "readable": True, "block": state if state["block_id"] is not None else None,
            "ledger_id": state["ledger_id"], "unsealed": state["unsealed"]}


def build(conn: psycopg.Connection, filters: Filters, reader: str, where: str) -> tuple[str, panels.Dashboard, dict]:
    """The report's HTML, the dashboard it shows and the ledger state it states, read in one transaction."""
    board = panels.load(conn, filters)
    state = ledger_state(conn)
    # A standby's report is the primary as replayed so far: whoever reads it should know it may lag.
    state["standby"] = conn.execute(queries.get("in_recovery")).fetchone()[0]
    html = render.ENV.get_template("report.html").render(
        board=board, panels_html=render.panels_markup(board.panels, links=False, empty=board.empty), state=state, reader=reader,
        where=where, generated=datetime.now(timezone.utc),
        css=read_package_text("static", "report.css", package=render.__package__) + render.stylesheet())
    return html, board, state


def where(url: str) -> str:
    """The database a report was read from, as it says so: user, host (a local socket by that
    name, not its folder), port and database; never a password."""
    info = psycopg.conninfo.conninfo_to_dict(url)
    host = info.get("host") or ""
    host = "a local socket" if not host or host.startswith("/") else host
    return f"{info.get('dbname', '')} on {host}:{info.get('port', 5432)}, connected as {info.get('user', '')}"


def write(filters: Filters, role: str, out: Path | None) -> tuple[str, panels.Dashboard, dict]:
    """Build the report as role (auditor or revops), on the readers' database (db.read_url(): a
    standby, say), and write it to out (whole, or not at all), or return it for standard output
    when out is None."""
    url = db.read_url()
    with db.transaction(role, url) as conn:
        html, board, state = build(conn, filters, db.ROLES[role], where(url))
    if out is not None:
        files.write_atomic(out, html)
    return html, board, state
