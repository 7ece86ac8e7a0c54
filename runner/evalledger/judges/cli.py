"""The judge batches' commands: batch list, status, cancel."""

from __future__ import annotations

import sys

import click

from evalledger.core.errors import EXIT_OK, EvalledgerError
from evalledger.core.options import LIMIT, ROW_ID, database_option, echo_listing, format_options


@click.group("batch")
def batch_group():
    """Judge calls sent through the providers' batch APIs (a run with --batch)."""


@batch_group.command("list")
@click.option("--open", "only_open", is_flag=True, help="Only batches with requests whose result is not read yet.")
@click.option("--limit", type=LIMIT, default=50, show_default=True, help="At most N batches, newest first.")
@click.option("--quiet", "-q", is_flag=True, help="Print only the batch ids, one a line.")
@format_options
@database_option
def batch_list(only_open, limit, quiet, fmt):
    """List judge batches, newest first: the run each judges, its provider and the provider's id for
    it, its newest status, and how many of its requests succeeded or failed."""
    from .batch import QUERIES

    echo_listing("auditor", QUERIES["list_batches"], {"open": only_open, "limit": limit, "batch_id": None},
                 fmt=fmt, kind="judge_batches", empty="no judge batches match", quiet=quiet)


@batch_group.command("status")
@click.argument("batch_id", type=ROW_ID)
@database_option
def batch_status(batch_id):
    """Show judge batch BATCH_ID as the ledger has it: each status the provider reported, when, and
    each request's item and outcome (none yet: its result is not read; the run's command reads it)."""
    from evalledger.core import db, output
    from evalledger.core.reading import fetch, records

    from .batch import QUERIES

    with db.transaction("auditor") as conn:
        columns, rows = fetch(conn, QUERIES["list_batches"], {"open": None, "limit": None, "batch_id": batch_id})
        if not rows:
            raise EvalledgerError(f"no judge batch {batch_id} (evalledger batch list)")
        batch = records(columns, rows)[0]
        events = records(*fetch(conn, QUERIES["batch_events"], {"batch_id": batch_id}))
        outcomes = records(*fetch(conn, QUERIES["batch_outcomes"], {"batch_id": batch_id}))
    click.echo(f"batch {batch_id}: {batch['suite']} run {batch['run']}, {batch['provider']} "
               f"{batch['provider_batch_id'] or '(not submitted)'}, attempt {batch['attempt']}: {batch['status']}")
    for event in events:
        click.echo(f"  {output.cell(event['created_at'])}  {event['status']}"
                   + (f"  {output.cell(event['detail'])}" if event["detail"] else ""))
    click.echo("requests")
    for row in outcomes:
        said = row["outcome"] or "not read yet"
        click.echo(f"  {row['custom_id']}  {row['item']}  {said}" + (f": {row['error']}" if row["error"] else ""))
    sys.exit(EXIT_OK)


@batch_group.command("cancel")
@click.argument("batch_id", type=ROW_ID)
@database_option
def batch_cancel(batch_id):
    """Ask the provider to cancel judge batch BATCH_ID (recorded in the ledger). The run's command,
    run again, reads what the batch answered before it stopped; its other requests are recorded as
    cancelled, not retried, and the run stays open until they are judged."""
    from evalledger.core import db

    from .batch import cancel

    with db.transaction("runner") as conn:
        provider_id, status = cancel(conn, batch_id)
    click.echo(f"batch {batch_id} ({provider_id}): cancel asked, the provider says {status}")


COMMANDS = (batch_group,)
