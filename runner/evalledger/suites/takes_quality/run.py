"""The takes-quality run (seed 000): sample takes, render the judge prompt from the rubric row,
call the panel, INSERT each verdict as it arrives, and read back what the database decided.

An eval is found again by its identity (docs/runs.md): the seed's four fingerprints (corpus,
prompt, models, rubric), where the sample came from (source, path, slug prefix) and how it is
judged (live or recorded). Running the same eval again reads a complete run back without a
call, or carries on with an open one: it makes only the calls that have no answer yet (a call
that failed outside the judge's content, one the budget did not allow, one a killed runner
started). `--rerun` judges a complete eval again, as the next judging of it. While a runner
works on a run it holds the run's claim (core/claims.py), so an identical run waits for it.
"""

from __future__ import annotations

import random
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Callable

import psycopg

from evalledger.core import db
from evalledger.core.output import plural
from evalledger.core.errors import EvalledgerError

from . import DEFAULT_MODELS, corpus as takes, receipts, store
from .prompts import corpus_sha8, prompt_sha8, render, takes_block, verdict_schema

if TYPE_CHECKING:  # the panel imports the provider SDKs: only `run` needs them
    from evalledger.judges.panel import Panel
    from evalledger.judges.providers import JudgeCall

SUITE = store.SUITE
MAX_OUTPUT_TOKENS = 1024


@dataclass
class RunOptions:
    """What `run takes-quality` (and `regress`) was asked for."""

    models: str | list[str] = DEFAULT_MODELS
    limit: int = 100
    cycles: int = 1
    repeats: int = 1
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
    rerun: bool = False
    max_prompt_chars: int | None = None
    batch: str = "off"
    batch_fallback: str = "batch"


@dataclass
class Outcome:
    """The receipt the database wrote (or, for a run that stays open, would write), where its
    disk copy is, whether it was already there, and whether it is a final verdict."""

    receipt: dict
    path: Path
    already_recorded: bool = False
    notes: list[str] = field(default_factory=list)
    final: bool = True


def _result_line(cycle: int, decided: dict | None, call: JudgeCall, recorded: bool, dims: list[str],
                 repeat: int = 1) -> str:
    where = f"cycle {cycle}" + (f" repeat {repeat}" if repeat > 1 else "")
    if decided is None:
        return f"{where}  {call.spec.spec}: already recorded"
    if decided["contributes"]:
        scores = " ".join(f"{k}={receipts.num(decided['scores'][k])}" for k in dims if k in decided["scores"])
        status = f"ok  {scores}"
    else:
        status = decided["error_kind"] + (f": {decided['error_message']}" if decided["error_message"] else "")
    extra = "  " + call.spent(recorded)
    return f"{where}  {call.spec.spec}  {status}{extra}"


def _check(opts: RunOptions) -> None:
    if opts.limit < 1:
        raise EvalledgerError(f"--limit must be at least 1, got {opts.limit}")
    if opts.cycles < 1:
        raise EvalledgerError(f"--cycles must be at least 1, got {opts.cycles}")
    if not 1 <= opts.repeats <= 10:
        raise EvalledgerError(f"--repeats must be 1 to 10, got {opts.repeats}")
    if opts.source not in ("db", "fs"):
        raise EvalledgerError(f"--source must be db or fs, got {opts.source!r}")
    if opts.source == "fs" and not opts.path:
        raise EvalledgerError("--source fs needs --path FILE_OR_DIR")
    if opts.source == "db" and opts.path:
        raise EvalledgerError("--path goes with --source fs")


def _stderr_warning(line: str) -> None:
    print(f"evalledger: warning: {line}", file=sys.stderr)


def run(opts: RunOptions, *, say: Callable[[str], None], progress_stream=None,
        warn: Callable[[str], None] = _stderr_warning) -> Outcome:
    """Run the suite end to end; `say` prints a progress line (or not), `warn` a warning (stderr)."""
    from evalledger.core import claims
    from evalledger.judges.panel import Panel

    _check(opts)
    panel = Panel(opts.models, suite=__package__, judges=opts.judges, budget_usd=opts.budget_usd,
                  concurrency=opts.concurrency, timeout_s=opts.timeout_s, max_retries=opts.max_retries,
                  progress_stream=progress_stream)
    seed = opts.seed if opts.seed is not None else random.SystemRandom().randrange(2**31)

    from_files = opts.source == "fs"
    fs_sample = (takes.sample_path(Path(opts.path), seed=seed, limit=opts.limit, slug_prefix=opts.slug_prefix)
                 if from_files else None)
    conn = db.connect(role="runner", autocommit=True)
    try:
        rubric = store.load_rubric(conn, opts.rubric_version)
        if fs_sample is not None:
            sample = fs_sample
        else:
            sample = takes.sample_db(conn, seed=seed, limit=opts.limit, slug_prefix=opts.slug_prefix)
        if not sample:
            where = f"in {opts.path}" if from_files else "in the database (load some with `evalledger corpus load FILE.jsonl`)"
            prefix = f" with slug prefix {opts.slug_prefix!r}" if opts.slug_prefix else ""
            raise EvalledgerError(f"no takes{prefix} {where}")
        system, user = render(rubric, sample, opts.slug_prefix)
        panel.check_prompt(system, user, max_output_tokens=MAX_OUTPUT_TOKENS, max_chars=opts.max_prompt_chars,
                           warn=warn, what="judge a smaller sample (--limit)")
        values = {"rubric_id": rubric.rubric_id, "target_id": opts.target, "corpus_source": opts.source,
                  "corpus_path": opts.path if opts.source == "fs" else None, "slug_prefix": opts.slug_prefix,
                  "sample_limit": opts.limit, "seed": seed, "n_takes": len(sample),
                  "corpus_sha8": corpus_sha8(takes_block(sample)), "prompt_sha8": prompt_sha8(),
                  "models": panel.models, "judges": panel.judges, "repeats": opts.repeats}
        row = store.head_run(conn, values)
        if row is None:
            row = store.start_run(conn, values, rerun=0)
        elif row["completed_at"] is not None and opts.rerun:
            row = store.start_run(conn, values, rerun=row["rerun"] + 1)
        run_id, created = row["id"], row["created"]
        say(f"takes-quality: {plural(len(sample), 'take')} from {opts.source}"
            f"{' ' + opts.path if opts.source == 'fs' else ''}, slug prefix "
            f"{repr(opts.slug_prefix) if opts.slug_prefix else 'none'}, seed {seed}; rubric {rubric.version} "
            f"({rubric.fingerprint[:8]}); {panel.judges} judges"
            f"{f', each asked {opts.repeats} times' if opts.repeats > 1 else ''}; run {run_id}")
        with claims.claimed(store.QUERIES["claim_run"], run_id, suite="takes-quality",
                            waiting=lambda: say(f"run {run_id} is being judged by another runner: waiting for it")):
            row = store.run_state(conn, run_id)
            if row["completed_at"] is not None:
                drawn = f" (its sample was drawn with seed {row['seed']})" if row["seed"] != seed else ""
                say(f"run {run_id} of this eval was recorded earlier{drawn}: reading it back, no calls made"
                    + ("" if opts.rerun else "; --rerun judges it again"))
                receipt = _disk_copy(conn, run_id, row["receipt_json"], rubric.dims)
                return Outcome(receipt, receipts.save(receipt), already_recorded=True)
            if not created:
                say(f"run {run_id} of this eval was started earlier and is not final: resuming it, calling only "
                    "the judges without an answer")
            modes_line = panel.describe()
            if modes_line:
                say(modes_line)
            final = _judge(conn, run_id, opts, panel, rubric, system, user, say, resumed=not created)
            if final:
                receipt = _disk_copy(conn, run_id, store.complete_run(conn, run_id), rubric.dims)
                return Outcome(receipt, receipts.save(receipt))
            receipt = _disk_copy(conn, run_id, store.open_receipt(conn, run_id), rubric.dims)
            return Outcome(receipt, receipts.save(receipt), final=False)
    except psycopg.Error as exc:
        raise db.explain(exc, next_step="run the same command again: it resumes the run") from None
    finally:
        conn.close()


def _disk_copy(conn, run_id: int, receipt: dict, dims: list[str]) -> dict:
    """The receipt as `--json` prints it and its disk copy holds it, in the seed's order, with the
    optional, additive fields the stored receipt_json leaves out (schema_version 1 still): each
    dimension's `stderr` and `ci95`, the judges' spread the database computes from the run's verdict
    rows (takes_quality_receipt_uncertainty_v1, what `show` carries); and `calls`: how many of the
    run's calls were made one by one and through a batch API, and the prompt tokens the providers'
    caches served, as the database counts them from the run's rows. A run judged by recorded replies
    made none (and asks nothing of the ledger's batch tables, so it reads the same from a ledger that
    predates them)."""
    receipt = store.receipt_uncertainty(conn, run_id, receipt)
    if receipt.get("judges") == "recorded":
        calls = {"sync": 0, "batch": 0, "cached_input_tokens": 0}
    else:
        calls = store.run_calls(conn, run_id)
    return receipts.ordered({**receipt, "calls": calls}, dims)


def _judge(conn, run_id, opts: RunOptions, panel: Panel, rubric, system: str, user: str,
           say: Callable[[str], None], resumed: bool) -> bool:
    """Every cycle the run still needs; True when it is final (every call answered)."""
    from evalledger.judges.batch import BatchOptions, refuse_unbatched

    schema = verdict_schema(rubric)
    batching = BatchOptions(opts.batch, opts.batch_fallback)
    # --batch auto: not when the run would be abandoned (its rubric's deadline) before a batch's window ends.
    left_s = store.run_time_left(conn, run_id) if opts.batch == "auto" else None
    because = batching.unbatched_because(deadline_s=left_s,
                                         providers=[s.provider for s in panel.specs if not panel.recorded(s.spec)])
    batched = not because
    if resumed and not batched:  # only a run resumed can have a batch of its calls unread
        refuse_unbatched(conn, SUITE, str(run_id), batching, because)
    for cycle in range(1, opts.cycles + 1):
        todo = store.calls_to_make(conn, run_id, cycle, panel.models, opts.repeats)
        # Every repeat of every judge goes out at once: the panel's concurrency runs them together.
        requests = [request for repeat in range(1, opts.repeats + 1)
                    for request in panel.requests(system, user, json_schema=schema, max_output_tokens=MAX_OUTPUT_TOKENS,
                                                  models=[m for m, r in todo if r == repeat],
                                                  key=lambda spec, cycle=cycle, repeat=repeat: (cycle, spec.spec, repeat))]

        def on_start(req, projected_usd, cycle=cycle) -> None:
            store.record_start(conn, run_id, cycle, req.spec.spec, projected_usd, repeat=req.key[2])

        def on_result(call: JudgeCall, recorded: bool, cycle=cycle) -> str:
            decided = store.record_verdict(conn, run_id, cycle, call, recorded, repeat=call.key[2])
            return _result_line(cycle, decided, call, recorded, rubric.dims, call.key[2])

        def judge(requests: list, cycle=cycle, on_result=on_result, on_start=on_start) -> None:
            if requests:
                panel.judge(requests, label=f"cycle {cycle}/{opts.cycles}", on_result=on_result, on_start=on_start,
                            say=say)

        if batched:
            _judge_batched(conn, run_id, cycle, requests, panel, batching, rubric, say, judge)
        else:
            judge(requests)
        decided = store.cycle_decision(conn, run_id, cycle)
        say(f"cycle {cycle}: {decided['verdict']} ({decided['contributed']} of {decided['panel']} models "
            f"contributed)")
        failed = store.calls_to_make(conn, run_id, cycle, panel.models, opts.repeats)
        if failed:
            named = [m + (f" repeat {r}" if r > 1 else "") for m, r in failed]
            say(f"cycle {cycle}: {plural(len(failed), 'call')} failed outside the judges' content "
                f"({', '.join(named)}): run {run_id} stays open, and running the same command again retries "
                f"{'it' if len(failed) == 1 else 'them'}")
            return False
        if decided["verdict"] in ("pass", "inconclusive"):
            break
    return True


def _judge_batched(conn, run_id: int, cycle: int, requests: list, panel: Panel, batching, rubric,
                   say: Callable[[str], None], judge: Callable[[list], None]) -> None:
    """A cycle's live calls through the providers' batch APIs (Panel.batch): the calls that cannot
    be batched (recorded judges, providers without a batch API) first, one by one, once the run's
    submitted batches are held against the budget; then the batches (those resumed, and the new ones),
    each result stored as its verdict; then, with --batch-fallback sync, the requests a batch failed,
    one by one."""

    def on_submit(req, projected_usd) -> None:
        store.record_start(conn, run_id, cycle, req.spec.spec, projected_usd, repeat=req.key[2])

    def on_result(call) -> str:
        decided = store.record_verdict(conn, run_id, cycle, call, False, repeat=call.key[2])
        return _result_line(cycle, decided, call, False, rubric.dims, repeat=call.key[2])

    def item(req) -> str:  # a batch's item names the repeat after the first (a run of one repeat reads as before)
        return f"cycle {cycle} {req.spec.spec}" + (f" repeat {req.key[2]}" if req.key[2] > 1 else "")

    left = panel.batch(requests, conn=conn, suite=SUITE, run_key=str(run_id), item=item,
                       on_submit=on_submit, on_result=on_result, options=batching, say=say, one_by_one=judge)
    judge(left)


# --- replay and regress ------------------------------------------------------------------------


def parse_from_db(text: str) -> tuple[tuple[str, str, str, str] | None, str, int | None]:
    """--from-db: a run id, or 'c-p-m-r' or a receipt's file name (with .recorded for a run judged by
    recorded replies), as (fingerprints, judges, run id)."""
    if text.strip().isdigit():
        return None, "live", int(text)
    name = Path(text).name.removesuffix(".json").removeprefix(f"{SUITE}-")
    judges = "recorded" if name.endswith(".recorded") else "live"
    parts = name.removesuffix(".recorded").split("-")
    if len(parts) != 4 or not all(len(p) == 8 and all(c in "0123456789abcdef" for c in p) for p in parts):
        raise EvalledgerError(f"--from-db: expected a run id, or CORPUS-PROMPT-MODELS-RUBRIC (four 8-hex "
                              f"fingerprints, .recorded for recorded judges), got {text!r}")
    return tuple(parts), judges, None  # type: ignore[return-value]


def rebuild_from_db(text: str) -> Outcome:
    """A completed run's receipt from the database, and its disk copy written again."""
    shas, judges, run_id = parse_from_db(text)
    with db.transaction("runner") as conn:
        if run_id is not None:
            found = store.receipt_by_id(conn, run_id)
            if found is None:
                raise EvalledgerError(f"--from-db: no takes-quality run {run_id} in the database")
            if not found["complete"]:
                raise EvalledgerError(f"--from-db: takes-quality run {run_id} is open (not final): running its "
                                      "eval again retries the calls that failed")
            receipt = found["receipt_json"]
        else:
            receipt = store.receipt_from_db(conn, shas, judges)
            if receipt is None:
                other = "live judges: leave .recorded out" if judges == "recorded" else \
                    "recorded replies: add .recorded, as its file name has it"
                raise EvalledgerError(f"--from-db: no completed takes-quality run {'-'.join(shas)} "
                                      f"({judges} judges) in the database; for a run judged by {other}")
        dims = store.rubric_dims(conn, receipt["rubric_version"])
        if isinstance(receipt.get("run_id"), int):  # the disk copy as the run wrote it
            receipt = _disk_copy(conn, receipt["run_id"], receipt, dims)
        else:
            receipt = receipts.ordered(receipt, dims)
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
