"""Commands of the work-quality suite: `run work-quality` and `snapshot list|show|compare|import`.

The suite's modules import the provider SDKs (seconds of start-up) only inside `run`, so
`evalledger --help` and the snapshot commands stay fast.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from evalledger.core.errors import EXIT_FAIL, EXIT_INCONCLUSIVE, EXIT_OK, EvalledgerError
from evalledger.core.options import LIMIT, ROW_ID, Number, When, database_option, format_options
from evalledger.judges import JUDGE_MODES
from evalledger.judges.options import (BUDGET, BUDGET_HELP, PROMPT_CHARS, PROMPT_CHARS_HELP, batch_options, call_options,
                                       repeats_option)

TOLERANCE_HELP = ("Regression when overall or value_for_money drops by more than this. [default: the rubric's "
                  "regress_tolerance, 0.08, held in the database]")


# -- run -------------------------------------------------------------------------------------


@click.command("work-quality")
@click.option("--kind", type=click.Choice(["bot", "feature"]), required=True, help="What was run.")
@click.option("--name", required=True, metavar="NAME", help="The target: the bot or feature (its history's name).")
@click.option("--persona", default="", metavar="P", help="The bot's persona, if any.")
@click.option("--family", default=None, metavar="FAMILY",
              help="The assessed run's model family (anthropic, openai...): judges of it are flagged.")
@click.option("--task", required=True, metavar="TEXT", help="What the run was asked to do.")
@click.option("--work-product", "work_product", required=True, metavar="PATH|git:A..B|-",
              help="The real artifact: a file, a directory, the git diff A..B in --repo, or - for stdin.")
@click.option("--repo", default=None, type=click.Path(file_okay=False, path_type=str), metavar="DIR",
              help="The repository of a git:A..B work product. [default: the current directory]")
@click.option("--outcome", default="", metavar="TEXT", help="The run's status text.")
@click.option("--metrics", default=None, type=click.Path(dir_okay=False, path_type=str), metavar="FILE.json",
              help="The run's price: cost_usd, tokens, duration_ms, iterations, model_calls, retries.")
@click.option("--bot-version", "bot_version", default="", metavar="V", help="The assessed bot's version.")
@click.option("--source-sha", "source_sha", default="", metavar="SHA",
              help="The source revision the run used (the snapshot's iterion_sha).")
@click.option("--run-id", "run_id", default=None, metavar="ID",
              help="The assessed run's id. [default: a new one] The same id again reads the snapshot back; one "
                   "whose judges all failed is judged again (only the judges without a verdict).")
@click.option("--models", default=None, metavar="SPECS",
              help="Comma-separated panel of provider:model or provider/model. [default: "
                   "$EVALLEDGER_WORK_QUALITY_MODELS, else openai:gpt-4o,anthropic:claude-opus-4-7]")
@click.option("--store", default=None, type=click.Path(file_okay=False, path_type=str), metavar="DIR",
              help="The snapshot history root. [default: $EVALLEDGER_HOME/quality]")
@click.option("--gate", is_flag=True, help="Exit 1 when this snapshot regresses against the previous one.")
@click.option("--tolerance", type=Number(0), default=None, metavar="T", help=TOLERANCE_HELP)
@click.option("--judges", type=click.Choice(JUDGE_MODES), default="auto", show_default=True,
              help="auto: live judges; a panel model without its API key stops the run before anything is "
                   "written, naming the key. recorded: the replies recorded with evalledger's demo (written for "
                   "the demo's corpus). live: as auto.")
@repeats_option
@click.option("--budget-usd", "budget_usd", type=BUDGET, default=None, metavar="USD", help=BUDGET_HELP)
@call_options
@click.option("--max-prompt-chars", "max_prompt_chars", type=PROMPT_CHARS, default=None, metavar="N",
              help=PROMPT_CHARS_HELP)
@batch_options
@click.option("--json", "as_json", is_flag=True, help="Print only the snapshot JSON on stdout.")
@database_option
def run_work_quality(gate, as_json, **options):
    """A cross-family panel judges a run's real work product and its price.

    Writes the snapshot to the store and the ledger, compared (by the database) with the
    target's previous snapshot. Exit 0 written (and, with --gate, no regression or no
    baseline), 1 --gate found a regression (reasons on stderr), 3 any error.
    """
    from evalledger.core.sealing import sealing

    from . import run as wq

    say = (lambda _line: None) if as_json else click.echo
    with sealing("runner"):  # the completed snapshot's entries are sealed before the command returns
        outcome = wq.run(wq.RunOptions(**options, gate=gate), say=say, stdin=sys.stdin)
    if as_json:
        click.echo(outcome.text, nl=False)
    else:
        click.echo(wq.summary(outcome.snapshot), nl=False)
        click.echo(f"snapshot  {outcome.path}")
    _gate(outcome.reasons, outcome.tolerance, gate, quiet=as_json)


def _gate(reasons: list[str], tolerance: float, gate: bool, *, quiet: bool) -> None:
    if reasons:
        for reason in reasons:
            click.echo(f"regression: {reason} (tolerance {tolerance:g})", err=gate or quiet)
        sys.exit(EXIT_FAIL if gate else EXIT_OK)
    if gate and not quiet:
        click.echo(f"gate: no regression (tolerance {tolerance:g})")
    sys.exit(EXIT_OK)


# -- snapshot --------------------------------------------------------------------------------


@click.group("snapshot")
def snapshot_group():
    """Read work-quality snapshots, compare two, import a history."""


def _load(ref: str):
    """A snapshot from a file path, else from the ledger by run id: (snapshot, where)."""
    snap, where, _ = _found(ref)
    return snap, where


def _found(ref: str):
    """A snapshot from a file path, else from the ledger by run id: (snapshot, where, stored), stored the
    uncertainty the ledger's snapshot stored at its completion ({} when nothing was measured), None for a
    file."""
    from evalledger.core import db

    from . import snapshot as snap_mod, store
    from .history import SnapshotStore

    path = Path(ref)
    if path.is_file() or ref.endswith(".json"):
        try:
            return SnapshotStore.load(path), str(path), None
        except snap_mod.SnapshotError as exc:
            raise EvalledgerError(str(exc)) from None
    with db.transaction("runner") as conn:
        found = store.documents_by_run_id(conn, ref)
    if not found:
        raise EvalledgerError(f"{ref}: no such snapshot file, and no completed snapshot with this run id in the ledger")
    if len(found) > 1:
        raise EvalledgerError(f"{ref}: run id of snapshots of several targets ({', '.join(r['name'] for r in found)}); "
                              f"name the file instead")
    return (snap_mod.snapshot_from(found[0]["snapshot_json"], ref), f"the ledger ({found[0]['name']})",
            found[0]["uncertainty"] or {})


@snapshot_group.command("list")
@click.argument("name")
@click.option("--json", "as_json", is_flag=True, help="Print the rows as JSON.")
@database_option
def snapshot_list(name, as_json):
    """The snapshots of target NAME in the ledger, oldest first, with the database's comparison."""
    from evalledger.core import db

    from . import store

    with db.transaction("runner") as conn:
        rows = store.list_snapshots(conn, name)
    if as_json:
        click.echo(json.dumps([{
            "at": r["at"].isoformat(), "run_id": r["run_id"], "origin": r["origin"],
            "overall": _num(r["overall"]), "value_for_money": _num(r["value_for_money"]),
            "verdict": r["verdict"], "overall_delta": _num(r["overall_delta"]), "cost_usd": _num(r["cost_usd"]),
            "regression_reasons": list(r["reasons"])} for r in rows], indent=2))
        return
    if not rows:
        click.echo(f"no snapshots of {name} in the ledger")
        return
    click.echo(f"{'at (UTC)':<21}{'run id':<28}{'overall':>8}{'value':>8}{'delta':>8}  {'verdict':<8}{'cost $':>9}  origin")
    for r in rows:
        delta = "-" if r["overall_delta"] is None else f"{float(r['overall_delta']):+.3f}"
        click.echo(f"{r['at'].strftime('%Y-%m-%d %H:%M:%S'):<21}{r['run_id'][:27]:<28}{_f(r['overall']):>8}"
                   f"{_f(r['value_for_money']):>8}{delta:>8}  {(r['verdict'] or '-'):<8}{float(r['cost_usd']):>9.4f}  "
                   f"{r['origin']}{'  REGRESSION' if r['reasons'] else ''}")


def _num(value):
    return None if value is None else float(value)


def _f(value) -> str:
    return "-" if value is None else f"{float(value):.3f}"


@snapshot_group.command("show")
@click.argument("ref", metavar="PATH|RUN_ID")
@click.option("--json", "as_json", is_flag=True, help="Print the snapshot JSON (exactly as the seed's Go writes it).")
@click.option("--uncertainty", "with_uncertainty", is_flag=True,
              help="With --json: add each dimension's standard error and 95% interval over the judges (the optional "
                   "aggregate fields stderr and ci95, computed by the database).")
@database_option
def snapshot_show(ref, as_json, with_uncertainty):
    """One snapshot: PATH|RUN_ID, a history file or a run id in the ledger.

    The text shows, beside the scores (never changing them or the comparison), each dimension's
    mean over the judges with its 95% interval, computed by the database (docs/statistics.md): a
    snapshot of the ledger's, as its completion stored it; a file's, from its document.
    """
    from evalledger.core import db, output

    from . import go_json, run as wq, store

    snap, where, uncertainty = _found(ref)
    if as_json and not with_uncertainty:
        click.echo(go_json.dumps(snap), nl=False)
        return
    if uncertainty is None:  # a file's: the database computes it from the document
        with db.transaction("runner") as conn:
            uncertainty = store.uncertainty(conn, go_json.as_document(snap)) or {}
    if as_json:
        snap.aggregate.stderr = {k: u["stderr"] for k, u in uncertainty.items() if u and u["stderr"] is not None}
        snap.aggregate.ci95 = {k: u["ci95"] for k, u in uncertainty.items() if u and u["ci95"] is not None}
        click.echo(go_json.dumps(snap), nl=False)
        return
    click.echo(wq.summary(snap), nl=False)
    click.echo(f"from      {where}")
    if uncertainty:
        click.echo("uncertainty (the judges' spread on this work product; docs/statistics.md)")
        for dim in sorted(uncertainty, key=_order):
            click.echo(f"  {output.interval(dim, uncertainty[dim], percent=False, counted='{n} judges', places=3)}")


@snapshot_group.command("compare")
@click.argument("previous", metavar="A")
@click.argument("current", metavar="B")
@click.option("--tolerance", type=Number(0), default=None, metavar="T", help=TOLERANCE_HELP)
@click.option("--gate", "mode", type=click.Choice(["default", "significant", "possible"]), default="default",
              help="default: the seed's gate, overall or value_for_money dropped by more than the tolerance; "
                   "significant: only a drop whose paired 95% interval over the judges lies wholly beyond it; "
                   "possible: any part of it. [default: default] The database decides and stores each "
                   "(docs/statistics.md).")
@click.option("--json", "as_json", is_flag=True,
              help="Print the comparison (the seed's Delta), the reasons, the paired rows and the gate as JSON.")
@database_option
def snapshot_compare(previous, current, tolerance, mode, as_json):
    """B compared with A (each a file or a run id), computed by the database.

    Beside the seed's comparison, the paired difference per dimension over the judges both
    snapshots share (mean, standard error, 95% interval; judges not shared are listed). Exit 0 no
    regression, 1 overall or value_for_money dropped by more than the tolerance (by the --gate
    asked for), 2 (--gate significant or possible) a gated dimension has no interval, 3 any error.
    The database decides and stores the gate (eval_gate_decision).
    """
    from evalledger.core import db, output

    from . import go_json, store

    a, _ = _load(previous)
    b, _ = _load(current)
    with db.transaction("runner") as conn:
        gate = store.gate(conn, go_json.as_document(a), previous, go_json.as_document(b), current, tolerance, mode)
    decided = gate["comparison"]
    found = decided["seed"]
    delta, reasons, tol = found["comparison"], list(found["reasons"]), float(found["tolerance"])
    if as_json:
        click.echo(json.dumps({"comparison": delta, "tolerance": tol, "regression": bool(reasons),
                               "reasons": reasons, "paired": decided["paired"],
                               "gate": {"gate_id": gate["gate_id"], "mode": mode, "decision": gate["decision"],
                                        "reasons": list(gate["reasons"])}}, indent=2))
    else:
        click.echo(f"{b.name}: {b.run_id} compared with {a.run_id}: {delta['verdict'].upper()}")
        click.echo(f"{'dimension':<18}{'A':>8}{'B':>8}{'delta':>9}")
        for dim, change in sorted(delta["per_dimension"].items(), key=lambda kv: _order(kv[0])):
            click.echo(f"{dim:<18}{_f((a.aggregate.mean_scores or {}).get(dim)):>8}"
                       f"{_f((b.aggregate.mean_scores or {}).get(dim)):>8}{float(change):>+9.3f}")
        click.echo("paired difference (B - A) over the judges both snapshots share (docs/statistics.md)")
        for line in output.paired(decided["paired"], items="judge", places=3):
            click.echo(f"  {line}")
    if mode != "default":
        word = {"pass": "no regression", "fail": "regression", "inconclusive": "inconclusive"}[gate["decision"]]
        said = f"gate {mode} (tolerance {tol:g}, gate {gate['gate_id']}): {word}"
        if gate["reasons"]:
            said += ": " + "; ".join(gate["reasons"])
        click.echo(said, err=as_json or gate["decision"] != "pass")
        sys.exit({"pass": EXIT_OK, "fail": EXIT_FAIL, "inconclusive": EXIT_INCONCLUSIVE}[gate["decision"]])
    if reasons:
        for reason in reasons:
            click.echo(f"regression: {reason} (tolerance {tol:g})", err=True)
        sys.exit(EXIT_FAIL)
    if not as_json:
        click.echo(f"no regression (tolerance {tol:g})")


def _order(dim: str) -> int:
    from .snapshot import DIMENSIONS

    return DIMENSIONS.index(dim) if dim in DIMENSIONS else len(DIMENSIONS)


@snapshot_group.command("import")
@click.argument("directory", type=click.Path(file_okay=False, path_type=Path), metavar="DIR")
@database_option
def snapshot_import(directory):
    """Bring a history written by the seed's Go SnapshotStore into the ledger.

    DIR is a store root (one folder per target) or one target's folder. Every file is checked
    first; then all of them are imported in one transaction, or none. Files already imported
    (same target and run id) are skipped, so importing again adds nothing. A file of another
    schema_version is skipped with a warning.
    """
    from evalledger.core import db

    from . import imports

    found = imports.read_directory(directory, warn=lambda line: click.echo(f"warning: {line}", err=True))
    with db.transaction("runner") as conn:
        added = imports.ingest(conn, found)
    click.echo(f"imported {added} snapshot{'s' if added != 1 else ''} from {directory}"
               + (f" ({len(found) - added} already in the ledger)" if len(found) - added else ""))


# -- list --------------------------------------------------------------------------------------


@click.group("work-quality")
def work_quality_group():
    """Find work-quality runs of every target (a target's history: `snapshot list NAME`)."""


@work_quality_group.command("list")
@click.option("--name", metavar="NAME", help="Only runs of this target (the bot or feature).")
@click.option("--since", type=When(), metavar="DUR|TS", help="Only runs since: 7d, 24h, or a timestamp.")
@click.option("--verdict", type=click.Choice(["better", "same", "worse"]),
              help="Only runs the database compared so with their previous snapshot.")
@click.option("--open", "only_open", is_flag=True,
              help="Only runs still open (no snapshot completed, within their deadline).")
@click.option("--state", type=click.Choice(["open", "complete", "cancelled", "abandoned"]),
              help="Only runs in this state (abandoned: open past the rubric's deadline, or closed so).")
@click.option("--limit", type=LIMIT, default=50, show_default=True, help="At most N runs, newest first.")
@format_options
@database_option
def wq_list(name, since, verdict, only_open, state, limit, fmt):
    """List work-quality runs, newest first (as an auditor), with their state (open, complete,
    cancelled or abandoned: a regression) and the database's comparison."""
    from evalledger.core.options import echo_listing

    from .store import Q

    if only_open and state not in (None, "open"):
        raise EvalledgerError(f"--open and --state {state} exclude each other")
    echo_listing("auditor", Q["list_runs"], {"name": name, "since": since, "verdict": verdict,
                                             "state": "open" if only_open else state, "limit": limit},
                 fmt=fmt, kind="work_quality_runs", empty="no work-quality runs match", tone_column="verdict")


@work_quality_group.command("cancel")
@click.argument("snapshot_id", type=ROW_ID)
@click.option("--reason", required=True, help="Why the run is cancelled (recorded with it).")
@database_option
def wq_cancel(snapshot_id, reason):
    """Cancel SNAPSHOT_ID, an open work-quality run (`work-quality list --open`), with a reason: the
    cancellation is recorded and the database closes the snapshot as a regression, its note
    "Abandoned: cancelled by <login>: <reason>" (exit 1). Its place is free: another run of the same
    target may start."""
    from evalledger.core import db
    from evalledger.core.sealing import sealing

    from . import store

    with sealing("runner"), db.transaction("runner") as conn:
        closed = store.cancel_run(conn, snapshot_id, reason)
    click.echo(f"work-quality run {closed['run_id']} of {closed['name']} (snapshot {closed['snapshot_id']}): "
               f"{closed['state']}, a regression: {closed['note']}")
    sys.exit(EXIT_FAIL)


RUN_COMMANDS = (run_work_quality,)
COMMANDS = (snapshot_group, work_quality_group)
