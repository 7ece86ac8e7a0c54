"""Bench: the runner's and the ledger's own time per judge call of a takes-quality run, batched
(`--batch`) against synchronous, with the provider taking no time at all.

The stand-in (tests/standin, in this process) answers every call and every batch at once (latency 0,
a batch done at its first poll), so what a call costs here is evalledger's own work: for a
synchronous call its started row, the SDK round trip and its verdict row; for a batched one its
share of the batch's rows (the batch, its request, the started row, the submitted and status
events, the result row with the verdict in one transaction), the upload, the create, one poll and
the read of the results. Each run judges 6 takes with 6 models (2 OpenAI, 2 Anthropic, 2 Gemini,
each Gemini model a batch of its own through the google-genai SDK: every call batchable), alternating synchronous and batched runs of the same eval (`--rerun`) on a scratch
database (DATABASE_URL's server, else a throwaway embedded one).

    .venv/bin/python bench/batch_calls.py [--runs 8]
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import statistics
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from evalledger.core import db  # noqa: E402
from evalledger.core.scratch import migrated_database, server  # noqa: E402
from evalledger.suites.takes_quality import corpus as takes, run as tq  # noqa: E402
from tests.standin import StandIn  # noqa: E402

MODELS = ("openai:gpt-4o,anthropic:claude-opus-4-7,openai:gpt-4o-mini,anthropic:claude-sonnet-4-6,"
          "google:gemini-1.5-pro,google:gemini-2.0-flash")
TAKES = [{"slug": f"b/t{i}", "kind": "take", "holder": "ann", "weight": 0.5, "since": "2026-01",
          "source": "notes", "claim": f"Claim number {i} about the market."} for i in range(6)]


def one_run(batch: str, rerun: bool) -> tuple[float, int]:
    opts = tq.RunOptions(models=MODELS, limit=6, seed=5, judges="live", batch=batch, rerun=rerun, concurrency=8)
    started = time.perf_counter()
    outcome = tq.run(opts, say=lambda line: None)
    elapsed = time.perf_counter() - started
    calls = outcome.receipt["calls"]
    assert outcome.receipt["final"], outcome.receipt
    return elapsed, calls["sync"] + calls["batch"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=8, help="runs of each kind, alternating")
    args = parser.parse_args()
    home = tempfile.mkdtemp(prefix="evalledger-bench-batch-")
    os.environ["EVALLEDGER_HOME"] = home
    with StandIn() as standin, server() as url, migrated_database(url, "evalledger_bench_batch") as dsn:
        os.environ.update(standin.env())
        db.use_database_url(dsn)
        path = pathlib.Path(home) / "takes.jsonl"
        path.write_text("".join(json.dumps(t) + "\n" for t in TAKES))
        with db.transaction("runner", dsn) as conn:
            takes.load(conn, takes.read_lines(path))
        one_run("off", False)  # warm-up: the SDKs' imports, the first connections
        per_call: dict[str, list[float]] = {"off": [], "on": []}
        for _ in range(args.runs):
            for mode in ("off", "on"):
                before = len(standin.batch_creates)
                elapsed, calls = one_run(mode, True)
                assert (len(standin.batch_creates) > before) == (mode == "on")
                per_call[mode].append(elapsed * 1000 / calls)
        load = os.getloadavg()[0]
    sync, batched = statistics.median(per_call["off"]), statistics.median(per_call["on"])
    print(f"takes-quality, 6 takes x {len(MODELS.split(','))} models, provider time 0, {args.runs} runs each "
          f"(load {load:.1f})")
    print(f"  synchronous  {sync:7.1f} ms a call (median; {min(per_call['off']):.1f} to {max(per_call['off']):.1f})")
    print(f"  batched      {batched:7.1f} ms a call (median; {min(per_call['on']):.1f} to {max(per_call['on']):.1f}), "
          f"polling included")
    print(f"  batched / synchronous {batched / sync:.2f}")


if __name__ == "__main__":
    main()
