"""Options shared by many commands, as decorators (one definition, one help text)."""

from __future__ import annotations

import functools
import math

import click

from . import db
from evalledger.judges import DEFAULT_DEADLINE_S, JUDGE_MODES
from evalledger.judges.limits import ADAPTIVE_CEILING, ADAPTIVE_START


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


CYCLES = Number(1, integer=True, maximum=1000)
BUDGET = Number(0, maximum=1e9)
CONCURRENCY = Number(1, integer=True, maximum=1024)
TIMEOUT = Number(0, above=True, maximum=86_400)
RETRIES = Number(0, integer=True, maximum=100)
DEADLINE = Number(0, maximum=86_400)
PROMPT_CHARS = Number(1, integer=True, maximum=INT_MAX)
PROMPT_CHARS_HELP = ("Refuse, before any call or row, a judge prompt longer than N characters [default: 400,000, "
                     "about 100,000 tokens]; a prompt over a panel model's context is warned about either way.")

BUDGET_HELP = ("Spend cap in USD: no call is made whose projected cost would pass it, and every panel model "
               "needs a price in pricing.json. 0 is a zero budget (nothing that costs money is called), "
               "not 'no cap'; leave the flag out for no cap.")


def call_options(command):
    """How a command's model calls are made: --concurrency, --deadline, --timeout, --retries.

    One definition for every command that calls models. The command runs inside a call session
    (its --deadline for every run of calls); when it ends (not with an error) and a call was
    retried or a limit cut back, what the calls met is said on stderr: how many were
    rate-limited, how long they waited, how far each provider's limit moved.
    """
    options = (
        click.option("--concurrency", type=CONCURRENCY, default=None, metavar="N",
                     help=f"At most N calls in flight per provider, a fixed ceiling (the limit starts there and "
                          f"backs off on 429s and rising latency; 1 to 1,024). [default: adaptive per provider, from "
                          f"{ADAPTIVE_START} up to {ADAPTIVE_CEILING}]"),
        click.option("--deadline", "deadline_s", type=DEADLINE, default=DEFAULT_DEADLINE_S, show_default=True,
                     metavar="SECONDS", help="How long a call keeps retrying 429s and 5xx (honouring Retry-After), "
                                             "from its first attempt; then it is recorded as failed, with the reason. "
                                             "0: no such retry; at most a day."),
        click.option("--timeout", "timeout_s", type=TIMEOUT, default=120.0, show_default=True,
                     metavar="SECONDS", help="Time limit of one HTTP attempt (more than 0, at most a day)."),
        click.option("--retries", "max_retries", type=RETRIES, default=3, show_default=True,
                     metavar="N", help="Retries of a timed-out attempt or a connection error (0 to 100); a 429 "
                                       "or 5xx is retried until --deadline instead."),
    )

    @functools.wraps(command)
    def wrapper(*args, deadline_s=DEFAULT_DEADLINE_S, **kwargs):
        from evalledger.judges.providers import call_session

        with call_session(deadline_s) as session:
            try:
                outcome = command(*args, **kwargs)
            except SystemExit:  # an exit code the command chose: its run is over
                _say_report(session.report)
                raise
            _say_report(session.report)
            return outcome

    for option in reversed(options):
        wrapper = option(wrapper)
    return wrapper


def _say_report(report) -> None:
    # Not after an error: the error's own line says what stopped the run, and is the only line.
    for line in report.lines():
        click.echo(line, err=True)


def panel_options(command):
    """How a judge panel is called: shared by every judged suite's `run` and by `regress`.

    Every value is checked here, before the command writes anything or imports an SDK.
    """
    # The same flags decide the same way on a terminal and in a pipe: no default depends on isatty.
    options = (
        click.option("--cycles", type=CYCLES, default=1, show_default=True, metavar="N",
                     help="Up to N panel calls; stop early on PASS or INCONCLUSIVE."),
        click.option("--budget-usd", type=BUDGET, default=None, metavar="USD", help=BUDGET_HELP),
        call_options,
        click.option("--max-prompt-chars", "max_prompt_chars", type=PROMPT_CHARS, default=None, metavar="N",
                     help=PROMPT_CHARS_HELP),
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
