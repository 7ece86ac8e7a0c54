"""The replay command: `evalledger run replay` (BrainBench-Real)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from evalledger.core import output
from evalledger.core.errors import EXIT_FAIL, EXIT_OK
from evalledger.core.options import Number, database_option, window_bound


def _window_bound(parser: str, expected: str):
    """--since or --until parsed as export parses them, kept with the text as typed: (text, value)."""
    return window_bound(parser, expected, with_text=True)


@click.command("replay")
@click.option("--brain-version", required=True, metavar="LABEL",
              help="What answered: the brain version under test, recorded with the run.")
@click.option("--command", "command", metavar="CMD",
              help="Run CMD once per query: one JSON object on stdin, one on stdout (docs/replay.md).")
@click.option("--url", metavar="URL", help="POST each query's JSON object to URL; the response body is the reply.")
@click.option("--python", "python", metavar="MODULE:FUNCTION",
              help="Call FUNCTION of MODULE with each query's dict; it returns the reply dict.")
@click.option("--from", "from_file", type=click.Path(path_type=Path, dir_okay=False), metavar="FILE",
              help="Replay the rows of an export file (seed-001 NDJSON) instead of the ledger's.")
@click.option("--since", callback=_window_bound("parse_since", "neither a duration (45s, 30m, 24h, 7d, 2w) nor an "
                                                "ISO 8601 timestamp"),
              help="The ledger's rows captured since then, as `export` takes it: a duration back from the "
                   "window's end (7d, 24h) or a timestamp (inclusive). [default: all]")
@click.option("--until", callback=_window_bound("parse_timestamp", "not an ISO 8601 timestamp"),
              help="Only rows captured before this ISO 8601 timestamp (exclusive). [default: now]")
@click.option("--tool", type=click.Choice(["query", "search"]), default=None, help="Only rows of this tool.")
@click.option("--limit", type=Number(1, integer=True, maximum=2**31 - 1), default=None,
              help="At most N rows, the newest first.")
@click.option("--remote", is_flag=True, help="Only remote callers' rows (MCP agent traffic).")
@click.option("--timeout", "timeout_s", type=Number(0.001, maximum=86_400), default=30.0, show_default=True,
              help="Seconds an adapter call may take; a slower one is an adapter failure of its query.")
@click.option("--concurrency", type=Number(1, integer=True, maximum=256), default=4, show_default=True,
              help="Queries asked at once.")
@click.option("--gate", is_flag=True,
              help="For CI: exit 1 unless the decision is pass (inconclusive too), the reasons on stderr.")
@click.option("--json", "as_json", is_flag=True, help="Print only the run's JSON document on stdout.")
@database_option
def run_replay(since, until, gate, as_json, **options):
    """Ask a brain version the queries production captured, and let the database decide the drift.

    Each captured row (the ledger's, of the window, or an export file's) is sent to the adapter
    in its captured mode (vector_enabled false: keyword only); the database computes each query's
    recall, Jaccard, rank-biased overlap, sources gained and lost and latency ratio, and decides
    the run from the replay rubric. Exit 0 pass, 1 fail, 2 inconclusive (too few queries
    replayable), 3 any error. The same command again resumes an open run without asking a
    recorded query twice, or reads a finished run of the same window back.
    """
    from evalledger.core.sealing import sealing

    from . import run as replay

    opts = replay.ReplayOptions(**options, since_text=since[0] if since else None,
                                since=since[1] if since else None, until_text=until[0] if until else None,
                                until=until[1] if until else None)
    with sealing("runner"):  # the completed run's entries are sealed before the command returns
        outcome = replay.run(opts, say=(lambda _line: None) if as_json else click.echo)
    doc = outcome.document
    if as_json:
        click.echo(json.dumps(doc, indent=2))
    else:
        _echo_text(doc, outcome.path)
    if gate:
        if doc["decision"] != "pass":
            click.echo(f"gate: {doc['decision']}: {doc['rationale']}", err=True)
            sys.exit(EXIT_FAIL)
        if not as_json:
            click.echo("gate: pass")
        sys.exit(EXIT_OK)
    sys.exit(outcome.exit_code)


def _f(value) -> str:
    return "-" if value is None else f"{value:.3f}"


def _echo_text(doc: dict, path: Path | None) -> None:
    """The decision, the queries that drifted most, and where the receipt is."""
    click.echo(output.verdicts_in(f"decision  {doc['decision']}"))
    click.echo(f"rationale {doc['rationale']}")
    window = doc["window"]
    if window["next_since"]:
        click.echo(f"window    {window['since'] or '-infinity'} to {window['until']} (the next window: --since "
                   f"{window['next_since']})")
    drifted = sorted((q for q in doc["queries"] if q["status"] == "replayed" and (q["recall"] < 1 or q["sources_lost"])),
                     key=lambda q: (q["recall"], q["capture_id"]))[:10]
    for q in drifted:
        lost = f", lost {', '.join(q['sources_lost'])}" if q["sources_lost"] else ""
        click.echo(f"  capture {q['capture_id']}: recall {_f(q['recall'])}, jaccard {_f(q['jaccard'])}, "
                   f"rbo {_f(q['rbo'])}{lost}")
    if path is not None:
        click.echo(f"receipt   {path}")


RUN_COMMANDS = (run_replay,)
COMMANDS = ()
