"""`evalledger report` (the dashboards in one self-contained HTML file) and `evalledger dashboard`
(one view of the BI contract as a table)."""

from __future__ import annotations

from pathlib import Path

import click

from evalledger.core.options import Number, database_option, format_options, no_remember_option, read_url_option
from evalledger.core.queries import Queries

from .filters import TRIGGERS

QUERIES = Queries(__package__)


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
@no_remember_option
@database_option
@read_url_option
def report_command(brain, since, until, trigger, as_role, out, no_remember):
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

    from evalledger.ledger import remember

    with db.transaction(as_role, url=db.read_url()) as conn:
        remember.check_reader(conn, remember=not no_remember, database=conn.info.dbname)
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


# -- dashboards ----------------------------------------------------------------------------------

# The BI contract's views, and the suite whose named queries read each.
PANELS = {
    "brain_quarterly_trend_v1": "evalledger.suites.brain_eval",
    "most_failing_questions_v1": "evalledger.suites.brain_eval",
    "stale_fixture_pass_rate_v1": "evalledger.suites.brain_eval",
    "reviewer_calibration_v1": "evalledger.suites.brain_eval",
    "cost_per_run_v1": "evalledger.suites.brain_eval",
    "prompt_drift_v1": "evalledger.suites.brain_eval",
    "work_quality_history_v1": "evalledger.suites.work_quality",
    # The readers' side's (issue 22).
    "most_failing_questions_v2": "evalledger.suites.brain_eval",
    "stale_fixture_pass_rate_v2": "evalledger.suites.brain_eval",
    "stale_fixture_by_month_v1": "evalledger.suites.brain_eval",
    "reviewer_calibration_v2": "evalledger.suites.brain_eval",
    "cost_by_month_v1": "evalledger.suites.brain_eval",
    "prompt_drift_v2": "evalledger.suites.brain_eval",
    "judge_agreement_v1": "evalledger.suites.brain_eval",
    "takes_quality_trend_v1": "evalledger.suites.takes_quality",
    # Each verdict's uncertainty (issue 36, docs/statistics.md).
    "brain_eval_intervals_v1": "evalledger.suites.brain_eval",
    "takes_quality_intervals_v1": "evalledger.suites.takes_quality",
    "work_quality_intervals_v1": "evalledger.suites.work_quality",
    # Judge repeats (issue 36, item 4): the judges' noise beside the items' variance, and flaky items.
    "takes_quality_repeat_variance_v1": "evalledger.suites.takes_quality",
    "takes_quality_flaky_v1": "evalledger.suites.takes_quality",
    "work_quality_repeat_variance_v1": "evalledger.suites.work_quality",
    "work_quality_flaky_v1": "evalledger.suites.work_quality",
    "judge_agreement_v2": "evalledger.suites.brain_eval",
    # Replay (issue 40): drift over time per brain version, and the queries that lost the most.
    "replay_drift_v1": "evalledger.suites.replay",
    "replay_lost_most_v1": "evalledger.suites.replay",
    # Production beside eval (issue 40, item 3): a catalog question production also asked.
    "production_beside_eval_v1": "evalledger.suites.replay",
    # Replay evidence whose captured rows the retention purge took (the auditor's).
    "replay_capture_purged_v1": "evalledger.suites.replay",
}


@click.command("dashboard")
@click.argument("panel", required=False, metavar="PANEL", type=click.Choice(list(PANELS)))
@click.option("--as", "as_role", type=click.Choice(["auditor", "revops"]), default="auditor", show_default=True,
              help="Read as an auditor (everything retained) or RevOps (the last 24 months).")
@format_options
@no_remember_option
@database_option
@read_url_option
def dashboard_command(panel, as_role, fmt, no_remember):
    """Print the dashboard view PANEL of the BI contract as a table (without PANEL: list them).

    Each panel is a view BI tools query directly; this prints what the chosen role sees of it.
    """
    from evalledger.core import db, output
    from evalledger.core.reading import fetch
    from evalledger.ledger import remember

    with db.transaction(as_role, url=db.read_url()) as conn:
        remember.check_reader(conn, remember=not no_remember, database=conn.info.dbname)
        if panel is None:
            rows = [(name, conn.execute(QUERIES["panel_description"], {"panel": name}).fetchone()[0])
                    for name in PANELS]
            click.echo(output.listing(fmt, "panels", ["panel", "shows"], rows, max_width=200), nl=False)
            return
        columns, rows = fetch(conn, Queries(PANELS[panel])[f"dashboard_{panel}"])
    click.echo(output.listing(fmt, panel, columns, rows, empty=f"{panel}: no rows yet"), nl=False)


# -- plan ----------------------------------------------------------------------------------------


@click.command("plan")
@click.option("--suite", type=click.Choice(["brain-eval", "takes-quality", "work-quality"]),
              help="Only this suite (default: every suite with completed runs).")
@click.option("--drop", "effect", type=Number(0, above=True), metavar="X",
              help="Also print the sample size a drop of X needs (on the measure's own scale: 0-1 for a rate, the "
                   "rubric's scale for judges' scores).")
@click.option("--runs", type=Number(2, integer=True, maximum=10_000), default=20, show_default=True,
              help="Read each subject's last N completed runs.")
@click.option("--as", "as_role", type=click.Choice(["auditor", "revops"]), default="auditor", show_default=True,
              help="Read as an auditor (everything retained) or RevOps (the last 24 months).")
@click.option("--json", "as_json", is_flag=True, help="Print the plan as JSON (schema: core/schemas/plan.v1).")
@no_remember_option
@database_option
@read_url_option
def plan_command(suite, effect, runs, as_role, as_json, no_remember):
    """Before a run: the smallest drop it can detect, and the sample a chosen drop needs.

    For each suite's subject (a brain, a takes-quality rubric epoch, a work-quality target) and each
    measure, from its last completed runs: the spread of one unit (a question, a claim, a judge's
    score), the smallest drop between two runs of the latest run's size that a two-sided 5% test
    detects with 80% power, and whether that reaches the suite's own regression threshold. The
    database computes every number (plan_v1, docs/statistics.md "Planning").
    """
    from evalledger.core import db, output
    from evalledger.ledger import remember

    from . import plan

    with db.transaction(as_role, url=db.read_url()) as conn:
        remember.check_reader(conn, remember=not no_remember, database=conn.info.dbname)
        cur = conn.execute(QUERIES["plan"], {"suite": suite, "runs": int(runs), "effect": effect})
        rows = [dict(zip(plan.COLUMNS, r)) for r in cur]
    if as_json:
        click.echo(output.to_json({"schema_version": 1, "kind": "plan", "power": 0.8, "alpha": 0.05, "runs": int(runs),
                                   "drop": effect, "rows": rows}), nl=False)
        return
    if not rows:
        click.echo(f"no completed {suite or 'run'}{' run' if suite else ''} to plan from, as {db.ROLES[as_role]}")
        return
    click.echo(plan.text(rows, effect), nl=False)


COMMANDS = [report_command, dashboard_command, plan_command]
