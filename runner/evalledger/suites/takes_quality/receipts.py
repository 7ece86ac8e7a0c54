"""takes-quality receipts (seed 000, schema_version 1): disk copies, reading, and rendering.

The database builds a receipt (takes_quality_receipt_v3) when a run completes; this module only
orders its keys for people, writes the disk copy atomically, reads one back (no database
needed) and renders it as text. It never recomputes a verdict.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

import jsonschema

from evalledger.core.embedded import evalledger_home
from evalledger.core import files, reader
from evalledger.core.errors import EXIT_FAIL, EXIT_INCONCLUSIVE, EXIT_OK, EvalledgerError
from evalledger.core.paths import read_package_text

SCHEMA_VERSION = 1
SUITE = "takes-quality"
SCHEMA_FILE = "schemas/takes_quality_receipt.v1.schema.json"  # the contract, for consumers
EXIT_BY_VERDICT = {"pass": EXIT_OK, "fail": EXIT_FAIL, "inconclusive": EXIT_INCONCLUSIVE}
# Seed 000's field order, then the optional fields this runner adds.
ORDER = ("schema_version", "ts", "rubric_version", "rubric_sha8", "corpus", "prompt_sha8", "models_sha8",
         "models", "cycles_run", "successes_per_cycle", "verdict", "scores", "overall_score", "cost_usd",
         "improvements", "errors", "verdictMessage", "judges", "final", "rerun", "seed", "run_id")
CORPUS_ORDER = ("source", "n_takes", "slug_prefix", "corpus_sha8", "path")
DIM_ORDER = ("mean", "min", "max", "scores", "per_model", "stderr", "ci95")
REQUIRED = ORDER[:17]
SHA_FIELDS = ("corpus_sha8", "prompt_sha8", "models_sha8", "rubric_sha8")


def receipts_dir() -> Path:
    """$EVALLEDGER_HOME/eval-receipts."""
    return evalledger_home() / "eval-receipts"


def shas_of(receipt: dict) -> tuple[str, str, str, str]:
    """(corpus, prompt, models, rubric) fingerprints."""
    return (receipt["corpus"]["corpus_sha8"], receipt["prompt_sha8"], receipt["models_sha8"], receipt["rubric_sha8"])


def file_name(receipt: dict) -> str:
    """takes-quality-<corpus>-<prompt>-<models>-<rubric>.json (the seed's name), with .recorded
    before .json for a run judged by recorded replies, so that one never overwrites a live one."""
    recorded = ".recorded" if receipt.get("judges") == "recorded" else ""
    return f"{SUITE}-{'-'.join(shas_of(receipt))}{recorded}.json"


def ordered(receipt: dict, dims: list[str] | None = None) -> dict:
    """The receipt with keys in the seed's order (dimensions in rubric order), for people."""
    out: dict[str, Any] = {k: receipt[k] for k in ORDER if k in receipt}
    out.update({k: v for k, v in receipt.items() if k not in out})
    corpus = receipt.get("corpus")
    if isinstance(corpus, dict):
        out["corpus"] = {k: corpus[k] for k in CORPUS_ORDER if k in corpus} | corpus
    scores = receipt.get("scores")
    if isinstance(scores, dict):
        names = [d for d in (dims or []) if d in scores] + [d for d in scores if d not in (dims or [])]
        out["scores"] = {}
        for name in names:
            dim = scores[name]
            if isinstance(dim, dict):
                per_model = dim.get("per_model")
                if isinstance(per_model, dict) and isinstance(receipt.get("models"), list):
                    rank = {m: i for i, m in enumerate(receipt["models"])}
                    dim = {**dim, "per_model": dict(sorted(per_model.items(), key=lambda kv: rank.get(kv[0], 1 << 30)))}
                dim = {k: dim[k] for k in DIM_ORDER if k in dim} | dim
            out["scores"][name] = dim
    return out


def dumps(receipt: dict) -> str:
    """The receipt as pretty JSON with a final newline."""
    return json.dumps(receipt, indent=2, ensure_ascii=False) + "\n"


def write_atomic(path: Path, text: str) -> None:
    """Write text to path so a reader sees the old file or the new one, never half of it (its
    folder made first)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    files.write_atomic(path, text)


def save(receipt: dict) -> Path:
    """Write the disk copy under $EVALLEDGER_HOME/eval-receipts; return its path. When it cannot be
    written (a full disk, a folder not writable), the error says how to write it again: the run is
    in the ledger whatever happened to its file."""
    path = receipts_dir() / file_name(receipt)
    try:
        write_atomic(path, dumps(receipt))
    except OSError as exc:
        run = receipt.get("run_id")
        if receipt.get("final") is False:
            repair = "the run stays open in the ledger; running the same command again retries it and writes the file"
        else:
            repair = (f"run {run} is complete in the ledger: `evalledger replay --from-db {run}` writes the file "
                      "again once it can be written")
        raise EvalledgerError(f"{path}: cannot write the receipt ({exc.strerror or exc}); {repair}") from None
    return path


def check(document: reader.Document) -> dict:
    """A receipt this runner can read: schema_version 1 and every seed field present, or the
    refusal naming FILE:LINE: $.field."""
    receipt = document.value
    if not isinstance(receipt, dict):
        raise document.refuse((), "a receipt is a JSON object")
    version = receipt.get("schema_version")
    if version != SCHEMA_VERSION:
        raise document.refuse(("schema_version",), f"unsupported receipt schema_version {json.dumps(version)} "
                                                   f"(this evalledger reads {SCHEMA_VERSION})")
    for field in REQUIRED:
        if field not in receipt:
            raise document.refuse((field,), "missing")
    if receipt["verdict"] not in EXIT_BY_VERDICT:
        raise document.refuse(("verdict",), f"expected pass, fail or inconclusive, got {json.dumps(receipt['verdict'])}")
    corpus = receipt["corpus"]
    if not isinstance(corpus, dict):
        raise document.refuse(("corpus",), "expected an object")
    for field in ("source", "n_takes", "slug_prefix", "corpus_sha8"):
        if field not in corpus:
            raise document.refuse(("corpus", field), "missing")
    for field in ("models", "successes_per_cycle", "improvements", "errors"):
        if not isinstance(receipt[field], list):
            raise document.refuse((field,), "expected an array")
    if not isinstance(receipt["scores"], dict):
        raise document.refuse(("scores",), "expected an object")
    # The rest of the shipped contract: a baseline whose score is "high" or whose mean is text would
    # otherwise render as given and compare as "no mean" (an inconclusive regress), not be refused.
    problems = reader.schema_problems(_validator(), receipt)
    if problems:
        raise document.refuse(*min(problems, key=lambda problem: [str(p) for p in problem[0]]))
    return receipt


@functools.cache
def _validator() -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(json.loads(read_package_text(SCHEMA_FILE, package=__package__)))


def load(path: Path) -> dict:
    """Read and check a receipt file."""
    return check(reader.read_json(path, "receipt file"))


def exit_code(receipt: dict) -> int:
    """0 pass, 1 fail, 2 inconclusive."""
    return EXIT_BY_VERDICT[receipt["verdict"]]


def num(value: Any, places: int = 2) -> str:
    if value is None:
        return "-"
    if isinstance(value, (int, float)):
        text = f"{value:.{places}f}".rstrip("0").rstrip(".")
        return text or "0"
    return str(value)


JUDGE_LABELS = {
    "live": "live calls",
    "recorded": "recorded replies shipped with evalledger (no live calls)",
    "mixed": "some live calls, some recorded replies shipped with evalledger",
}


def shown_prefix(prefix: str | None) -> str:
    """A slug prefix as the receipt's text and regress show it: quoted, or none."""
    return json.dumps(prefix, ensure_ascii=False) if prefix is not None else "none"


def render(receipt: dict) -> str:
    """The receipt as text, the same for `run` and `replay`."""
    corpus = receipt["corpus"]
    lines = [
        f"verdict   {str(receipt['verdict']).upper()}",
        f"          {receipt['verdictMessage']}",
        f"rubric    {receipt['rubric_version']} ({receipt['rubric_sha8']})",
        f"corpus    {corpus['source']}{' ' + corpus['path'] if corpus.get('path') else ''}, "
        f"{corpus['n_takes']} takes, slug prefix {shown_prefix(corpus['slug_prefix'])}"
        f"{', seed ' + str(receipt['seed']) if receipt.get('seed') is not None else ''} ({corpus['corpus_sha8']})",
        f"prompt    {receipt['prompt_sha8']}",
        f"models    {', '.join(receipt['models'])} ({receipt['models_sha8']})",
    ]
    if receipt.get("judges"):
        lines.append(f"judges    {JUDGE_LABELS.get(receipt['judges'], receipt['judges'])}")
    lines.append(f"cycles    {receipt['cycles_run']} (contributing models per cycle: "
                 f"{', '.join(str(n) for n in receipt['successes_per_cycle'])})")
    width = max([len(d) for d in receipt["scores"]] + [9])
    lines.append(f"scores    {'dimension':<{width}}  {'mean':>6} {'min':>5} {'max':>5}  per model")
    for name, dim in receipt["scores"].items():
        per_model = dim.get("per_model") or {}
        shown = " ".join(num(per_model[m]) if m in per_model else "-" for m in receipt["models"])
        lines.append(f"          {name:<{width}}  {num(dim.get('mean')):>6} {num(dim.get('min')):>5} "
                     f"{num(dim.get('max')):>5}  {shown}")
    lines.append(f"overall   {num(receipt['overall_score'])}")
    lines.append(f"cost      ${receipt['cost_usd']:.4f}" if isinstance(receipt["cost_usd"], (int, float))
                 else f"cost      {receipt['cost_usd']}")
    lines.append(f"ts        {receipt['ts']}")
    if receipt["improvements"]:
        lines.append("improvements")
        lines.extend(f"  - {item}" for item in receipt["improvements"])
    if receipt["errors"]:
        lines.append("errors")
        lines.extend(f"  - {item}" for item in receipt["errors"])
    else:
        lines.append("errors    none")
    return "\n".join(lines) + "\n"
