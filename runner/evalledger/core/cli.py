"""The core's commands: the target registry (what is under test, which every suite's runs name)."""

from __future__ import annotations

import click

from . import db, output, queries
from .errors import DatabaseRefusal, EvalledgerError
from .options import database_option, echo_listing, format_options


# -- targets -------------------------------------------------------------------------------------


@click.group("target")
def target_group():
    """Register and list what is under test (brains, bots, features)."""


@target_group.command("add")
@click.argument("target_id")
@click.option("--kind", type=click.Choice(["brain", "bot", "feature", "corpus"]), default="brain", show_default=True,
              help="What the target is.")
@click.option("--name", "display_name", required=True, help="Human-readable name (one line, at most 200 characters).")
@click.option("--family", "model_family", help="Model family of the target (flags same-family judges).")
@database_option
def target_add(target_id, kind, display_name, model_family):
    """Register TARGET_ID (e.g. AGT-903): a new brain is a row, not a migration.

    TARGET_ID is 1-16 letters, digits, '.', '_' or '-'. Registering the same target again is
    "already registered"; a target is never edited, so other fields for an existing id are refused.
    """

    from .reading import fetch, records

    display_name = " ".join(display_name.split())
    if not display_name or len(display_name) > 200:
        raise EvalledgerError(f"--name: must be 1 to 200 characters on one line, got {len(display_name)}")
    wanted = {"target_id": target_id, "kind": kind, "display_name": display_name, "model_family": model_family}
    try:
        with db.transaction("owner") as conn:
            added = conn.execute(queries.get("add_target_once"), wanted).fetchone()
            columns, rows = fetch(conn, queries.get("target_row"), {"target_id": target_id})
    except DatabaseRefusal as exc:
        if exc.constraint == "target_id_format" or exc.sqlstate == "22001":  # 22001: longer than the column
            raise EvalledgerError(f"TARGET_ID {target_id!r}: use 1-16 letters, digits, '.', '_' or '-', starting "
                                  "with a letter or digit") from None
        raise
    if added:
        click.echo(f"registered {target_id}")
        return
    found = records(columns, rows)[0]
    differs = [k for k in ("kind", "display_name", "model_family") if found[k] != wanted[k]]
    if differs:
        raise EvalledgerError(f"{target_id} is already registered with another {', '.join(differs)} "
                              f"({', '.join(f'{k} {found[k]!r}' for k in differs)}): targets are not edited")
    click.echo(f"already registered: {target_id}")


@target_group.command("list")
@format_options
@database_option
def target_list(fmt):
    """List registered targets (as an auditor)."""
    echo_listing("auditor", queries.get("target_rows"), None, fmt=fmt, kind="targets",
                 empty="no targets registered (evalledger target add)")


@target_group.command("show")
@click.argument("target_id")
@format_options
@database_option
def target_show(target_id, fmt):
    """Show the registered target TARGET_ID."""
    from .reading import fetch

    with db.transaction("auditor") as conn:
        columns, rows = fetch(conn, queries.get("target_row"), {"target_id": target_id})
    if not rows:
        raise EvalledgerError(f"no target {target_id!r} (evalledger target list)")
    click.echo(output.listing(fmt, "targets", columns, rows), nl=False)


COMMANDS = [target_group]
