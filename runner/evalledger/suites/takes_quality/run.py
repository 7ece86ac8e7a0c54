"""The takes-quality run (seed 000): sample takes, render the judge prompt from the rubric row,
call the panel, INSERT each verdict as it arrives, and read back what the database decided.

A run is found again by its four fingerprints (corpus, prompt, models, rubric): running the
same thing again resumes an unfinished run, or reads a finished one back without a call.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Callable

import psycopg

from evalledger.core import db
from evalledger.core.output import money, plural
from evalledger.core.errors import EvalledgerError

from . import DEFAULT_MODELS, corpus as takes, receipts, store
from .prompts import corpus_sha8, prompt_sha8, render, takes_block, verdict_schema

if TYPE_CHECKING:  # the panel imports the provider SDKs: only `run` needs them
    from evalledger.judges.providers import JudgeCall

SUITE = store.SUITE
MAX_OUTPUT_TOKENS = 1024


@dataclass
class RunOptions:
    """What `run takes-quality` (and `regress`) was asked for."""

    models: str | list[str] = DEFAULT_MODELS
    limit: int = 100
    cycles: int = 1
    budget_usd: float | None = None
    source: str = "db"
    path: str | None = None
    slug_prefix: str | None = None
    seed: int | None = None
    concurrency: int = 8
    timeout_s: float = 120.0
    max_retries: int = 3
    judges: str = "auto"
    rubric_version: str | None = None
    target: str | None = None


@dataclass
class Outcome:
    """The receipt the database wrote, where its disk copy is, and whether it was already there."""

    receipt: dict
    path: Path
    already_recorded: bool = False
    notes: list[str] = field(default_factory=list)


def _result_line(cycle: int, decided: dict | None, call: JudgeCall, recorded: bool, dims: list[str]) -> str:
    if decided is None:
        return f"cycle {cycle}  {call.spec.spec}: already recorded"
    if decided["contributes"]:
        scores = " ".join(f"{k}={receipts.num(decided['scores'][k])}" for k in dims if k in decided["scores"])
        status = f"ok  {scores}"
    else:
        status = decided["error_kind"] + (f": {decided['error_message']}" if decided["error_message"] else "")
    extra = "  recorded" if recorded else f"  {money(call.cost_usd)}  {call.latency_ms} ms"
    return f"cycle {cycle}  {call.spec.spec}  {status}{extra}"


def _check(opts: RunOptions) -> None:
    if opts.limit < 1:
        raise EvalledgerError(f"--limit must be at least 1, got {opts.limit}")
    if opts.cycles < 1:
        raise EvalledgerError(f"--cycles must be at least 1, got {opts.cycles}")
    if opts.source not in ("db", "fs"):
        raise EvalledgerError(f"--source must be db or fs, got {opts.source!r}")
    if opts.source == "fs" and not opts.path:
        raise EvalledgerError("--source fs needs --path FILE_OR_DIR")
    if opts.source == "db" and opts.path:
        raise EvalledgerError("--path goes with --source fs")


def run(opts: RunOptions, *, say: Callable[[str], None], progress_stream=None) -> Outcome:
    """Run the suite end to end; `say` prints a progress line (or not)."""
    from evalledger.judges import panel
    from evalledger.judges.pricing import Budget
    from evalledger.judges.providers import BUDGET_EXHAUSTED, JudgeRequest

    specs = panel.parse_panel(opts.models)
    _check(opts)
    budget = Budget(opts.budget_usd)
    if budget.cap_usd is not None:
        budget.check_prices(specs)  # before any call, and before any row
    modes = panel.resolve_modes(specs, __package__, opts.judges)
    seed = opts.seed if opts.seed is not None else random.SystemRandom().randrange(2**31)

    fs_takes = takes.read_path(Path(opts.path)) if opts.source == "fs" else None
    conn = db.connect(role="runner", autocommit=True)
    try:
        rubric = store.load_rubric(conn, opts.rubric_version)
        if fs_takes is not None:
            sample = takes.sample_takes(fs_takes, seed=seed, limit=opts.limit, slug_prefix=opts.slug_prefix)
        else:
            sample = takes.sample_db(conn, seed=seed, limit=opts.limit, slug_prefix=opts.slug_prefix)
        if not sample:
            where = f"in {opts.path}" if fs_takes is not None else "in the database (load some with `evalledger corpus load FILE.jsonl`)"
            prefix = f" with slug prefix {opts.slug_prefix!r}" if opts.slug_prefix else ""
            raise EvalledgerError(f"no takes{prefix} {where}")
        system, user = render(rubric, sample, opts.slug_prefix)
        row = store.start_or_find_run(
            conn, rubric_id=rubric.rubric_id, target_id=opts.target, corpus_source=opts.source,
            corpus_path=opts.path if opts.source == "fs" else None, slug_prefix=opts.slug_prefix,
            sample_limit=opts.limit, seed=seed, n_takes=len(sample), corpus_sha8=corpus_sha8(takes_block(sample)),
            prompt_sha8=prompt_sha8(), models=[s.spec for s in specs])
        run_id = row["id"]
        say(f"takes-quality: {plural(len(sample), 'take')} from {opts.source}"
            f"{' ' + opts.path if opts.source == 'fs' else ''}, slug prefix "
            f"{repr(opts.slug_prefix) if opts.slug_prefix else 'none'}, seed {seed}; rubric {rubric.version} "
            f"({rubric.fingerprint[:8]}); run {run_id}")
        if row["completed_at"] is not None:
            say(f"run {run_id} with these four fingerprints was recorded earlier: reading it back, no calls made")
            receipt = receipts.ordered(row["receipt_json"], rubric.dims)
            return Outcome(receipt, receipts.save(receipt), already_recorded=True)
        if not row["created"]:
            say(f"run {run_id} was started earlier and never completed: resuming it")
        modes_line = panel.describe_modes(specs, modes)
        if modes_line:
            say(modes_line)

        schema = verdict_schema(rubric)
        progress = panel.Progress(len(specs), progress_stream)
        for cycle in range(1, opts.cycles + 1):
            todo = [s for s in specs if s.spec not in store.models_answered(conn, run_id, cycle)]
            requests = [JudgeRequest(s, system=system, user=user, json_schema=schema,
                                     max_output_tokens=MAX_OUTPUT_TOKENS, key=(cycle, s.spec)) for s in todo]
            skipped = []

            def on_result(call: JudgeCall, cycle=cycle, skipped=skipped) -> None:
                recorded = modes[call.spec.spec] == panel.RECORDED
                decided = store.record_verdict(conn, run_id, cycle, call, recorded)
                if call.error_kind == BUDGET_EXHAUSTED:
                    skipped.append(call.spec.spec)
                progress.advance(call.cost_usd)
                if not progress.enabled:
                    say(_result_line(cycle, decided, call, recorded, rubric.dims))

            if requests:
                progress.start(f"cycle {cycle}/{opts.cycles}", len(requests))
                try:
                    panel.run_sync(panel.run_panel(
                        requests, modes, suite=__package__, on_result=on_result, concurrency=opts.concurrency,
                        timeout_s=opts.timeout_s, max_retries=opts.max_retries, budget=budget))
                finally:
                    progress.finish()
            decided = store.cycle_decision(conn, run_id, cycle)
            say(f"cycle {cycle}: {decided['verdict']} ({decided['contributed']} of {decided['panel']} models "
                f"contributed)")
            if decided["verdict"] in ("pass", "inconclusive"):
                break
            if skipped:
                say("budget cap reached: no further cycles")
                break
        receipt = receipts.ordered(store.complete_run(conn, run_id), rubric.dims)
        return Outcome(receipt, receipts.save(receipt))
    except psycopg.Error as exc:
        raise db.explain(exc) from None
    finally:
        conn.close()


# --- replay and regress ------------------------------------------------------------------------


def parse_shas(text: str) -> tuple[str, str, str, str]:
    """'c-p-m-r', or a receipt file name, as the four fingerprints."""
    name = Path(text).name.removesuffix(".json").removeprefix(f"{SUITE}-")
    parts = name.split("-")
    if len(parts) != 4 or not all(len(p) == 8 and all(c in "0123456789abcdef" for c in p) for p in parts):
        raise EvalledgerError(f"--from-db: expected CORPUS-PROMPT-MODELS-RUBRIC (four 8-hex fingerprints), got {text!r}")
    return tuple(parts)  # type: ignore[return-value]


def rebuild_from_db(shas: tuple[str, str, str, str]) -> Outcome:
    """The completed run's receipt from the database, and its disk copy written again."""
    with db.transaction("runner") as conn:
        receipt = store.receipt_from_db(conn, shas)
        if receipt is None:
            raise EvalledgerError(f"--from-db: no completed takes-quality run {'-'.join(shas)} in the database")
        receipt = receipts.ordered(receipt, store.rubric_dims(conn, receipt["rubric_version"]))
    return Outcome(receipt, receipts.save(receipt))


def options_from_receipt(baseline: dict, base: RunOptions) -> RunOptions:
    """The prior receipt's panel, slug prefix, source, sample size and seed over base's other options."""
    corpus = baseline["corpus"]
    base.models = list(baseline["models"])
    base.slug_prefix = corpus["slug_prefix"]
    base.source = corpus["source"]
    base.path = corpus.get("path")
    base.limit = int(corpus["n_takes"])
    base.seed = baseline.get("seed")
    return base
