"""Bench: `evalledger export` against a bare COPY of row_to_json, and its memory at 10k and 1M rows.

Figures, measured in this run on the same server and database:
  export rows/s      the real CLI (`evalledger export`, a child process, stdout to /dev/null):
                     server-built seed-001 lines streamed with COPY in created_at DESC, id DESC
  COPY baseline      a child process running COPY (SELECT row_to_json(c) FROM
                     evalledger.eval_candidates c ORDER BY created_at DESC, id DESC) TO STDOUT
                     to /dev/null with psycopg (same order; the unordered COPY is shown too)
  ratio              export / ordered baseline (target >= 0.8)
  peak RSS           ru_maxrss of the export child (os.wait4) at --limit 10000 and at all rows

It uses DATABASE_URL's server when set, else a throwaway embedded server in a temporary
EVALLEDGER_HOME (stopped and removed at the end); either way in a database of its own.

    .venv/bin/python bench/export.py [--rows 1000000]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

import psycopg

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "runner"))

from evalledger.core import scratch  # noqa: E402

CLI = Path(sys.executable).with_name("evalledger")
BASELINE = """
import sys, psycopg
with psycopg.connect(sys.argv[1]) as conn:
    out = sys.stdout.buffer
    with conn.cursor().copy(sys.argv[2]) as copy:
        for data in copy:
            out.write(data)
    out.flush()
"""
ORDERED = ("COPY (SELECT row_to_json(c) FROM evalledger.eval_candidates c ORDER BY created_at DESC, id DESC) "
           "TO STDOUT")
UNORDERED = "COPY (SELECT row_to_json(c) FROM evalledger.eval_candidates c) TO STDOUT"



def child(argv: list[str], env: dict | None = None) -> tuple[float, int]:
    """Run argv with stdout to /dev/null; return (seconds, peak RSS in MB)."""
    with open(os.devnull, "wb") as devnull:
        t0 = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=devnull, stderr=subprocess.DEVNULL, env={**os.environ, **(env or {})})
        _, status, usage = os.wait4(proc.pid, 0)
        seconds = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"{argv[:2]} exited {proc.returncode}")
    return seconds, usage.ru_maxrss // 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    args = parser.parse_args()

    with scratch.server() as server_url, scratch.migrated_database(server_url, "evalledger_export_bench") as dsn:
        t0 = time.perf_counter()
        with psycopg.connect(dsn, autocommit=True) as conn:
            # The first minutes of this month: always inside an existing partition.
            for start in range(0, args.rows, 100_000):
                conn.execute(
                    "INSERT INTO evalledger.eval_candidates (tool_name, query, retrieved_slugs, retrieved_chunk_ids,"
                    " source_ids, expand_enabled, detail, detail_resolved, vector_enabled, expansion_applied,"
                    " latency_ms, remote, job_id, capture_key, created_at)"
                    " SELECT CASE WHEN i %% 3 = 0 THEN 'search' ELSE 'query' END,"
                    " 'how did the renewal forecast change for account ' || i || ' after the pricing update?',"
                    " ARRAY['doc/' || (i %% 97), 'doc/' || (i %% 89 + 100)], ARRAY[i, i + 1, i + 1]::bigint[],"
                    " ARRAY['crm'], CASE WHEN i %% 3 = 0 THEN NULL ELSE true END, 'medium', 'medium', true, false,"
                    " 120.5, true, CASE WHEN i %% 5 = 0 THEN i END, gen_random_uuid(),"
                    " date_trunc('month', now()) + i * interval '1 millisecond' / 4"
                    " FROM generate_series(%s::int, %s::int) i", (start + 1, min(start + 100_000, args.rows)))
            conn.execute("VACUUM ANALYZE evalledger.eval_candidates")
        print(f"loaded {args.rows:,} rows in {time.perf_counter() - t0:.0f} s")

        env = {"DATABASE_URL": dsn}
        small_s, small_rss = child([str(CLI), "export", "--limit", "10000"], env)
        results = {"export": [], "ordered": [], "unordered": []}
        rss = []
        for _ in range(2):  # alternate, best of two, so a burst of load does not skew one side
            seconds, peak = child([str(CLI), "export"], env)
            results["export"].append(seconds)
            rss.append(peak)
            results["ordered"].append(child([sys.executable, "-c", BASELINE, dsn, ORDERED])[0])
            results["unordered"].append(child([sys.executable, "-c", BASELINE, dsn, UNORDERED])[0])
        best = {k: min(v) for k, v in results.items()}
        rate = {k: args.rows / v for k, v in best.items()}
        print(f"export (CLI, seed-001 lines):            {rate['export']:>10,.0f} rows/s  ({best['export']:.1f} s)")
        print(f"COPY row_to_json, same order (baseline): {rate['ordered']:>10,.0f} rows/s  ({best['ordered']:.1f} s)")
        print(f"COPY row_to_json, unordered:             {rate['unordered']:>10,.0f} rows/s  ({best['unordered']:.1f} s)")
        ratio = rate["export"] / rate["ordered"]
        print(f"  ratio export / baseline {ratio:.2f} (target >= 0.8: {'met' if ratio >= 0.8 else 'NOT met'}); "
              f"against the unordered COPY {rate['export'] / rate['unordered']:.2f}")
        print(f"peak RSS of the export process: {small_rss} MB at 10,000 rows ({small_s:.1f} s), "
              f"{max(rss)} MB at {args.rows:,} rows")


if __name__ == "__main__":
    main()
