"""How a command's model calls are made and how its judge panel is called, as options shared by every
command that calls models (one definition, one help text)."""

from __future__ import annotations

import functools

import click

from evalledger.core.options import INT_MAX, Number

from . import DEFAULT_DEADLINE_S, JUDGE_MODES
from .limits import ADAPTIVE_CEILING, ADAPTIVE_START

CYCLES = Number(1, integer=True, maximum=1000)
BUDGET = Number(0, maximum=1e9)
CONCURRENCY = Number(1, integer=True, maximum=1024)
TIMEOUT = Number(0, above=True, maximum=86_400)
RETRIES = Number(0, integer=True, maximum=100)
DEADLINE = Number(0, maximum=86_400)
PROMPT_CHARS = Number(1, integer=True, maximum=INT_MAX)
REPEATS = Number(1, integer=True, maximum=10)
REPEATS_HELP = ("Ask each judge K times per item (1 to 10): each repeat is a verdict row of its own, numbered 1 "
                "to K, asked concurrently with the others, priced and budgeted like any call; a judge's score is "
                "its mean over its repeats, and the database tells judge noise from item variance and marks the "
                "items whose repeats straddle a threshold (docs/statistics.md).")
PROMPT_CHARS_HELP = ("Refuse, before any call or row, a judge prompt longer than N characters [default: 400,000, "
                     "about 100,000 tokens]; a prompt over a panel model's context is warned about either way.")

BUDGET_HELP = ("Spend cap in USD for this command: no call is made (or batched) whose projected cost would pass "
               "it, a batch the provider already has (submitted by an earlier command this one resumes) counting "
               "first; a batch written but never submitted is sent only if the cap holds it. Every panel model "
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
        from .providers import call_session

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


def repeats_option(command):
    """--repeats K: how many times each judge is asked per item (every judged suite's `run`)."""
    return click.option("--repeats", type=REPEATS, default=1, show_default=True, metavar="K", help=REPEATS_HELP)(command)


def panel_options(command):
    """How a judge panel is called: shared by every judged suite's `run` and by `regress`.

    Every value is checked here, before the command writes anything or imports an SDK.
    """
    # The same flags decide the same way on a terminal and in a pipe: no default depends on isatty.
    options = (
        click.option("--cycles", type=CYCLES, default=1, show_default=True, metavar="N",
                     help="Up to N panel calls; stop early on PASS or INCONCLUSIVE."),
        repeats_option,
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


def batch_options(command):
    """--batch and --batch-fallback: a run's model calls through the providers' batch APIs
    (judges/batch.py), checked here before anything is written."""
    options = (
        click.option("--batch", "batch", type=click.Choice(["off", "on", "auto"]), default="off", is_flag=False,
                     flag_value="on", show_default=True,
                     help="Send the run's live model calls (the judges', and in run brain-eval the brain's answers "
                          "first) through the providers' batch APIs (OpenAI's, "
                          "Anthropic's and Gemini's: half the price, answered within 24 hours, Gemini's within 48); "
                          "the batch and each request are in the ledger "
                          "before the runner waits, so the same command again resumes the batch, never sending it "
                          "twice. --batch alone is on; auto batches when nothing wants the answer sooner than the "
                          "provider's window (a --gate run calls synchronously). Other providers are called one by "
                          "one."),
        click.option("--batch-fallback", "batch_fallback", type=click.Choice(["batch", "sync"]), default="batch",
                     show_default=True,
                     help="How requests a batch failed or let expire are retried, once: in a second batch, or as "
                          "ordinary calls (sync)."),
    )
    for option in reversed(options):
        command = option(command)
    return command
