"""Options shared by many commands, as decorators (one definition, one help text)."""

from __future__ import annotations

import functools
import math

import click

from . import db
from evalledger.judges import JUDGE_MODES


def database_option(command):
    """--database-url, shared by every command that touches the database."""

    @click.option(
        "--database-url",
        metavar="URL",
        help="PostgreSQL 14+ to use instead of the embedded server (default: $DATABASE_URL).",
    )
    @functools.wraps(command)
    def wrapper(*args, database_url=None, **kwargs):
        # Given before the subcommand, the root group has set it already: keep that.
        if database_url is not None:
            db.use_database_url(database_url)
        return command(*args, **kwargs)

    return wrapper


def read_url_option(command):
    """--read-url, for commands that only read: a standby serves them (default: $DATABASE_READ_URL)."""

    @click.option(
        "--read-url",
        metavar="URL",
        help="PostgreSQL to read from, a standby say (default: --database-url, else $DATABASE_READ_URL, "
             "else $DATABASE_URL, else the embedded server).",
    )
    @functools.wraps(command)
    def wrapper(*args, read_url=None, **kwargs):
        if read_url is not None:
            db.use_read_url(read_url)
        return command(*args, **kwargs)

    return wrapper


class Number(click.ParamType):
    """A finite number (NaN and infinities refused) within bounds; the message names the flag."""

    name = "number"

    def __init__(self, minimum: float | None = None, above: bool = False, integer: bool = False):
        self.minimum, self.above, self.integer = minimum, above, integer
        self.name = "integer" if integer else "number"

    def convert(self, value, param, ctx):
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            number = value
        else:
            try:
                number = int(value, 10) if self.integer else float(value)
            except (TypeError, ValueError):
                self.fail(f"{value!r} is not {'an integer' if self.integer else 'a number'}", param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number", param, ctx)
        if self.minimum is not None and (number <= self.minimum if self.above else number < self.minimum):
            bound = f"more than {self.minimum:g}" if self.above else f"{self.minimum:g} or more"
            self.fail(f"must be {bound}, got {value}", param, ctx)
        return number


BUDGET_HELP = ("Spend cap in USD: no call is made whose projected cost would pass it, and every panel model "
               "needs a price in pricing.json. 0 is a zero budget (nothing that costs money is called), "
               "not 'no cap'; leave the flag out for no cap.")


def panel_options(command):
    """How a judge panel is called: shared by every judged suite's `run` and by `regress`.

    Every value is checked here, before the command writes anything or imports an SDK.
    """
    # The same flags decide the same way on a terminal and in a pipe: no default depends on isatty.
    options = (
        click.option("--cycles", type=Number(1, integer=True), default=1, show_default=True, metavar="N",
                     help="Up to N panel calls; stop early on PASS or INCONCLUSIVE."),
        click.option("--budget-usd", type=Number(0), default=None, metavar="USD", help=BUDGET_HELP),
        click.option("--concurrency", type=Number(1, integer=True), default=8, show_default=True, metavar="N",
                     help="Judge calls in flight at once (1 or more)."),
        click.option("--timeout", "timeout_s", type=Number(0, above=True), default=120.0, show_default=True,
                     metavar="SECONDS", help="Time limit of one HTTP attempt (more than 0)."),
        click.option("--retries", "max_retries", type=Number(0, integer=True), default=3, show_default=True,
                     metavar="N", help="Retries of a 429, 5xx, timeout or connection error (honouring "
                                       "Retry-After; 0 or more)."),
        click.option("--judges", type=click.Choice(JUDGE_MODES), default="auto", show_default=True,
                     help="auto: live judges; a panel model without its API key stops the run before anything is "
                          "written, naming the key. recorded: the replies recorded with evalledger's demo (written "
                          "for the demo's corpus). live: as auto."),
    )
    for option in reversed(options):
        command = option(command)
    return command


FORMATS = ("text", "csv", "json")


def format_options(command):
    """--format text|csv|json and its short form --json, for every command that prints data.

    The command receives fmt. JSON is a stable, documented shape (schema_version 1) with a JSON
    Schema shipped in the package; CSV has a header row; text is an aligned table.
    """

    def pick(ctx, param, value):
        if value and ctx.params.get("fmt") not in (None, "text", "json"):
            raise click.BadParameter("--json and --format csv ask for two formats: give one", ctx, param)
        return value

    command = click.option("--json", "as_json", is_flag=True, callback=pick,
                           help="Print JSON (the same as --format json).")(command)
    command = click.option("--format", "fmt", type=click.Choice(FORMATS), default="text", show_default=True,
                           is_eager=True, help="text: an aligned table; csv: a header row, then one line per row; "
                                               "json: the documented JSON shape.")(command)

    @functools.wraps(command)
    def wrapper(*args, fmt="text", as_json=False, **kwargs):
        return command(*args, fmt="json" if as_json else fmt, **kwargs)

    return wrapper


class When(click.ParamType):
    """A point in time: a duration back from now (45s, 30m, 24h, 7d, 2w) or an ISO 8601 timestamp."""

    name = "when"

    def convert(self, value, param, ctx):
        import re
        from datetime import datetime, timedelta, timezone

        if isinstance(value, datetime):
            return value
        text = str(value).strip()
        match = re.fullmatch(r"(\d{1,6})([smhdw])", text)
        now = datetime.now(timezone.utc)
        try:
            if match:
                units = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days", "w": "weeks"}
                found = now - timedelta(**{units[match.group(2)]: int(match.group(1))})
            else:
                found = datetime.fromisoformat(text)
                found = found.replace(tzinfo=timezone.utc) if found.tzinfo is None else found
        except (ValueError, OverflowError):
            self.fail(f"{value!r} is neither a duration (45s, 30m, 24h, 7d, 2w) nor an ISO 8601 timestamp", param, ctx)
        if found.year < 1970:
            self.fail(f"{value!r} reaches back before 1970", param, ctx)
        return found


def echo_listing(role: str, query: str, params: dict | None, *, fmt: str, kind: str, empty: str = "",
                 tone_column: str | None = None, quiet: bool = False) -> list[tuple]:
    """Run one named query as role and print its rows in fmt (with --quiet, only the first
    column, one per line); the rows, for a command that says more about them."""
    from . import output
    from .reading import fetch

    with db.transaction(role) as conn:
        columns, rows = fetch(conn, query, params)
    if quiet:
        click.echo("".join(f"{row[0]}\n" for row in rows), nl=False)
    else:
        click.echo(output.listing(fmt, kind, columns, rows, empty=empty, tone_column=tone_column), nl=False)
    return rows
