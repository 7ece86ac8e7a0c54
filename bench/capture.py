"""Bench: what capture_candidate costs its caller, and the background writer against one INSERT per row.

Figures, all measured in this run on the same server:
  caller p50/p99/max us   time capture_candidate adds to a caller (perf_counter_ns around each
                          call, writer thread running and writing meanwhile)
  writer rows/s           CaptureWriter batches (validate, scrub_pii, one INSERT ... SELECT FROM
                          json_populate_recordset per batch as the runner, the dedupe keys,
                          commit per batch)
  control p50/p99/max us  the same loop around a call that does nothing (no writer thread): what the
                          machine itself (scheduling, other processes) adds to any call
  GC pauses               the garbage collector's longest pause during the caller loop; the loop is
                          timed again after gc.freeze(), which takes the process's start-up heap out
                          of every later collection (what an application that cannot afford a pause does)
  COPY rows/s             the same rows, already validated and scrubbed, COPY'd by the installer
                          into bench.eval_candidates (LIKE eval_candidates: defaults, CHECKs,
                          indexes; no partitions, no triggers, no RLS), one COPY + COMMIT per batch
  one INSERT per row      the same rows, one INSERT + COMMIT each, as the runner
  ratio                   writer / COPY, and writer / one-INSERT-per-row
  scrubber MB/s           scrub_pii over bench/scrub.py's corpus

It uses DATABASE_URL's server when set, else a throwaway embedded server in a temporary
EVALLEDGER_HOME (stopped and removed at the end); either way in a database of its own.

    .venv/bin/python bench/capture.py [--calls 200000] [--rows 50000] [--single 3000]
"""

from __future__ import annotations

import argparse
import array
import gc
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



def caller_overhead(dsn: str, home: Path, calls: int, control: bool = False,
                    freeze: bool = False) -> tuple[list[int], float]:
    """Each call's ns, and the longest GC pause (ms) during the loop; freeze: first move everything
    allocated so far out of the collector's sight (gc.freeze), as an application that cannot afford
    a collection's pause does once it has started."""
    args = row(1)
    kwargs = {k: v for k, v in args.items() if k not in ("tool_name", "query")}
    if control:
        def call(tool, query, **fields):
            return None
    else:
        capture.configure(enabled=True, dsn=dsn, home=home)
        call = capture.capture_candidate
    pauses, started = [0.0], [0]

    def on_gc(phase, info):
        if phase == "start":
            started[0] = time.perf_counter_ns()
        else:
            pauses.append((time.perf_counter_ns() - started[0]) / 1e6)
    if freeze:
        gc.collect()
        gc.freeze()
    gc.callbacks.append(on_gc)
    samples = array.array("q")  # a buffer of machine integers: nothing for the collector to scan
    clock = time.perf_counter_ns
    try:
        for i in range(calls):
            t0 = clock()
            call("query", QUERY, **kwargs)
            samples.append(clock() - t0)
            if i % 1000 == 999:
                time.sleep(0.001)  # a handler does other work between calls; let the writer run
    finally:
        gc.callbacks.remove(on_gc)
        gc.unfreeze()
    if not control:
        capture.close(60)
    return samples, max(pauses)


def writer_rows(rows: list[dict], writer: CaptureWriter) -> list[tuple]:
    prepared, failures = writer._prepare(rows)
    assert not failures, failures
    return [tuple(r[c] for c in COLUMNS) for r in prepared]


def plain_copy(dsn: str, rows: list[tuple], batch: int) -> float:
    """Seconds to COPY rows, one COPY + COMMIT per batch, into a same-shape plain table."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("CREATE SCHEMA IF NOT EXISTS bench")
        conn.execute("CREATE TABLE bench.eval_candidates (LIKE evalledger.eval_candidates "
                     "INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING INDEXES INCLUDING IDENTITY)")
    with psycopg.connect(dsn) as conn:
        t0 = time.perf_counter()
        for start in range(0, len(rows), batch):
            with conn.cursor() as cur, cur.copy(f"COPY bench.eval_candidates ({', '.join(COLUMNS)}) FROM STDIN") as copy:
                for r in rows[start:start + batch]:
                    copy.write_row(r)
            conn.commit()
        return time.perf_counter() - t0


def percentiles(samples: list[int]) -> tuple[float, float, float]:
    samples = sorted(samples)
    return samples[len(samples) // 2] / 1000, samples[int(len(samples) * 0.99)] / 1000, samples[-1] / 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=200_000)
    parser.add_argument("--rows", type=int, default=50_000)
    parser.add_argument("--single", type=int, default=3_000)
    args = parser.parse_args()

    spool_home = Path(tempfile.mkdtemp(prefix="evalledger-bench-spool-"))
    with scratch.server() as server_url, scratch.migrated_database(server_url, "evalledger_capture_bench") as dsn:
        try:

            samples, gc_max = caller_overhead(dsn, spool_home / "caller", args.calls)
            control, control_gc = caller_overhead(dsn, spool_home / "control", args.calls, control=True)
            p50, p99, top = percentiles(samples)
            c50, c99, ctop = percentiles(control)
            print(f"capture: load average {' '.join(Path('/proc/loadavg').read_text().split()[:3])}")
            print(f"caller: {len(samples)} calls of capture_candidate, writer running")
            print(f"  p50 {p50:.2f} us   p99 {p99:.2f} us   max {top:.0f} us   longest GC pause {gc_max:.1f} ms   "
                  f"(aims p99 <= 10 us: {'met' if p99 <= 10 else 'NOT met'}; max <= 1000 us: "
                  f"{'met' if top <= 1000 else 'NOT met'})")
            frozen, frozen_gc = caller_overhead(dsn, spool_home / "frozen", args.calls, freeze=True)
            f50, f99, ftop = percentiles(frozen)
            print(f"  the same after gc.freeze() (an application that froze its start-up heap): p50 {f50:.2f} us   "
                  f"p99 {f99:.2f} us   max {ftop:.0f} us   longest GC pause {frozen_gc:.1f} ms")
            print(f"  control (a call that does nothing, no writer): p50 {c50:.2f} us   p99 {c99:.2f} us   max {ctop:.0f} us   "
                  f"longest GC pause {control_gc:.1f} ms")

            rows = [row(i) for i in range(args.rows)]
            writer = CaptureWriter(dsn, home=spool_home / "writer", background=False)
            t0 = time.perf_counter()
            for start in range(0, len(rows), writer.batch_size):
                writer.write(rows[start:start + writer.batch_size])
            writer_s = time.perf_counter() - t0
            writer.close(0)
            assert writer.stats.written == len(rows), writer.stats

            # The same rows as stored (validated and scrubbed), COPY'd in the writer's batches.
            stored = writer_rows(rows, writer)
            copy_s = plain_copy(dsn, stored, writer.batch_size)

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
            copy_rate = len(rows) / copy_s
            print(f"plain COPY (installer, bench.eval_candidates: same shape, no partitions/triggers/RLS): "
                  f"{len(rows)} rows in {copy_s:.2f} s = {copy_rate:,.0f} rows/s")
            print(f"  writer / COPY {writer_rate / copy_rate:.2f} (aim >= 0.8: "
                  f"{'met' if writer_rate / copy_rate >= 0.8 else 'NOT met'})")

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
