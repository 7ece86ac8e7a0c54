"""`evalledger report`: the dashboards in one self-contained HTML file."""

from __future__ import annotations

from pathlib import Path

import click

from evalledger.core.options import database_option, read_url_option

from .filters import TRIGGERS


@click.command("report")
@click.option("--brain", metavar="TARGET_ID", help="Only this brain's runs (e.g. AGT-902).")
@click.option("--since", metavar="YYYY-MM", help="Only runs started from this month on (a date YYYY-MM-DD names "
                                                 "its month: panels count whole UTC months).")
@click.option("--until", metavar="YYYY-MM", help="Only runs started up to the end of this month.")
@click.option("--trigger", type=click.Choice(TRIGGERS), help="Only runs of this trigger.")
@click.option("--as", "as_role", type=click.Choice(["auditor", "revops"]), default="auditor", show_default=True,
              help="Read as an auditor (everything retained, and the journal's state) or RevOps (the 24-month hot "
                   "tier).")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), metavar="FILE",
              help="Write the report to FILE (whole, or not at all); default: standard output.")
@database_option
@read_url_option
def report_command(brain, since, until, trigger, as_role, out):
    """Write the dashboards as one self-contained HTML file: every panel's chart and table.

    What an auditor attaches to a finding or a quarterly review: inline CSS and SVG charts, no
    script and nothing fetched from a network, readable without colour. It states who read it
    (the role, under its own row-level security), the filters, and the ledger's state: the latest
    sealed block of the tamper-evidence journal with its hashes, or that there is no journal.
    Read from a standby (--read-url, or DATABASE_READ_URL), it shows the primary as the standby has
    replayed it, and says so.
    """
    from evalledger.core import db

    from . import panels, report
    from .filters import Filters

    with db.transaction(as_role, url=db.read_url()) as conn:
        known = panels.known_brains(conn)
    filters = Filters.parse(brain, since, until, trigger, known, ("--brain", "--since", "--until", "--trigger"))
    html, board, state = report.write(filters, as_role, out)
    if out is None:
        click.echo(html, nl=False)
        return
    shown = sum(1 for p in board.panels if not p.unavailable)
    sealed = (f"latest sealed block {state['block']['block_id']}" if state.get("block")
              else "no journal" if not state["installed"] else "journal not sealed or not readable as this role")
    standby = "; read on a standby" if state["standby"] else ""
    click.echo(f"wrote {out}: {shown} panels as {db.ROLES[as_role]}, {board.filters.describe()}; {sealed}{standby}")


COMMANDS = [report_command]
