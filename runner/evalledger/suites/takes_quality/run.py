"""The takes-quality suite (seed 000): sample takes, render the judge prompt from the rubric row,
call the panel, INSERT each verdict as it arrives, and read back what the database decided.

Fingerprints (first 8 hex of a SHA-256):
- corpus_sha8: the takes block the judges saw (one JSON line per take, in sample order);
- prompt_sha8: the two prompt templates (system and user) as shipped;
- models_sha8: the sorted model ids, computed by the database (reordering --models keeps it);
- rubric_sha8: the rubric row's fingerprint, computed by the database (a new rubric changes it).
"""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

import jinja2
import psycopg
from psycopg.rows import dict_row
from psycopg.types.json import Jsonb

from evalledger.core import db

from . import corpus as takes, receipts
from evalledger.core.errors import EvalledgerError

if TYPE_CHECKING:  # the panel imports the provider SDKs: only `run` needs them
    from evalledger.judges.providers import JudgeCall

SUITE = "takes-quality"
DEFAULT_MODELS = "openai:gpt-4o,anthropic:claude-opus-4-7,google:gemini-1.5-pro"
TEMPLATES = ("takes_quality_system.j2", "takes_quality_user.j2")
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


@dataclass(frozen=True)
class Rubric:
    """A takes-quality rubric row."""

    rubric_id: int
    version: str
    fingerprint: str
    definition: dict

    @property
    def dims(self) -> list[str]:
        return [d["key"] for d in self.definition["dimensions"]]


# --- rubric and prompts ------------------------------------------------------------------


def load_rubric(conn: psycopg.Connection, version: str | None = None) -> Rubric:
    """The named takes-quality rubric version, else the newest."""
    row = conn.execute(
        "SELECT rubric_id, version, fingerprint, definition FROM evalledger.rubric "
        "WHERE suite = %s AND (%s::text IS NULL OR version = %s) ORDER BY rubric_id DESC LIMIT 1",
        (SUITE, version, version)).fetchone()
    if row is None:
        raise EvalledgerError(f"--rubric-version: no takes-quality rubric {version}" if version else
                              "no takes-quality rubric in the database: run `evalledger db migrate`")
    return Rubric(*row)


def _environment() -> jinja2.Environment:
    return jinja2.Environment(loader=jinja2.PackageLoader(__package__, "templates"), autoescape=False,
                              undefined=jinja2.StrictUndefined, keep_trailing_newline=False)


def template_source(name: str) -> str:
    return resources.files(__package__).joinpath("templates", name).read_text("utf-8")


def prompt_sha8() -> str:
    """Fingerprint of the prompt templates."""
    joined = "\x00".join(template_source(name) for name in TEMPLATES)
    return hashlib.sha256(joined.encode("utf-8")).hexdigest()[:8]


def takes_block(sample: list[takes.Take]) -> str:
    """The takes as the judge sees them: one escaped JSON line each."""
    return "\n".join(t.as_prompt_line(i) for i, t in enumerate(sample, start=1))


def corpus_sha8(block: str) -> str:
    return hashlib.sha256(block.encode("utf-8")).hexdigest()[:8]


def render(rubric: Rubric, sample: list[takes.Take], slug_prefix: str | None) -> tuple[str, str]:
    """(system, user) prompts rendered from the rubric row and the sample."""
    env = _environment()
    system = env.get_template(TEMPLATES[0]).render(rubric=rubric.definition)
    user = env.get_template(TEMPLATES[1]).render(takes=sample, takes_block=takes_block(sample),
                                                  slug_prefix=slug_prefix)
    return system.strip() + "\n", user.strip() + "\n"


def verdict_schema(rubric: Rubric) -> dict:
    """The structured-output schema of a judge's reply (strict-compatible)."""
    scale = rubric.definition["scale"]
    return {
        "title": "takes_quality_verdict",
        "type": "object",
        "properties": {
            "scores": {
                "type": "object",
                "properties": {d: {"type": "integer", "minimum": scale["min"], "maximum": scale["max"]}
                               for d in rubric.dims},
                "required": rubric.dims,
                "additionalProperties": False,
            },
            "feedback": {"type": "string"},
            "improvements": {"type": "array", "items": {"type": "string"}},
        },
        "required": ["scores", "feedback", "improvements"],
        "additionalProperties": False,
    }


# --- database ----------------------------------------------------------------------------


def start_or_find_run(conn: psycopg.Connection, **values) -> dict:
    """Insert the run row, or find the one with the same four fingerprints (complete or not)."""
    with conn.cursor(row_factory=dict_row) as cur:
        row = cur.execute(
            "INSERT INTO evalledger.eval_takes_quality_runs (rubric_id, target_id, corpus_source, corpus_path, "
            "slug_prefix, sample_limit, seed, n_takes, corpus_sha8, prompt_sha8, models) "
            "VALUES (%(rubric_id)s, %(target_id)s, %(corpus_source)s, %(corpus_path)s, %(slug_prefix)s, "
            "%(sample_limit)s, %(seed)s, %(n_takes)s, %(corpus_sha8)s, %(prompt_sha8)s, %(models)s) "
            "ON CONFLICT ON CONSTRAINT eval_takes_quality_runs_shas_key DO NOTHING "
            "RETURNING id, completed_at, receipt_json, models_sha8, rubric_sha8, true AS created",
            values).fetchone()
        if row is not None:
            return row
        models_sha8 = hashlib.sha256("\n".join(sorted(values["models"])).encode()).hexdigest()[:8]
        found = cur.execute(
            "SELECT id, completed_at, receipt_json, models_sha8, rubric_sha8, false AS created "
            "FROM evalledger.eval_takes_quality_runs r "
            "WHERE corpus_sha8 = %s AND prompt_sha8 = %s AND models_sha8 = %s "
            "AND rubric_sha8 = (SELECT left(fingerprint, 8) FROM evalledger.rubric WHERE rubric_id = %s)",
            (values["corpus_sha8"], values["prompt_sha8"], models_sha8, values["rubric_id"])).fetchone()
    if found is None:
        raise EvalledgerError("a run with these fingerprints exists but this role cannot read it")
    return found


def models_answered(conn: psycopg.Connection, run_id: int, cycle: int) -> set[str]:
    rows = conn.execute("SELECT model FROM evalledger.eval_takes_quality_judge_verdicts "
                        "WHERE run_id = %s AND cycle = %s", (run_id, cycle)).fetchall()
    return {r[0] for r in rows}


def record_verdict(conn: psycopg.Connection, run_id: int, cycle: int, call: JudgeCall, recorded: bool) -> dict | None:
    """INSERT one judge verdict; return what the database made of it (None if already there)."""
    from evalledger.judges import panel

    provider_failed = call.error_kind is not None
    with conn.cursor(row_factory=dict_row) as cur:
        return cur.execute(
            "INSERT INTO evalledger.eval_takes_quality_judge_verdicts (run_id, cycle, model, recorded, structured, "
            "response_json, raw_excerpt, error_kind, error_message, input_tokens, output_tokens, cost_usd, "
            "latency_ms, attempts) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s) "
            "ON CONFLICT ON CONSTRAINT eval_takes_quality_judge_verdicts_once DO NOTHING "
            "RETURNING model, contributes, error_kind, error_message, scores",
            (run_id, cycle, call.spec.spec, recorded, call.structured,
             None if provider_failed or call.parsed is None else Jsonb(panel.json_safe(call.parsed)),
             None if provider_failed else panel.raw_excerpt(call),
             call.error_kind, call.error_message if provider_failed else None,
             call.input_tokens, call.output_tokens, call.cost_usd or 0, call.latency_ms, call.attempts),
        ).fetchone()


def cycle_decision(conn: psycopg.Connection, run_id: int, cycle: int) -> dict:
    return conn.execute("SELECT evalledger.takes_quality_cycle_v1(%s, %s)", (run_id, cycle)).fetchone()[0]


def complete_run(conn: psycopg.Connection, run_id: int) -> dict:
    """Set completed_at; the database computes the verdict and the receipt."""
    row = conn.execute("UPDATE evalledger.eval_takes_quality_runs SET completed_at = now() "
                       "WHERE id = %s AND completed_at IS NULL RETURNING receipt_json", (run_id,)).fetchone()
    if row is None:  # completed meanwhile by an identical run
        row = conn.execute("SELECT receipt_json FROM evalledger.eval_takes_quality_runs WHERE id = %s",
                           (run_id,)).fetchone()
    return row[0]


def receipt_from_db(conn: psycopg.Connection, shas: tuple[str, str, str, str]) -> dict | None:
    row = conn.execute(
        "SELECT receipt_json FROM evalledger.eval_takes_quality_runs WHERE corpus_sha8 = %s AND prompt_sha8 = %s "
        "AND models_sha8 = %s AND rubric_sha8 = %s AND completed_at IS NOT NULL", shas).fetchone()
    return row[0] if row else None


def rubric_dims(conn: psycopg.Connection, version: str) -> list[str]:
    row = conn.execute("SELECT definition FROM evalledger.rubric WHERE suite = %s AND version = %s",
                       (SUITE, version)).fetchone()
    return [d["key"] for d in row[0]["dimensions"]] if row else []


# --- the run -----------------------------------------------------------------------------


def _result_line(cycle: int, decided: dict | None, call: JudgeCall, recorded: bool, dims: list[str]) -> str:
    if decided is None:
        return f"cycle {cycle}  {call.spec.spec}: already recorded"
    if decided["contributes"]:
        scores = " ".join(f"{k}={panel_num(decided['scores'][k])}" for k in dims if k in decided["scores"])
        status = f"ok  {scores}"
    else:
        status = decided["error_kind"] + (f": {decided['error_message']}" if decided["error_message"] else "")
    extra = "  recorded" if recorded else f"  ${call.cost_usd or 0:.4f}  {call.latency_ms} ms"
    return f"cycle {cycle}  {call.spec.spec}  {status}{extra}"


def panel_num(value: Any) -> str:
    return receipts._num(value)


def run(opts: RunOptions, *, say: Callable[[str], None], progress_stream=None) -> Outcome:
    """Run the suite end to end; `say` prints a progress line (or not)."""
    from evalledger.judges import panel
    from evalledger.judges.pricing import Budget
    from evalledger.judges.providers import BUDGET_EXHAUSTED, JudgeRequest

    specs = panel.parse_panel(opts.models)
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
    budget = Budget(opts.budget_usd)
    if budget.cap_usd is not None:
        budget.check_prices(specs)  # before any call, and before any row
    modes = panel.resolve_modes(specs, __package__, opts.judges)
    seed = opts.seed if opts.seed is not None else random.SystemRandom().randrange(2**31)

    fs_takes = takes.read_path(Path(opts.path)) if opts.source == "fs" else None
    conn = db.connect(role="runner", autocommit=True)
    try:
        rubric = load_rubric(conn, opts.rubric_version)
        if fs_takes is not None:
            sample = takes.sample_takes(fs_takes, seed=seed, limit=opts.limit, slug_prefix=opts.slug_prefix)
        else:
            sample = takes.sample_db(conn, seed=seed, limit=opts.limit, slug_prefix=opts.slug_prefix)
        if not sample:
            where = f"in {opts.path}" if fs_takes is not None else "in the database (load some with `evalledger corpus load FILE.jsonl`)"
            prefix = f" with slug prefix {opts.slug_prefix!r}" if opts.slug_prefix else ""
            raise EvalledgerError(f"no takes{prefix} {where}")
        system, user = render(rubric, sample, opts.slug_prefix)
        block = takes_block(sample)
        row = start_or_find_run(
            conn, rubric_id=rubric.rubric_id, target_id=opts.target, corpus_source=opts.source,
            corpus_path=opts.path if opts.source == "fs" else None, slug_prefix=opts.slug_prefix,
            sample_limit=opts.limit, seed=seed, n_takes=len(sample), corpus_sha8=corpus_sha8(block),
            prompt_sha8=prompt_sha8(), models=[s.spec for s in specs])
        run_id = row["id"]
        recorded_models = [s.spec for s in specs if modes[s.spec] == panel.RECORDED]
        say(f"takes-quality: {len(sample)} takes from {opts.source}"
            f"{' ' + opts.path if opts.source == 'fs' else ''}, slug prefix "
            f"{repr(opts.slug_prefix) if opts.slug_prefix else 'none'}, seed {seed}; rubric {rubric.version} "
            f"({rubric.fingerprint[:8]}); run {run_id}")
        if row["completed_at"] is not None:
            say(f"run {run_id} with these four fingerprints was recorded earlier: reading it back, no calls made")
            receipt = receipts.ordered(row["receipt_json"], rubric.dims)
            return Outcome(receipt, receipts.save(receipt), already_recorded=True)
        if not row["created"]:
            say(f"run {run_id} was started earlier and never completed: resuming it")
        if recorded_models:
            if len(recorded_models) == len(specs):
                say("judges: recorded replies shipped with evalledger, not live calls "
                    "(no API keys in the environment; set them for live judges)")
            else:
                say(f"judges: recorded replies for {', '.join(recorded_models)} (no API key), live calls for the rest")

        schema = verdict_schema(rubric)
        progress = panel.Progress(len(specs), progress_stream)
        for cycle in range(1, opts.cycles + 1):
            todo = [s for s in specs if s.spec not in models_answered(conn, run_id, cycle)]
            requests = [JudgeRequest(s, system=system, user=user, json_schema=schema,
                                     max_output_tokens=MAX_OUTPUT_TOKENS, key=(cycle, s.spec)) for s in todo]
            skipped = []

            def on_result(call: JudgeCall, cycle=cycle, skipped=skipped) -> None:
                recorded = modes[call.spec.spec] == panel.RECORDED
                decided = record_verdict(conn, run_id, cycle, call, recorded)
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
            decided = cycle_decision(conn, run_id, cycle)
            say(f"cycle {cycle}: {decided['verdict']} ({decided['contributed']} of {decided['panel']} models "
                f"contributed)")
            if decided["verdict"] in ("pass", "inconclusive"):
                break
            if skipped:
                say("budget cap reached: no further cycles")
                break
        receipt = receipts.ordered(complete_run(conn, run_id), rubric.dims)
        return Outcome(receipt, receipts.save(receipt))
    except psycopg.Error as exc:
        raise db.explain(exc) from None
    finally:
        conn.close()


# --- replay, trend, regress ----------------------------------------------------------------


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
        receipt = receipt_from_db(conn, shas)
        if receipt is None:
            raise EvalledgerError(f"--from-db: no completed takes-quality run {'-'.join(shas)} in the database")
        receipt = receipts.ordered(receipt, rubric_dims(conn, receipt["rubric_version"]))
    return Outcome(receipt, receipts.save(receipt))


TREND_SQL = """
SELECT r.id, r.receipt_json ->> 'ts' AS ts, b.version AS rubric_version, r.rubric_sha8, r.verdict,
       r.overall_score, r.cost_usd, r.corpus_sha8
  FROM evalledger.eval_takes_quality_runs r
  JOIN evalledger.rubric b ON b.rubric_id = r.rubric_id
 WHERE r.completed_at IS NOT NULL AND (%(version)s::text IS NULL OR b.version = %(version)s)
 ORDER BY max(r.started_at) OVER (PARTITION BY r.rubric_id) DESC, r.rubric_id DESC, r.started_at DESC, r.id DESC
 LIMIT %(limit)s
"""


def trend_rows(limit: int, rubric_version: str | None) -> list[dict]:
    """Completed runs, newest rubric epoch first, newest run first within an epoch."""
    if limit < 1:
        raise EvalledgerError(f"--limit must be at least 1, got {limit}")
    with db.transaction("runner") as conn, conn.cursor(row_factory=dict_row) as cur:
        rows = cur.execute(TREND_SQL, {"version": rubric_version, "limit": limit}).fetchall()
    for row in rows:
        for key in ("overall_score", "cost_usd"):
            if row[key] is not None:
                row[key] = float(row[key])
    return rows


TREND_RULE = "─" * 77


def trend_text(rows: list[dict]) -> str:
    """Seed 000's plain table; a blank line separates rubric epochs."""
    lines = [f"{'ts':<22}{'rubric':<10}{'verdict':<15}{'overall':<10}{'cost':<12}corpus", TREND_RULE]
    previous = None
    for row in rows:
        epoch = (row["rubric_version"], row["rubric_sha8"])
        if previous is not None and epoch != previous:
            lines.append("")
        previous = epoch
        overall = "-" if row["overall_score"] is None else f"{row['overall_score']:.1f}"
        lines.append(f"{row['ts'][:19]:<22}{row['rubric_version']:<10}{row['verdict']:<15}{overall:<10}"
                     f"{'$' + format(row['cost_usd'], '.2f'):<12}{row['corpus_sha8']}")
    return "\n".join(lines) + "\n"


def trend_json(rows: list[dict]) -> dict:
    """Seed 000's --json shape (rubric_sha8 added per row)."""
    return {"schema_version": 1, "rows": [
        {"id": r["id"], "ts": r["ts"], "rubric_version": r["rubric_version"], "verdict": r["verdict"],
         "overall_score": r["overall_score"], "cost_usd": r["cost_usd"], "corpus_sha8": r["corpus_sha8"],
         "rubric_sha8": r["rubric_sha8"]} for r in rows]}


@dataclass
class Comparison:
    """A regress comparison: per dimension (and overall) baseline, now, delta, regressed."""

    rows: list[tuple[str, float | None, float | None, float | None, bool]]
    warnings: list[str]
    comparable: bool

    @property
    def regressed(self) -> list[str]:
        return [name for name, *_, bad in self.rows if bad]


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


def compare(baseline: dict, now: dict, threshold: float) -> Comparison:
    """Which dimension means (and the overall) dropped by more than threshold."""
    warnings = [f"{name} differs: {a} (baseline) vs {b} (now)"
                for name, a, b in (("corpus_sha8", baseline["corpus"]["corpus_sha8"], now["corpus"]["corpus_sha8"]),
                                   ("prompt_sha8", baseline["prompt_sha8"], now["prompt_sha8"]),
                                   ("rubric_sha8", baseline["rubric_sha8"], now["rubric_sha8"]))
                if a != b]
    rows = []
    comparable = True
    pairs = [(d, (baseline["scores"].get(d) or {}).get("mean"), (now["scores"].get(d) or {}).get("mean"))
             for d in baseline["scores"]]
    pairs.append(("overall", baseline.get("overall_score"), now.get("overall_score")))
    for name, before, after in pairs:
        if not isinstance(before, (int, float)) or not isinstance(after, (int, float)):
            comparable = False
            rows.append((name, before, after, None, False))
            continue
        delta = round(after - before, 4)
        rows.append((name, before, after, delta, -delta > threshold))
    return Comparison(rows, warnings, comparable)


def comparison_text(cmp: Comparison, threshold: float) -> str:
    fmt = lambda v: "-" if v is None else f"{v:.2f}"  # noqa: E731
    lines = [f"{'dimension':<22}{'baseline':>9}{'now':>9}{'delta':>9}"]
    for name, before, after, delta, bad in cmp.rows:
        sign = "" if delta is None else ("+" if delta >= 0 else "")
        lines.append(f"{name:<22}{fmt(before):>9}{fmt(after):>9}{sign + fmt(delta) if delta is not None else '-':>9}"
                     f"{'  regression' if bad else ''}")
    return "\n".join(lines) + "\n"
