"""Bench: a takes-quality run with --repeats 3 against the same run with --repeats 1, at the same
concurrency, against the provider stand-in at a fixed latency (issue 36, item 4).

With K repeats each judge is asked K times per cycle; the repeats go out together, so the panel's
concurrency runs them at once and the run should take little longer than one repeat (the aim is
under 1.5x). Each round runs `run takes-quality` as the CLI does (minus its printing): K=1 then K=3,
each a new judging of the eval (--rerun), every call stored as it arrives; the figures are the
medians over the rounds, after a warm-up run of each (SDK imports, first connections). Columns:
  wall s     the whole run: the run row, the calls (3 judges x K), each verdict stored, the
             completion that decides it and writes its receipt
  calls      the judge calls the stand-in answered
  ratio      median wall of K=3 over median wall of K=1 (the aim: under 1.5)
It starts its own database (DATABASE_URL's server when set, else a throwaway embedded one) and
runs the stand-in in a child process, so the wall time is the runner's alone.

    .venv/bin/python bench/judge_repeats.py [--latency-ms 500] [--concurrency 8] [--rounds 5] [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from evalledger.core.scratch import migrated_database, server  # noqa: E402
from tests.standin import StandIn  # noqa: E402

PANEL = ["openai:gpt-4o", "anthropic:claude-opus-4-7", "google:gemini-1.5-pro"]
TAKES = [{"slug": f"bench/{i}", "kind": "take", "holder": "ann", "weight": 0.6, "since": "2026-01",
          "source": "meeting notes", "claim": f"Company {i} will double revenue next year."} for i in range(20)]


def _serve_in_child(latency_s: float, conn) -> None:
    with StandIn() as standin:
        standin.latency_s = latency_s
        conn.send(standin.env())
        while True:
            message = conn.recv()
            if message == "stop":
                return
            conn.send(len(standin.requests))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency-ms", type=float, default=500)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()

    parent_conn, child_conn = multiprocessing.Pipe()
    child = multiprocessing.Process(target=_serve_in_child, args=(args.latency_ms / 1000, child_conn), daemon=True)
    child.start()
    os.environ.update(parent_conn.recv())
    os.environ["EVALLEDGER_HOME"] = tempfile.mkdtemp(prefix="evalledger-bench-repeats-")
    corpus = Path(os.environ["EVALLEDGER_HOME"]) / "takes.jsonl"
    corpus.write_text("".join(json.dumps(t) + "\n" for t in TAKES))

    from evalledger.judges.providers import call_session
    from evalledger.suites.takes_quality import run as takes_quality

    def one(repeats: int) -> tuple[float, int]:
        parent_conn.send("count")
        before = parent_conn.recv()
        opts = takes_quality.RunOptions(models=list(PANEL), limit=len(TAKES), source="fs", path=str(corpus), seed=1,
                                        repeats=repeats, concurrency=args.concurrency, timeout_s=30, max_retries=0,
                                        rerun=True)
        start = time.perf_counter()
        with call_session(0):
            outcome = takes_quality.run(opts, say=lambda _line: None)
        wall = time.perf_counter() - start
        assert outcome.final and outcome.receipt.get("repeats", 1) == repeats, outcome.receipt
        parent_conn.send("count")
        return wall, parent_conn.recv() - before

    try:
        with server() as url, migrated_database(url, "evalledger_bench_repeats") as dsn:
            os.environ["DATABASE_URL"] = dsn
            one(1), one(args.repeats)  # warm-up
            walls: dict[int, list[float]] = {1: [], args.repeats: []}
            calls: dict[int, int] = {}
            for _ in range(args.rounds):
                for k in walls:
                    wall, made = one(k)
                    walls[k].append(wall)
                    calls[k] = made
            print(f"takes-quality, a panel of {len(PANEL)} judges, {args.latency_ms:.0f} ms stand-in latency, "
                  f"--concurrency {args.concurrency}, median of {args.rounds} rounds")
            print(f"{'repeats':>8} {'calls':>6} {'wall s':>8} {'min s':>7} {'max s':>7}")
            for k, seen in walls.items():
                print(f"{k:>8} {calls[k]:>6} {statistics.median(seen):>8.3f} {min(seen):>7.3f} {max(seen):>7.3f}")
            ratio = statistics.median(walls[args.repeats]) / statistics.median(walls[1])
            print(f"ratio --repeats {args.repeats} / --repeats 1: {ratio:.2f}x (aim: under 1.5x)")
    finally:
        parent_conn.send("stop")
        child.join(5)


if __name__ == "__main__":
    main()
