"""Options shared by many commands, as decorators (one definition, one help text); how a judge panel
is called is the judges' (judges/options.py)."""

from __future__ import annotations

import functools
import math

import click

from . import db


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
    """A finite number (NaN and infinities refused) within bounds; the message names the flag.

    Every bound is checked here, so no value reaches the database that its column would refuse
    with a message naming no flag (an integer column's range, a numeric column's precision)."""

    name = "number"

    def __init__(self, minimum: float | None = None, above: bool = False, integer: bool = False,
                 maximum: float | None = None):
        self.minimum, self.above, self.integer, self.maximum = minimum, above, integer, maximum
        self.name = "integer" if integer else "number"

    def convert(self, value, param, ctx):
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            number = value
        else:
            try:
                number = int(str(value).strip(), 10) if self.integer else float(value)
            except (TypeError, ValueError):
                self.fail(f"{value!r} is not {'an integer' if self.integer else 'a number'}", param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number", param, ctx)
        low = self.minimum is not None and (number <= self.minimum if self.above else number < self.minimum)
        high = self.maximum is not None and number > self.maximum
        if low or high:
            if self.minimum is not None and self.maximum is not None and not self.above:
                bound = f"from {self.minimum:,g} to {self.maximum:,g}" if not self.integer else \
                    f"from {int(self.minimum):,} to {int(self.maximum):,}"
            elif high:
                bound = f"at most {self.maximum:,g}" if not self.integer else f"at most {int(self.maximum):,}"
            else:
                bound = f"more than {self.minimum:g}" if self.above else f"{self.minimum:g} or more"
            self.fail(f"must be {bound}, got {value}", param, ctx)
        return number


# Bounds that keep a value inside the column or parameter it becomes (integer, bigint).
INT_MAX = 2**31 - 1
BIGINT_MAX = 2**63 - 1
# At most N rows: a LIMIT.
LIMIT = Number(1, integer=True, maximum=INT_MAX)
# A row's id.
ROW_ID = Number(1, integer=True, maximum=BIGINT_MAX)


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


no_remember_option = click.option(
    "--no-remember", is_flag=True,
    help="A throwaway reader: check that the ledger still extends the newest digest this user saw (kept under "
         "$EVALLEDGER_HOME/ledger), but do not remember this one.")


def window_bound(parser: str, expected: str, *, with_text: bool = False):
    """A click callback parsing --since or --until with core.windows' parser (parse_since, parse_timestamp),
    as export and replay both take them; a bad value names what was expected. with_text: (as typed, value)."""

    def callback(ctx, param, value):
        from datetime import datetime, timezone

        from . import windows

        if value is None:
            return None
        try:
            parsed = getattr(windows, parser)(value)
        except (ValueError, OverflowError):
            raise click.BadParameter(f"{value!r} is {expected}") from None
        duration = getattr(parsed, "duration", None)
        if duration is not None and datetime.now(timezone.utc) - datetime(1970, 1, 1, tzinfo=timezone.utc) < duration:
            raise click.BadParameter(f"{value!r} reaches back before 1970")
        return (value, parsed) if with_text else parsed

    return callback
