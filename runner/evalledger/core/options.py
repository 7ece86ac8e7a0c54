"""Options shared by many commands, as decorators (one definition, one help text)."""

from __future__ import annotations

import functools
import sys

import click

from . import db
from evalledger.judges import JUDGE_MODES


def database_option(command):
    """--database-url, shared by every command that touches the database."""

    @click.option(
        "--database-url",
        envvar="DATABASE_URL",
        metavar="URL",
        help="PostgreSQL 14+ to use instead of the embedded server (default: $DATABASE_URL).",
    )
    @functools.wraps(command)
    def wrapper(*args, database_url=None, **kwargs):
        db.use_database_url(database_url)
        return command(*args, **kwargs)

    return wrapper


BUDGET_HELP = ("Spend cap in USD: no call is made whose projected cost would pass it, and every panel model "
               "needs a price in pricing.json. 0 is a zero budget (nothing that costs money is called), "
               "not 'no cap'; leave the flag out for no cap.")


def panel_options(command):
    """How a judge panel is called: shared by every judged suite's `run` and by `regress`."""

    @click.option("--cycles", type=int, default=None,
                  help="Up to N panel calls; stop early on PASS or INCONCLUSIVE. [default: 3 on a terminal, else 1]")
    @click.option("--budget-usd", type=float, default=None, metavar="USD", help=BUDGET_HELP)
    @click.option("--concurrency", type=int, default=8, show_default=True, help="Judge calls in flight at once.")
    @click.option("--timeout", "timeout_s", type=float, default=120.0, show_default=True, metavar="SECONDS",
                  help="Time limit of one HTTP attempt.")
    @click.option("--retries", "max_retries", type=int, default=3, show_default=True,
                  help="Retries of a 429, 5xx, timeout or connection error (honouring Retry-After).")
    @click.option("--judges", type=click.Choice(JUDGE_MODES), default="auto", show_default=True,
                  help="auto: live where the provider's API key is set, else the recorded replies shipped "
                       "with evalledger; live or recorded to insist.")
    @functools.wraps(command)
    def wrapper(*args, cycles=None, **kwargs):
        if cycles is None:
            cycles = 3 if sys.stdout.isatty() else 1
        return command(*args, cycles=cycles, **kwargs)

    return wrapper
