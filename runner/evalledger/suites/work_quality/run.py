"""`run work-quality`: a cross-family panel judges a run's real work product and its price.

The runner gathers the evidence, renders the rubric row's system prompt and the evidence
message, calls the panel (live, or the recorded replies shipped with evalledger), INSERTs each
verdict as it arrives, completes the snapshot row, and writes the snapshot file from the
document the database built. The database decides which judges contribute, the means, spreads
and note, the previous snapshot, the comparison and the regression reasons.

The previous snapshot is the target's latest in the ledger; when the ledger has none but the
store (the seed's SnapshotStore directory) has a history for the target, that history is imported
first, so the database compares against it all the same.
"""

from __future__ import annotations

import hashlib
import os
import re
import secrets
import sys
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, TextIO

import jinja2
import psycopg

from evalledger.core import db
from evalledger.core import reader
from evalledger.core.errors import EvalledgerError

from . import evidence as evidence_mod, go_json, snapshot as snap_mod, store
from .history import SnapshotStore
from .snapshot import DIMENSIONS, Metrics, Snapshot, SnapshotError

if TYPE_CHECKING:  # the panel imports the provider SDKs: only `run` needs them
    from evalledger.judges.providers import JudgeCall

SUITE_PACKAGE = __package__
# The seed's default panel spans two families: one OpenAI model, one Anthropic model.
DEFAULT_MODELS = "openai:gpt-4o,anthropic:claude-opus-4-7"
MODELS_ENV = "EVALLEDGER_WORK_QUALITY_MODELS"
USER_TEMPLATE = "work_quality_user.j2"
MAX_OUTPUT_TOKENS = 2048
_FAMILY = re.compile(r"^[a-z][a-z0-9_-]*$")


@dataclass
class RunOptions:
    """What `run work-quality` was asked for."""

    kind: str
    name: str
    task: str
    work_product: str
    persona: str = ""
    family: str | None = None
    repo: str | None = None
    outcome: str = ""
    metrics: str | None = None
    bot_version: str = ""
    source_sha: str = ""
    run_id: str | None = None
    models: str | None = None
    store: str | None = None
    tolerance: float | None = None
    judges: str = "auto"
    budget_usd: float | None = None
    repeats: int = 1
    concurrency: int = 8
    timeout_s: float = 120.0
    max_retries: int = 3
    max_prompt_chars: int | None = None
    batch: str = "off"
    batch_fallback: str = "batch"
    gate: bool = False  # --gate: a CI gate wants its answer now (--batch auto calls synchronously)


@dataclass
class Outcome:
    """The snapshot as written, where, and what the database said about it."""

    snapshot: Snapshot
    path: Path
    text: str
    reasons: list[str]
    tolerance: float
    already_recorded: bool = False
    imported: int = 0
    notes: list[str] = field(default_factory=list)


def default_store() -> Path:
    """$EVALLEDGER_HOME/quality (EVALLEDGER_HOME defaults to ~/.evalledger)."""
    return Path(os.environ.get("EVALLEDGER_HOME") or "~/.evalledger").expanduser().absolute() / "quality"


def panel_text(opts_models: str | None) -> str:
    """--models, else $EVALLEDGER_WORK_QUALITY_MODELS, else the two-family default."""
    if opts_models and opts_models.strip():
        return opts_models
    env = os.environ.get(MODELS_ENV, "")
    return env if env.strip() else DEFAULT_MODELS


def _text_option(value: str, flag: str, *, required: bool = False) -> str:
    if required and not value.strip():
        raise EvalledgerError(f"{flag}: must not be blank")
    if re.search(r"[\x00-\x1f\x7f]", value) and flag in ("--name", "--run-id", "--persona", "--bot-version",
                                                         "--source-sha"):
        raise EvalledgerError(f"{flag}: must be one line of printable text, got {value!r}")
    return value


def read_metrics(path: str | None) -> Metrics:
    """The --metrics file: the seed's Metrics object, strictly (a wrong type or unknown field names it)."""
    if path is None:
        return Metrics()
    document = reader.read_json(Path(path), "metrics file")
    try:
        return snap_mod.located(document, snap_mod.metrics_from, strict=True)
    except SnapshotError as exc:
        raise EvalledgerError(str(exc)) from None


def new_run_id() -> str:
    return f"wq-{datetime.now(timezone.utc):%Y%m%dT%H%M%SZ}-{secrets.token_hex(3)}"


# --- prompts -----------------------------------------------------------------------------


def verdict_schema() -> dict:
    """A judge's reply: the seed's flat schema (every score a top-level number), plus the
    per-dimension relative judgement; strict-compatible (everything required)."""
    props: dict[str, Any] = {d: {"type": "number"} for d in DIMENSIONS}
    props["narrative"] = {"type": "string"}
    props["confidence"] = {"type": "number"}
    props["relative_vs_prev"] = {
        "type": "object",
        "properties": {d: {"type": "string", "enum": list(snap_mod.RELATIVES)} for d in DIMENSIONS},
        "required": list(DIMENSIONS), "additionalProperties": False}
    props["relative_narrative"] = {"type": "string"}
    return {"title": "work_quality_verdict", "type": "object", "properties": props,
            "required": list(props), "additionalProperties": False}


def _environment() -> jinja2.Environment:
    return jinja2.Environment(loader=jinja2.PackageLoader(SUITE_PACKAGE, "templates"), autoescape=False,
                              undefined=jinja2.StrictUndefined, keep_trailing_newline=False)


def render(rubric: store.Rubric, *, kind: str, name: str, persona: str, task: str, outcome: str, metrics: Metrics,
           work_product: str, prev: dict | None) -> tuple[str, str]:
    """(system, user): the rubric row's system prompt, and the evidence message."""
    env = _environment()
    system = env.from_string(rubric.definition["system_prompt_template"]).render(
        rubric=rubric.definition, has_prev=prev is not None)
    prev_view = None
    if prev is not None:
        prev_view = {**prev, "mean_scores": {k: float(v) for k, v in (prev["mean_scores"] or {}).items()},
                     "cost_usd": float(prev["cost_usd"])}
    user = env.get_template(USER_TEMPLATE).render(
        kind=kind, name=name, persona=persona, task=task, outcome=outcome, metrics=metrics,
        work_product=work_product, prev=prev_view, dimensions=DIMENSIONS)
    return system.strip() + "\n", user.strip() + "\n"


# --- the run -----------------------------------------------------------------------------


def _result_line(decided: dict | None, call: JudgeCall, recorded: bool, repeat: int = 1) -> str:
    judge = call.spec.spec + (f" (repeat {repeat})" if repeat > 1 else "")
    if decided is None:
        return f"{judge}: already recorded"
    if decided["contributes"]:
        scores = " ".join(f"{d}={go_json.go_float(float(decided['scores'][d]))}" for d in DIMENSIONS)
        status = f"ok  {scores}" + ("  (same family as the assessed run)" if decided["same_family"] else "")
    else:
        status = "skipped: " + decided["error_kind"] + (f": {decided['error_message']}" if decided["error_message"] else "")
    extra = "  " + call.spent(recorded)
    return f"judge {judge}  {status}{extra}"


def import_history(conn: psycopg.Connection, history: SnapshotStore, name: str) -> int:
    """The store's history of one target into the ledger; how many files were new."""
    added = 0
    for path, loaded in history.history(name):
        if store.import_snapshot(conn, go_json.as_document(loaded), path.name):
            added += 1
    return added


def _stderr_warning(line: str) -> None:
    print(f"evalledger: warning: {line}", file=sys.stderr)


def run(opts: RunOptions, *, say: Callable[[str], None], stdin: TextIO | None = None,
        progress_stream: TextIO | None = None, database_url: str | None = None,
        warn: Callable[[str], None] = _stderr_warning) -> Outcome:
    """Judge the work product, record everything, write the snapshot; raise EvalledgerError on any error.
    `say` prints progress (stdout, or nothing under --json); `warn` a skipped history file (stderr)."""
    from evalledger.core import claims
    from evalledger.judges.panel import Panel

    # Everything the user typed is checked before any row or call.
    if opts.kind not in ("bot", "feature"):
        raise EvalledgerError(f"--kind must be bot or feature, got {opts.kind!r}")
    name = _text_option(opts.name, "--name", required=True)
    run_id = _text_option(opts.run_id, "--run-id", required=True) if opts.run_id is not None else new_run_id()
    persona = _text_option(opts.persona, "--persona")
    bot_version = _text_option(opts.bot_version, "--bot-version")
    source_sha = _text_option(opts.source_sha, "--source-sha")
    task = _text_option(opts.task, "--task", required=True)
    family = (opts.family or "").strip().lower() or None
    if family is not None and not _FAMILY.match(family):
        raise EvalledgerError(f"--family: expected a provider family such as anthropic or openai, got {opts.family!r}")
    if not 1 <= opts.repeats <= 10:
        raise EvalledgerError(f"--repeats must be 1 to 10, got {opts.repeats}")
    if opts.tolerance is not None and opts.tolerance < 0:
        raise EvalledgerError(f"--tolerance must be 0 or more, got {opts.tolerance:g}")
    metrics = read_metrics(opts.metrics)
    panel = Panel(panel_text(opts.models), suite=SUITE_PACKAGE, judges=opts.judges, budget_usd=opts.budget_usd,
                  concurrency=opts.concurrency, timeout_s=opts.timeout_s, max_retries=opts.max_retries,
                  progress_stream=progress_stream)
    try:
        ev = evidence_mod.gather(opts.work_product, repo=Path(opts.repo) if opts.repo else None, stdin=stdin)
    except evidence_mod.EvidenceError as exc:
        raise EvalledgerError(str(exc)) from None
    history = SnapshotStore(Path(opts.store) if opts.store else default_store(), warn=warn)
    evidence_sha256 = hashlib.sha256(ev.text.encode("utf-8", "surrogateescape")).hexdigest()

    conn = db.connect(database_url, role="runner", autocommit=True)
    try:
        rubric = store.rubric(conn)
        imported = 0
        if not store.has_completed_snapshot(conn, name):
            try:
                imported = import_history(conn, history, name)
            except SnapshotError as exc:
                raise EvalledgerError(str(exc)) from None
            if imported:
                say(f"imported {imported} earlier snapshot{'s' if imported != 1 else ''} of {name} from {history.dir(name)}")
        row = store.start_or_find_run(conn, {
            "rubric_id": rubric.rubric_id, "kind": opts.kind, "name": name, "persona": persona, "run_id": run_id,
            "bot_family": family, "bot_version": bot_version, "iterion_sha": source_sha, "task": task,
            "outcome": opts.outcome, "evidence_digest": go_json.portable_text(ev.digest),
            "evidence_sha256": evidence_sha256, "cost_usd": metrics.cost_usd, "tokens": metrics.tokens,
            "duration_ms": metrics.duration_ms, "iterations": metrics.iterations, "model_calls": metrics.model_calls,
            "retries": metrics.retries, "models": panel.models, "judges": panel.judges, "repeats": opts.repeats})
        snapshot_id, created = row["snapshot_id"], row["created"]
        say(f"work-quality: {opts.kind} {name}, run {run_id}; work product {ev.source} ({ev.digest.splitlines()[0]}); "
            f"rubric {rubric.version} ({rubric.fingerprint[:8]}); {panel.judges} judges"
            f"{f', each asked {opts.repeats} times' if opts.repeats > 1 else ''}; snapshot row {snapshot_id}")
        with claims.claimed(store.Q["claim_run"], snapshot_id, suite="work-quality", url=database_url,
                            waiting=lambda: say(f"run {run_id} is being judged by another runner: waiting for it")):
            row = store.snapshot_state(conn, snapshot_id)
            if row["completed_at"] is not None:
                how = "imported from the store" if row["origin"] == "import" else "recorded"
                say(f"run {run_id} of {name} was {how} earlier: reading it back, no calls made")
                return _finish(conn, history, row["snapshot_json"], opts.tolerance, already=True, imported=imported,
                               snapshot_id=snapshot_id)
            if not created:
                if row["evidence_sha256"] != evidence_sha256 or list(row["models"]) != panel.models:
                    raise EvalledgerError(f"--run-id {run_id}: started earlier with another work product or panel; "
                                          f"use a new --run-id")
                if row["repeats"] != opts.repeats:
                    raise EvalledgerError(f"--repeats {opts.repeats}: run {run_id} was started with --repeats "
                                          f"{row['repeats']}; give that, or use a new --run-id")
                say(f"run {run_id} was started earlier and has no snapshot yet: judging it again, calling only the "
                    "judges without a verdict")
            prev = store.previous_for_prompt(conn, row["prev_snapshot_id"]) if row["prev_snapshot_id"] else None
            say(f"previous snapshot: {prev['run_id']}" if prev else "previous snapshot: none (the first of this target)")
            judges_line = panel.describe()
            if judges_line:
                say(judges_line)

            system, user = render(rubric, kind=opts.kind, name=name, persona=persona, task=task, outcome=opts.outcome,
                                  metrics=metrics, work_product=ev.text, prev=prev)
            panel.check_prompt(system, user, max_output_tokens=MAX_OUTPUT_TOKENS, max_chars=opts.max_prompt_chars,
                               warn=warn, what="judge a smaller work product")
            answered = store.models_answered(conn, snapshot_id)
            # One call per judge and repeat, every repeat at once (the panel's concurrency); with one
            # repeat nothing is shared with a later call, so no cache write is paid for.
            requests = [request for repeat in range(1, opts.repeats + 1)
                        for request in panel.requests(
                            system, user, json_schema=verdict_schema(), max_output_tokens=MAX_OUTPUT_TOKENS,
                            models=[m for m in panel.models if (m, repeat) not in answered], cache=opts.repeats > 1,
                            key=lambda spec, repeat=repeat: (spec.spec, repeat))]

            # The plan above is what was stored when the run began; each judge's row is admitted by
            # the database against what is stored when it is written (one statement each). A judge
            # planned for a retry while no judge had contributed keeps its earlier verdict once one
            # has: the database takes no new row of it, and it is skipped with a note, never called.
            def settled(spec: str) -> None:
                say(f"judge {spec}: its verdict on this run was stored earlier and another judge has contributed "
                    "since: skipped, not retried")

            def on_start(req, projected_usd) -> bool:
                started = store.record_start(conn, snapshot_id, req.spec.spec, projected_usd, repeat=req.key[1])
                if not started:
                    settled(req.spec.spec)
                return started

            def on_result(call: JudgeCall, recorded: bool) -> str | None:
                decided = store.record_verdict(conn, snapshot_id, call, recorded, repeat=call.key[1])
                if decided == store.SETTLED:
                    settled(call.spec.spec)
                    return None
                return _result_line(decided, call, recorded, call.key[1])

            from evalledger.judges.batch import BatchOptions, refuse_unbatched

            batching = BatchOptions(opts.batch, opts.batch_fallback)
            because = batching.unbatched_because(gate=opts.gate, providers=[s.provider for s in panel.specs
                                                                            if not panel.recorded(s.spec)])
            if not because:
                # The judges without a batch API first, one by one (once the run's submitted batch is
                # held against the budget); then the batch (resumed when the run's was submitted
                # earlier); then what a batch failed, with --batch-fallback sync.
                requests = panel.batch(requests, conn=conn, suite="work-quality", run_key=str(snapshot_id),
                                       item=lambda r: r.spec.spec + (f" repeat {r.key[1]}" if r.key[1] > 1 else ""),
                                       on_submit=on_start, on_result=lambda call: on_result(call, False),
                                       options=batching, say=say,
                                       one_by_one=lambda rest: panel.judge(rest, label="work-quality",
                                                                           on_result=on_result, on_start=on_start,
                                                                           say=say))
            elif not created:  # only a run resumed can have a batch of its calls unread
                refuse_unbatched(conn, "work-quality", str(snapshot_id), batching, because)
            panel.judge(requests, label="work-quality", on_result=on_result, on_start=on_start, say=say)

            rows = store.verdicts(conn, snapshot_id)
            if not any(r["contributes"] for r in rows):
                why = "; ".join(f"{r['model']}: {r['error_kind']}" + (f": {r['error_message']}" if r["error_message"] else "")
                                for r in rows)
                raise EvalledgerError(f"no judge produced a verdict ({why}); no snapshot written: run {run_id} stays "
                                      f"open in the ledger, and the same command again judges it again")
            document = store.complete(conn, snapshot_id)
            return _finish(conn, history, document, opts.tolerance, already=False, imported=imported,
                           snapshot_id=snapshot_id)
    except psycopg.Error as exc:
        raise db.explain(exc, next_step=f"run the same command again: --run-id {run_id} resumes the run") from None
    finally:
        conn.close()


def _finish(conn: psycopg.Connection, history: SnapshotStore, document: dict, tolerance: float | None, *,
            already: bool, imported: int, snapshot_id: int | None = None) -> Outcome:
    """Write the file from the database's document; read the regression reasons back."""
    snap = snap_mod.snapshot_from(document)
    try:
        path = history.write(snap)
    except (SnapshotError, OSError) as exc:
        detail = f"{exc.filename or ''}: {exc.strerror}".lstrip(": ") if isinstance(exc, OSError) else str(exc)
        raise EvalledgerError(f"snapshot store: cannot write the snapshot file ({detail}); snapshot {snap.run_id} "
                              f"of {snap.name} is complete in the ledger: the same command again (--run-id "
                              f"{snap.run_id}) writes the file once it can be written") from None
    gate = store.is_regression(conn, document.get("comparison"), tolerance)
    reasons = list(gate["reasons"])
    # Only the database closes a snapshot, and then its note begins so (work_quality_snapshot_decide_v3):
    # ask it which closed snapshot is a regression, and why.
    if snapshot_id is not None and str((document.get("aggregate") or {}).get("note") or "").startswith("Abandoned:"):
        reasons = store.closed_regression(conn, snapshot_id) or reasons
    return Outcome(snap, path, go_json.dumps(snap), reasons, float(gate["tolerance"]),
                   already_recorded=already, imported=imported)


# --- reading -----------------------------------------------------------------------------


def summary(snap: Snapshot) -> str:
    """The text a person reads after a run or with `snapshot show`."""
    agg = snap.aggregate
    mean = agg.mean_scores or {}
    spread = agg.disagreement or {}
    lines = [f"{snap.kind} {snap.name}" + (f" ({snap.persona})" if snap.persona else "") +
             f"  run {snap.run_id}  at {go_json.go_time(snap.at, snap.at_nanos)}",
             f"judges    {', '.join(v.model for v in agg.verdicts or [])}",
             f"{'dimension':<18}{'mean':>8}{'spread':>8}" + (f"{'delta':>9}" if snap.comparison else "")]
    for dim in DIMENSIONS:
        line = f"{dim:<18}{_fmt(mean.get(dim)):>8}{_fmt(spread.get(dim)):>8}"
        if snap.comparison:
            line += f"{_fmt((snap.comparison.per_dimension or {}).get(dim), signed=True):>9}"
        lines.append(line)
    m = snap.metrics
    lines.append(f"price     ${m.cost_usd:.4f}, {m.tokens} tokens, {m.duration_ms} ms, {m.iterations} iterations, "
                 f"{m.model_calls} model calls, {m.retries} retries")
    if snap.evidence_digest:
        lines.append(f"evidence  {snap.evidence_digest.splitlines()[0]}")
    if agg.note:
        lines.append(f"note      {agg.note}")
    lines.append(comparison_line(snap))
    return "\n".join(lines) + "\n"


def comparison_line(snap: Snapshot) -> str:
    if snap.comparison is None:
        return "compared  no previous snapshot (the first of this target)"
    c = snap.comparison
    return (f"compared  with {c.prev_run_id}: {c.verdict.upper()}  overall {_fmt(c.overall_delta, signed=True)}, "
            f"value_for_money {_fmt(c.value_delta, signed=True)}")


def _fmt(value: float | None, signed: bool = False) -> str:
    if value is None:
        return "-"
    return f"{value:+.3f}" if signed else f"{value:.3f}"
