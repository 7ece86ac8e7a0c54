"""Bench: what capture_candidate costs its caller, and the background writer against one INSERT per row.

Figures, all measured in this run on the same server:
  caller p50/p99/max us   time capture_candidate adds to a caller (perf_counter_ns around each
                          call, writer thread running and writing meanwhile)
  writer rows/s           CaptureWriter batches (validate, scrub_pii, one INSERT ... SELECT FROM
                          json_populate_recordset per batch as the runner, dedupe trigger,
                          commit per batch)
  one INSERT per row      the same rows, one INSERT + COMMIT each, as the runner
  ratio                   writer / one-INSERT-per-row
  scrubber MB/s           scrub_pii over bench/scrub.py's corpus

It uses DATABASE_URL's server when set, else a throwaway embedded server in a temporary
EVALLEDGER_HOME (stopped and removed at the end); either way in a database of its own.

    .venv/bin/python bench/capture.py [--calls 200000] [--rows 50000] [--single 3000]
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
import uuid
from pathlib import Path

import psycopg

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "runner"))
sys.path.insert(0, str(ROOT / "bench"))

from evalledger.suites.capture import api as capture  # noqa: E402
from evalledger.suites.capture.rows import COLUMNS, normalize  # noqa: E402
from evalledger.suites.capture.writer import CaptureWriter  # noqa: E402
from evalledger.core import scratch  # noqa: E402

QUERY = "how did the Q3 renewal forecast for the enterprise segment change after the pricing update?"


def row(i: int) -> dict:
    return {"tool_name": "query" if i % 3 else "search", "query": f"{QUERY} #{i}",
            "retrieved_slugs": [f"doc/{i % 97}", f"doc/{i % 89}"], "retrieved_chunk_ids": [i, i + 1, i + 1],
            "source_ids": ["crm"], "expand_enabled": None if i % 3 == 0 else True, "detail": "medium",
            "detail_resolved": "medium", "vector_enabled": True, "expansion_applied": False,
            "latency_ms": 120.5, "remote": True, "job_id": None, "subagent_id": None}



def caller_overhead(dsn: str, home: Path, calls: int) -> list[int]:
    capture.configure(enabled=True, dsn=dsn, home=home)
    args = row(1)
    kwargs = {k: v for k, v in args.items() if k not in ("tool_name", "query")}
    samples = []
    clock = time.perf_counter_ns
    for i in range(calls):
        t0 = clock()
        capture.capture_candidate("query", QUERY, **kwargs)
        samples.append(clock() - t0)
        if i % 1000 == 999:
            time.sleep(0.001)  # a handler does other work between calls; let the writer run
    capture.close(60)
    return samples


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=200_000)
    parser.add_argument("--rows", type=int, default=50_000)
    parser.add_argument("--single", type=int, default=3_000)
    args = parser.parse_args()

    spool_home = Path(tempfile.mkdtemp(prefix="evalledger-bench-spool-"))
    with scratch.server() as server_url, scratch.migrated_database(server_url, "evalledger_capture_bench") as dsn:
        try:

            samples = caller_overhead(dsn, spool_home, args.calls)
            samples.sort()
            p50 = samples[len(samples) // 2] / 1000
            p99 = samples[int(len(samples) * 0.99)] / 1000
            print(f"caller: {len(samples)} calls of capture_candidate, writer running")
            print(f"  p50 {p50:.2f} us   p99 {p99:.2f} us   max {samples[-1] / 1000:.0f} us   "
                  f"(target p99 <= 50 us: {'met' if p99 <= 50 else 'NOT met'})")

            rows = [row(i) for i in range(args.rows)]
            writer = CaptureWriter(dsn, home=spool_home, background=False)
            t0 = time.perf_counter()
            for start in range(0, len(rows), writer.batch_size):
                writer.write(rows[start:start + writer.batch_size])
            writer_s = time.perf_counter() - t0
            writer.close(0)
            assert writer.stats.written == len(rows), writer.stats

            columns = COLUMNS
            insert = (f"INSERT INTO evalledger.eval_candidates ({', '.join(columns)}) "
                      f"VALUES ({', '.join(['%s'] * len(columns))})")
            single = [normalize(dict(r)) for r in rows[: args.single]]
            with psycopg.connect(dsn, autocommit=True) as conn:
                conn.execute("SET ROLE evalledger_runner")
                t0 = time.perf_counter()
                for r in single:
                    conn.execute(insert, [uuid.uuid4() if c == "capture_key" else r[c] for c in columns])
                single_s = time.perf_counter() - t0
            writer_rate = len(rows) / writer_s
            single_rate = len(single) / single_s
            print(f"writer: {len(rows)} rows in {writer_s:.2f} s = {writer_rate:,.0f} rows/s "
                  f"(batches of {writer.batch_size}, scrub_pii on, one INSERT per batch)")
            print(f"one INSERT per row (autocommit, as the runner): {len(single)} rows in {single_s:.2f} s "
                  f"= {single_rate:,.0f} rows/s")
            print(f"  ratio {writer_rate / single_rate:.1f}x (target >= 10x: "
                  f"{'met' if writer_rate / single_rate >= 10 else 'NOT met'})")

            import scrub as scrub_bench  # bench/scrub.py
            import random

            from evalledger.suites.capture.scrub import scrub_pii

            text = scrub_bench.corpus(random.Random(7))
            seconds = min(scrub_bench.timed(scrub_pii, text) for _ in range(3))
            print(f"scrubber: {len(text.encode()) / 1e6 / seconds:.1f} MB/s over bench/scrub.py's corpus")
        finally:
            shutil.rmtree(spool_home, ignore_errors=True)


if __name__ == "__main__":
    main()
