"""The takes-quality commands: run takes-quality, replay, trend, regress, corpus load."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import click

from evalledger.core.errors import EXIT_FAIL, EXIT_INCONCLUSIVE, EXIT_OK, EvalledgerError
from evalledger.core import output
from evalledger.core.options import (BIGINT_MAX, LIMIT, ROW_ID, Number, When, database_option, echo_listing,
                                     format_options)
from evalledger.judges.options import batch_options, panel_options

from . import DEFAULT_MODELS

# The suite's modules import the provider SDKs (seconds of start-up): they are imported inside
# the commands, so `evalledger --help` and every other command stay fast.


def _echo_receipt_text(receipt: dict) -> None:
    """The receipt as text, its verdict coloured on a terminal."""
    from . import receipts

    verdict_line, rest = receipts.render(receipt).split("\n", 1)
    click.echo(output.verdicts_in(verdict_line) + "\n" + rest, nl=False)


def _echo_receipt_json(receipt: dict) -> None:
    from . import receipts

    click.echo(receipts.dumps(receipt), nl=False)


# -- run -------------------------------------------------------------------------------------


@click.command("takes-quality")
@click.option("--limit", type=Number(1, integer=True, maximum=1_000_000), default=100, show_default=True,
              help="Sample size: N takes (1 to 1,000,000).")
@click.option("--source", type=click.Choice(["db", "fs"]), default="db", show_default=True,
              help="db: the corpus loaded with `corpus load`; fs: JSONL takes read from --path.")
@click.option("--path", type=click.Path(path_type=str), default=None, metavar="FILE_OR_DIR",
              # Absolute in the receipt, so `regress` finds the takes from any directory.
              callback=lambda ctx, param, value: os.path.abspath(value) if value else value,
              help="With --source fs: a JSONL file of takes, or a directory of them (stored as an absolute path).")
@click.option("--slug-prefix", default=None, metavar="P", help="Only takes whose slug starts with P.")
@click.option("--models", default=DEFAULT_MODELS, show_default=True, metavar="A,B,C",
              help="Comma-separated panel of provider:model (or provider/model).")
@click.option("--seed", type=Number(-BIGINT_MAX - 1, integer=True, maximum=BIGINT_MAX), default=None,
              help="Sampling seed: the same seed over the same corpus samples the same takes. [default: random, "
                   "recorded in the receipt]")
@click.option("--rubric-version", default=None, metavar="V", help="Rubric version to judge by. [default: newest]")
@click.option("--target", default=None, metavar="TARGET_ID",
              help="The registered target (`evalledger target add`) whose takes these are; judges of its "
                   "model family are flagged in their verdict rows.")
@panel_options
@batch_options
@click.option("--rerun", "--fresh", "rerun", is_flag=True,
              help="Judge again even when this eval has a complete run: a new run, the eval's next judging "
                   "(its receipt's rerun field counts them).")
@click.option("--json", "as_json", is_flag=True, help="Print only the receipt JSON on stdout.")
@database_option
def run_takes_quality(as_json, **options):
    """A 3-model panel scores a sample of takes against the 5-dimension rubric.

    Exit 0 PASS, 1 FAIL, 2 INCONCLUSIVE, 3 any error. The receipt is stored in
    eval_takes_quality_runs and written to $EVALLEDGER_HOME/eval-receipts/.

    The same eval again (same takes, prompt, panel, rubric, source and judges) reads its run back
    without a call. A run whose judges failed outside their content (provider errors, time-outs,
    the budget) is not final: it stays open, its receipt says "final": false, and the same
    command again retries exactly the failed calls. --rerun judges a complete eval again.

    With --batch the live calls go through the providers' batch APIs; a runner stopped while it
    waits resumes the same batch when the same command runs again. The receipt's calls says how
    many calls went each way.

    The receipt printed and written also carries each dimension's stderr and ci95: the judges'
    spread, computed by the database (docs/statistics.md); the one stored with the run does not.
    """
    from evalledger.core.sealing import sealing

    from . import receipts, run as takes_quality

    with sealing("runner"):  # the completed run's entries are sealed before the command returns
        outcome = takes_quality.run(takes_quality.RunOptions(**options),
                                    say=(lambda _line: None) if as_json else click.echo)
    _echo_outcome(outcome, as_json)
    sys.exit(receipts.exit_code(outcome.receipt))


def _echo_outcome(outcome, as_json: bool) -> None:
    """The receipt (JSON, or text and where its file is), then why a run that stays open is not final."""
    if as_json:
        _echo_receipt_json(outcome.receipt)
    else:
        _echo_receipt_text(outcome.receipt)
        click.echo(f"receipt   {outcome.path}")
    if not outcome.final:
        click.echo(output.warning(f"run {outcome.receipt['run_id']} is not final: some calls failed outside the "
                                  "judges' content (see errors); run the same command again to retry them"), err=True)


# -- replay ----------------------------------------------------------------------------------


@click.command("replay")
@click.argument("receipt", required=False, type=click.Path(path_type=Path, dir_okay=False))
@click.option("--from-db", "from_db", metavar="SHAS|RUN_ID",
              help="Rebuild from the database (a run id, or CORPUS-PROMPT-MODELS-RUBRIC fingerprints or the "
                   "receipt's file name: the newest complete run with them) and write the disk copy again.")
@click.option("--json", "as_json", is_flag=True, help="Print the receipt JSON instead of the text.")
@database_option
def replay_command(receipt, from_db, as_json):
    """Re-render a takes-quality RECEIPT file; needs no database (except --from-db).

    Exit 0 PASS, 1 FAIL, 2 INCONCLUSIVE (the receipt's verdict), 3 any error.
    """
    from . import receipts, run as takes_quality

    if (receipt is None) == (from_db is None):
        raise EvalledgerError("replay: give a RECEIPT file or --from-db SHAS (one of them)")
    if from_db is not None:
        outcome = takes_quality.rebuild_from_db(from_db)
        loaded, note = outcome.receipt, f"rebuilt from the database; disk copy written to {outcome.path}"
    else:
        loaded, note = receipts.load(receipt), None
    if as_json:
        _echo_receipt_json(loaded)
    else:
        _echo_receipt_text(loaded)
        if note:
            click.echo(note)
    sys.exit(receipts.exit_code(loaded))


# -- trend -----------------------------------------------------------------------------------


@click.command("trend")
@click.option("--limit", type=LIMIT, default=20, show_default=True, help="Most recent N completed runs.")
@click.option("--rubric-version", default=None, metavar="V", help="Only runs judged by this rubric version.")
@format_options
@database_option
def trend_command(limit, rubric_version, fmt):
    """takes-quality runs over time, grouped by rubric epoch (newest first).

    A stricter rubric is a new epoch, shown apart, so it never reads as a quality drop.
    """
    from evalledger.core import db

    from . import store, trend

    if rubric_version is not None:
        with db.transaction("runner") as conn:
            store.load_rubric(conn, rubric_version)  # an unknown version is an error, not an empty table
    rows = trend.trend_rows(limit, rubric_version)
    if fmt == "json":
        click.echo(json.dumps(trend.trend_json(rows), indent=2))
    elif fmt == "csv":
        document = trend.trend_json(rows)["rows"]
        columns = ["id", "ts", "rubric_version", "verdict", "overall_score", "cost_usd", "corpus_sha8", "rubric_sha8"]
        click.echo(output.to_csv(columns, [[r[c] for c in columns] for r in document]), nl=False)
    else:
        click.echo("".join(output.verdicts_in(line) for line in trend.trend_text(rows).splitlines(True)), nl=False)
    sys.exit(EXIT_OK)


# -- regress ---------------------------------------------------------------------------------


GATE_HELP = ("default: the seed's gate, a mean dropped by more than the threshold; significant: only a drop whose "
             "paired 95% interval lies wholly beyond the threshold; possible: any part of it. [default: default] "
             "The database decides and stores each (docs/statistics.md).")


@click.command("regress")
@click.option("--against", "against", required=True, type=click.Path(path_type=Path, dir_okay=False),
              metavar="RECEIPT", help="The baseline receipt (e.g. from `run takes-quality --json`).")
@click.option("--threshold", type=Number(0), default=None,
              help="A dimension mean (or the overall) dropping by more than this is a regression. [default: 0.5, "
                   "seed 000's, held in the database]")
@click.option("--gate", "mode", type=click.Choice(["default", "significant", "possible"]), default="default",
              help=GATE_HELP)
@panel_options
@click.option("--rerun", "--fresh", "rerun", is_flag=True,
              help="Judge again even when the same eval has a complete run (the baseline's own, say).")
@click.option("--json", "as_json", is_flag=True,
              help="Print only the gate's decision, the seed's comparison and the paired rows as JSON on stdout.")
@database_option
def regress_command(against, threshold, mode, as_json, **options):
    """Re-run takes-quality like a baseline receipt; exit 1 on a regression.

    Same panel, slug prefix, source, sample size and seed as the baseline. Differences in the
    corpus, prompt or rubric fingerprints are printed as warnings. Beside the comparison, the
    paired difference per dimension over the judges both runs share (mean, standard error, 95%
    interval; judges not shared are listed). Exit 0 no regression, 1 regression, 2 a side has no
    scores to compare, or (--gate significant or possible) a gated row has no interval
    (inconclusive), 3 any error. The database compares, decides and stores the gate
    (eval_gate_decision).
    """
    from evalledger.core import db

    from . import receipts, run as takes_quality, store, trend

    say = (lambda line: click.echo(line, err=True)) if as_json else click.echo
    baseline = receipts.load(against)
    opts = takes_quality.options_from_receipt(baseline, takes_quality.RunOptions(**options))
    with db.transaction("runner") as conn:
        shown = store.regress_threshold(conn, threshold)
    say(f"regress against {against} (threshold {shown:g}): panel {', '.join(opts.models)}; "
        f"source {opts.source}; slug prefix {receipts.shown_prefix(opts.slug_prefix)}; "
        f"{output.plural(opts.limit, 'take')}; seed {opts.seed}")
    if opts.seed is None:
        say(output.warning("the baseline receipt has no seed: the sample is drawn at random"))
    outcome = takes_quality.run(opts, say=say)
    say(f"receipt   {outcome.path}")
    if not outcome.final:
        click.echo(output.warning(f"run {outcome.receipt['run_id']} is not final: some calls failed outside the "
                                  "judges' content; run the same command again to retry them"), err=True)
    with db.transaction("runner") as conn:
        gate = store.gate(conn, baseline, str(against), outcome.receipt["run_id"], threshold, mode)
    decided = gate["comparison"]
    compared = decided["seed"]
    code = _GATE_EXIT[gate["decision"]]
    if as_json:
        click.echo(output.to_json({"schema_version": 1, "kind": "takes_quality_regress", "gate_id": gate["gate_id"],
                                   "run_id": outcome.receipt["run_id"], **decided}), nl=False)
        sys.exit(code)
    for warning in compared["warnings"]:
        click.echo(output.warning(warning))
    click.echo(trend.comparison_text(compared), nl=False)
    click.echo("paired difference (now - baseline) over the judges both runs share (docs/statistics.md)")
    for line in output.paired(decided["paired"], items="judge", places=2):
        click.echo(f"  {line}")
    if mode == "default":
        said, code = _REGRESS_OUTCOMES[compared["outcome"]]
        click.echo(said(compared["regressed"], f"{compared['threshold']:g}"))
    else:
        click.echo(_gate_line(gate, decided))
    sys.exit(code)


_GATE_EXIT = {"pass": EXIT_OK, "fail": EXIT_FAIL, "inconclusive": EXIT_INCONCLUSIVE}


def _gate_line(gate: dict, decided: dict) -> str:
    """A significant or possible gate's decision as the database stored it, and why."""
    word = {"pass": "OK", "fail": "REGRESSION", "inconclusive": "INCONCLUSIVE"}[gate["decision"]]
    why = "; ".join(gate["reasons"]) or f"no paired interval reaches beyond -{decided['threshold']:g}"
    return (f"gate {decided['mode']} (threshold {decided['threshold']:g}, gate {gate['gate_id']}): "
            f"{output.verdict(gate['decision'], word)}: {why}")


# What `regress` says and how it exits for each outcome the database decided.
_REGRESS_OUTCOMES = {
    "regression": (lambda names, t: f"{output.paint('REGRESSION', 'red')}: " + (
                       f"{', '.join(names)} dropped by more than {t}" if names
                       else "the run was cancelled or abandoned (the warning says why): no gate passes on it"),
                   EXIT_FAIL),
    "inconclusive": (lambda names, t: f"{output.verdict('inconclusive', 'INCONCLUSIVE')}: a side has no mean to "
                                      "compare (an inconclusive run)", EXIT_INCONCLUSIVE),
    "ok": (lambda names, t: f"{output.paint('OK', 'green')}: no dimension mean dropped by more than {t}", EXIT_OK),
}


# -- corpus ----------------------------------------------------------------------------------


@click.group("corpus")
def corpus_group():
    """Manage the takes corpus."""


@corpus_group.command("load")
@click.argument("file", type=click.Path(path_type=Path, dir_okay=False))
@database_option
def corpus_load(file):
    """Load takes from a JSONL file into the database's corpus.

    Each line: slug, kind, holder, weight (0 to 1), since, source, claim.

    All or nothing: any bad line loads nothing and names FILE:LINE and the field. Takes already
    present are skipped.
    """
    from evalledger.core import db
    from . import corpus as takes

    # Streamed: each take is written as it is read, in one transaction that a bad line rolls back.
    with db.transaction("runner") as conn:
        added, seen = takes.load(conn, takes.read_lines(file, progress=True))
    click.echo(f"loaded {added} take{'s' if added != 1 else ''} from {file}"
               + (f" ({seen} already present)" if seen else ""))


# -- list and show -----------------------------------------------------------------------------


@click.group("takes-quality")
def takes_quality_group():
    """Find takes-quality runs and read each judge's verdict and feedback."""


@takes_quality_group.command("list")
@click.option("--target", metavar="TARGET_ID", help="Only runs of this registered target.")
@click.option("--since", type=When(), metavar="DUR|TS", help="Only runs started since: 7d, 24h, or a timestamp.")
@click.option("--verdict", type=click.Choice(["pass", "fail", "inconclusive"]), help="Only runs with this verdict.")
@click.option("--open", "only_open", is_flag=True, help="Only runs still in progress (open, within their deadline).")
@click.option("--state", type=click.Choice(["open", "complete", "cancelled", "abandoned"]),
              help="Only runs in this state (abandoned: open past the rubric's deadline, or closed so).")
@click.option("--limit", type=LIMIT, default=50, show_default=True, help="At most N runs, newest first.")
@click.option("--quiet", "-q", is_flag=True, help="Print only the run ids, one a line (for TQ_ID=$(...)).")
@format_options
@database_option
def tq_list(target, since, verdict, only_open, state, limit, quiet, fmt):
    """List takes-quality runs, newest first, with their state (open, complete, cancelled or
    abandoned) and whether their judges were recorded or live."""
    from .store import QUERIES

    if only_open and state not in (None, "open"):
        raise EvalledgerError(f"--open and --state {state} exclude each other")
    echo_listing("auditor", QUERIES["list_runs"], {"target": target, "since": since, "verdict": verdict,
                                                   "state": "open" if only_open else state, "limit": limit},
                 fmt=fmt, kind="takes_quality_runs", empty="no takes-quality runs match", tone_column="verdict",
                 quiet=quiet)


@takes_quality_group.command("cancel")
@click.argument("run_id", type=ROW_ID)
@click.option("--reason", required=True, help="Why the run is cancelled (recorded with it).")
@database_option
def tq_cancel(run_id, reason):
    """Cancel RUN_ID, an open takes-quality run, with a reason: the cancellation is recorded and the
    database decides the run fail, "Abandoned: cancelled by <login>: <reason>" (exit 1). Its place
    is free: another run of the same brain, prompt and sample scope may start."""
    from evalledger.core import db
    from evalledger.core.sealing import sealing

    from . import store

    with sealing("runner"), db.transaction("runner") as conn:
        receipt = store.cancel_run(conn, run_id, reason)
    _echo_receipt_text(receipt)
    sys.exit(EXIT_FAIL)


@takes_quality_group.command("show")
@click.argument("run_id", type=ROW_ID)
@click.option("--json", "as_json", is_flag=True, help="Print the run, its receipt and every judge verdict as JSON.")
@database_option
def tq_show(run_id, as_json):
    """Show takes-quality run RUN_ID: its receipt, then each judge's verdict and feedback, cycle by cycle.

    Beside the verdict (never changing it), each dimension's standard error and 95% interval over
    the judges' scores, and the variance of a judge's score between calls (docs/statistics.md).

    Exit 0 PASS, 1 FAIL, 2 INCONCLUSIVE or still open, 3 any error.
    """
    from evalledger.core import db
    from evalledger.core.reading import fetch, records

    from . import receipts
    from .store import QUERIES

    with db.transaction("auditor") as conn:
        columns, rows = fetch(conn, QUERIES["run_by_id"], {"run_id": run_id})
        if not rows:
            raise EvalledgerError(f"no takes-quality run {run_id} (evalledger takes-quality list)")
        run = records(columns, rows)[0]
        columns, rows = fetch(conn, QUERIES["run_verdicts"], {"run_id": run_id})
    verdicts = records(columns, rows)
    receipt = run.pop("receipt_json")
    uncertainty = run.pop("uncertainty")
    # An open run past its deadline is abandoned, a fail, before anything closes it.
    code = (receipts.exit_code(receipt) if receipt else EXIT_FAIL if run["state"] == "abandoned"
            else EXIT_INCONCLUSIVE)
    if as_json:
        click.echo(output.to_json({"schema_version": 1, "kind": "takes_quality_run", "run": run, "receipt": receipt,
                                   "uncertainty": uncertainty, "verdicts": verdicts}), nl=False)
        sys.exit(code)
    if receipt:
        _echo_receipt_text(receipt)
        if uncertainty:
            click.echo("uncertainty (the judges' spread on this sample, not the sampling of takes; docs/statistics.md)")
            for key in [*(k for k in receipt["scores"] if k in uncertainty), "overall"]:
                u = uncertainty.get(key)
                line = output.interval(key, u, percent=False, counted="{n} judges")
                if u and u.get("between_call_variance") is not None:
                    line += f"; between calls: variance {u['between_call_variance']:.2f} over {u['calls']} calls"
                click.echo(f"  {line}")
    elif run["state"] == "abandoned":
        click.echo(output.verdicts_in(f"FAIL: {run['verdict_message']}") + "\n")
    else:
        click.echo(f"run {run_id} is open (started {output.cell(run['started_at'])}, abandoned at "
                   f"{output.cell(run['deadline_at'])}): running the same eval again carries on with it, calling only "
                   "the judges without an answer; `evalledger takes-quality cancel` closes it")
    click.echo("judges")
    for v in verdicts:
        how = "recorded" if v["recorded"] else "live"
        if v["call_started"]:
            state = f"call started (estimated ${float(v['estimated_cost_usd']):.4f})"
        elif v["contributes"]:
            state = output.paint("contributed", "green")
        else:
            state = output.paint(f"{v['error_kind']}: {v['error_message']}", "red")
        retry = (f" repeat {v['repeat_no']}" if v["repeat_no"] > 1 else "") + (f" retry {v['retry_no']}" if v["retry_no"] else "")
        click.echo(f"  cycle {v['cycle']}{retry}  {v['model']} ({v['family']}, {how}"
                   f"{', same family' if v['same_family'] else ''})  {state}")
        if v["scores"]:
            click.echo("    scores   " + " ".join(f"{k}={output.cell(x)}" for k, x in v["scores"].items()))
        if v["feedback"]:
            click.echo(f"    feedback {' '.join(v['feedback'].split())}")
    if not verdicts:
        click.echo("  none yet")
    sys.exit(code)


RUN_COMMANDS = (run_takes_quality,)
COMMANDS = (replay_command, trend_command, regress_command, corpus_group, takes_quality_group)
