"""Bench: the figures of docs/scale.md, measured at two sizes on one server.

Capture (seed 001), at each size of --capture (default 1M, then 10M rows: the same 1M plus 9M more),
spread over the last 365 days in monthly partitions. The first --triggered rows (200,000) are
written by INSERT ... SELECT with every trigger on (the window lock, the dedupe key, the journal), as
the capture writer's batches are: the load rate and the WAL a row writes (what an archive stores).
The rest are filled in bulk with every trigger of the capture tables off (tests/unguarded.py) and
their keys written after: the same rows, keys and indexes, not journalled. At each size: bytes per
row (table, its indexes and its keys), `evalledger export` of every row and of the last 24 hours,
`evalledger retention plan`, making next month's partition, each as the real CLI in a child process, and `evalledger db backup` (copy and
SHA-256 check) at the first size (every size with --backup-every-size); then each figure
extrapolated to 100M from the two sizes by the power law through them (t = c * rows^k; k is
printed: 0 does not grow, 1 grows with the rows).
Ledger (seed 002), at each size of --runs (default 1,000, then 10,000 runs of 30 questions, loaded as
bench/retention_tiers.py loads them): every dashboard panel as RevOps and as the auditor (median of
--repeat reads), extrapolated to 100,000 runs the same way.
Rows per run: `evalledger demo` on a fresh ledger, counted per table.

Each size is measured in this run, on this machine, with the server's default settings; the load
average at the start and end is printed, since the machine may be shared.

    .venv/bin/python bench/scale.py [--capture 1000000,10000000] [--runs 1000,10000] [--repeat 3]
        [--triggered 200000] [--backup-every-size]
"""

from __future__ import annotations

import argparse
import importlib.util
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import date, datetime, timezone
from pathlib import Path

import psycopg

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "runner"), str(ROOT)]

from evalledger.core import scratch  # noqa: E402
from evalledger.bi.cli import PANELS  # noqa: E402
from tests.unguarded import clocks_unguarded  # noqa: E402

CLI = Path(sys.executable).with_name("evalledger")
CAPTURE_TABLES = ("eval_candidates", "eval_candidate_keys")
BATCH = 250_000
YEAR_S = 365 * 86400
CAPTURE = """
INSERT INTO evalledger.eval_candidates (tool_name, query, retrieved_slugs, retrieved_chunk_ids, source_ids,
    expand_enabled, detail, detail_resolved, vector_enabled, expansion_applied, latency_ms, remote, job_id,
    capture_key, created_at)
SELECT CASE WHEN i % 3 = 0 THEN 'search' ELSE 'query' END,
       'how did the renewal forecast change for account ' || i || ' after the pricing update?',
       ARRAY['doc/' || (i % 97), 'doc/' || (i % 89 + 100)], ARRAY[i, i + 1, i + 1]::bigint[], ARRAY['crm'],
       CASE WHEN i % 3 = 0 THEN NULL ELSE true END, 'medium', 'medium', true, false, 120.5, true,
       CASE WHEN i % 5 = 0 THEN i END, gen_random_uuid(),
       now() - make_interval(secs => ((i::bigint * 7919) % {year}) + (i % 1000) / 1000.0)
  FROM generate_series({first}::bigint, {last}::bigint) i
"""


def loadavg() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


def child(argv: list[str], env: dict) -> float:
    """Seconds argv takes with stdout to /dev/null (it must succeed)."""
    with open(os.devnull, "wb") as devnull:
        start = time.perf_counter()
        done = subprocess.run(argv, stdout=devnull, stderr=subprocess.PIPE, env={**os.environ, **env})
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv[1:3])} failed: {done.stderr.decode()[-300:]}")
    return time.perf_counter() - start


def months_back(count: int) -> list[date]:
    today = datetime.now(timezone.utc).date().replace(day=1)
    found = []
    for back in range(count, -1, -1):
        year, month = divmod(today.year * 12 + today.month - 1 - back, 12)
        found.append(date(year, month + 1, 1))
    return found


def month_ahead(ahead: int) -> date:
    today = datetime.now(timezone.utc).date()
    year, month = divmod(today.year * 12 + today.month - 1 + ahead, 12)
    return date(year, month + 1, 1)


def wal(conn) -> int:
    return conn.execute("SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::bigint").fetchone()[0]


def capture_sizes(conn) -> tuple[int, int, int]:
    """Bytes of the captured rows' heap (and TOAST), of their indexes, and of eval_candidate_keys."""
    heap, indexes = conn.execute(
        "SELECT sum(pg_table_size(relid)), sum(pg_indexes_size(relid)) "
        "FROM pg_partition_tree('evalledger.eval_candidates') WHERE isleaf").fetchone()
    keys = conn.execute("SELECT pg_total_relation_size('evalledger.eval_candidate_keys')").fetchone()[0]
    return int(heap), int(indexes), int(keys)


def fit(points: dict[int, float], at: int) -> tuple[float, float]:
    """The power law t = c * rows^k through the two measured sizes, read at `at`, and its k (0 for a
    figure that does not grow, 1 for one that grows with the rows; never below 0)."""
    (n0, t0), (n1, t1) = sorted(points.items())[0], sorted(points.items())[-1]
    if n0 == n1 or t0 <= 0 or t1 <= 0:
        return t1 * at / n1, 1.0
    k = max(math.log(t1 / t0) / math.log(n1 / n0), 0.0)
    return t1 * (at / n1) ** k, k


def bulk_fill(conn, first: int, last: int) -> None:
    """Rows first..last as CAPTURE writes them, with every user trigger of the two capture tables off
    (tests/unguarded.py, the one way benches lift the guards) and the keys written after in one
    statement: the same rows, keys and indexes, without the per-row trigger cost the first rows
    measured. The journal's trigger is lifted with the rest, so these rows have no journal entries:
    nothing this bench measures reads the journal, and its hashing is the journal bench's to time."""
    if first > last:
        return
    with conn.transaction(), clocks_unguarded(conn, CAPTURE_TABLES):
        before = conn.execute("SELECT coalesce(max(id), 0) FROM evalledger.eval_candidates").fetchone()[0]
        for start in range(first, last + 1, BATCH):
            conn.execute(CAPTURE.format(first=start, last=min(start + BATCH - 1, last), year=YEAR_S))
        conn.execute("INSERT INTO evalledger.eval_candidate_keys (capture_key, created_at) "
                     "SELECT capture_key, created_at FROM evalledger.eval_candidates WHERE id > %s", (before,))


def bench_capture(server_url: str, sizes: list[int], extrapolate: int, triggered: int, backups: bool) -> None:
    from evalledger.ops.backup import base_backup

    with scratch.migrated_database(server_url, "evalledger_scale_capture") as dsn, \
            psycopg.connect(dsn, autocommit=True) as conn:
        made = []
        for month in months_back(12):
            start = time.perf_counter()
            conn.execute("SELECT evalledger.capture_make_partition_v2(%s)", (month,))
            made.append(time.perf_counter() - start)
        print(f"capture: 13 monthly partitions made on an empty table, {1000 * statistics.median(made):.0f} ms each "
              "(median)", flush=True)
        env = {"DATABASE_URL": dsn, "EVALLEDGER_HOME": tempfile.mkdtemp(prefix="evalledger-scale-home-")}
        figures: dict[str, dict[int, float]] = {}
        loaded = 0
        for number, size in enumerate(sizes):
            if number == 0:
                # The writer's cost, every trigger on, on the first rows; the rest filled in bulk.
                sample = min(size, triggered)
                wal_before, start = wal(conn), time.perf_counter()
                for first in range(1, sample + 1, BATCH):
                    conn.execute(CAPTURE.format(first=first, last=min(first + BATCH - 1, sample), year=YEAR_S))
                seconds = time.perf_counter() - start
                wal_bytes = wal(conn) - wal_before
                figures["load rows/s (every trigger on)"] = {size: sample / seconds}
                figures["WAL bytes per row"] = {size: wal_bytes / sample}
                loaded = sample
            start = time.perf_counter()
            bulk_fill(conn, loaded + 1, size)
            if size > loaded:
                print(f"  filled {size - loaded:,} more rows in bulk in {time.perf_counter() - start:,.0f} s", flush=True)
            conn.execute("VACUUM ANALYZE evalledger.eval_candidates")
            conn.execute("VACUUM ANALYZE evalledger.eval_candidate_keys")
            heap, indexes, keys = capture_sizes(conn)
            loaded = size
            row = figures.setdefault
            row("table bytes per row", {})[size] = heap / size
            row("index bytes per row", {})[size] = indexes / size
            row("key bytes per row", {})[size] = keys / size
            row("export all, s", {})[size] = child([str(CLI), "export"], env)
            row("export last 24h, s", {})[size] = child([str(CLI), "export", "--since", "24h"], env)
            row("retention plan, s", {})[size] = child([str(CLI), "retention", "plan"], env)
            start = time.perf_counter()
            conn.execute("SELECT evalledger.capture_make_partition_v2(%s)", (month_ahead(5 + number),))
            row("next partition, ms", {})[size] = (time.perf_counter() - start) * 1000
            start = time.perf_counter()
            conn.execute("SELECT evalledger.capture_ensure_partitions_v2(3)")
            row("ensure partitions (none new), ms", {})[size] = (time.perf_counter() - start) * 1000
            folder = Path(tempfile.mkdtemp(prefix="evalledger-scale-backup-")) / "backup"
            try:
                if number and not backups:
                    raise RuntimeError("only at the first size (--backup-every-size measures each)")
                start = time.perf_counter()
                backup = base_backup(server_url, folder)
                row("db backup (whole cluster), s", {})[size] = time.perf_counter() - start
                row("db backup size, GB", {})[size] = backup.bytes / 2**30
            except Exception as exc:  # noqa: BLE001 - a server whose user may not stream: say so, go on
                print(f"  db backup not measured: {exc}")
            finally:
                shutil.rmtree(folder.parent, ignore_errors=True)
            print(f"  {size:,} captured rows: {(heap + indexes + keys) / 2**30:.2f} GB with indexes and keys; "
                  f"load average {loadavg()}", flush=True)
            print("    " + "; ".join(f"{name} {points[size]:,.2f}" for name, points in figures.items()
                                     if size in points), flush=True)
        shutil.rmtree(env["EVALLEDGER_HOME"], ignore_errors=True)
    header = "".join(f"{s:>14,}" for s in sizes)
    print(f"\ncapture at {', '.join(f'{s:,}' for s in sizes)} rows, extrapolated to {extrapolate:,}:")
    print(f"{'':36}{header}{extrapolate:>16,}   growth k")
    for name, points in figures.items():
        cells = "".join(f"{points.get(s, float('nan')):>14,.1f}" for s in sizes)
        if "per row" in name or "rows/s" in name:
            print(f"{name:36}{cells}{statistics.mean(points.values()):>16,.1f}   (mean of the sizes)")
            continue
        guess, k = fit(points, extrapolate)
        print(f"{name:36}{cells}{guess:>16,.1f}   {k:.2f}")


def bench_ledger(server_url: str, sizes: list[int], repeat: int, extrapolate: int) -> None:
    spec = importlib.util.spec_from_file_location("retention_tiers", ROOT / "bench" / "retention_tiers.py")
    tiers = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tiers)
    with scratch.migrated_database(server_url, "evalledger_scale_ledger") as dsn, \
            psycopg.connect(dsn, autocommit=True) as admin:
        reviewer_id = admin.execute(
            "INSERT INTO evalledger.reviewer (reviewer_user_id, role_name, display_name) "
            "VALUES (gen_random_uuid(), 'evalledger_bench_reviewer', 'bench') RETURNING reviewer_user_id").fetchone()[0]
        rubric_id = admin.execute("SELECT rubric_id FROM evalledger.rubric WHERE suite = 'brain-eval' "
                                  "ORDER BY rubric_id LIMIT 1").fetchone()[0]
        timings: dict[str, dict[int, float]] = {}
        loaded = 0
        for size in sizes:
            tiers.load(admin, loaded + 1, size, reviewer_id, rubric_id)
            loaded = size
            for panel in PANELS:
                for role in ("revops", "auditor"):
                    with admin.transaction():
                        admin.execute(f"SET LOCAL ROLE evalledger_{role}")
                        admin.execute(f"SELECT * FROM evalledger.{panel}").fetchall()
                        samples = []
                        for _ in range(repeat):
                            start = time.perf_counter()
                            admin.execute(f"SELECT * FROM evalledger.{panel}").fetchall()
                            samples.append((time.perf_counter() - start) * 1000)
                    timings.setdefault(f"{panel} as {role}", {})[size] = statistics.median(samples)
            print(f"  {size:,} runs ({size * 30:,} question rows) measured; load average {loadavg()}", flush=True)
    header = "".join(f"{s:>12,}" for s in sizes)
    print(f"\npanels (ms, median of {repeat}) at {', '.join(f'{s:,}' for s in sizes)} runs, "
          f"extrapolated to {extrapolate:,}:")
    print(f"{'':46}{header}{extrapolate:>14,}   growth k")
    for name, points in timings.items():
        cells = "".join(f"{points[s]:>12,.1f}" for s in sizes)
        guess, k = fit(points, extrapolate)
        print(f"{name:46}{cells}{guess:>14,.1f}   {k:.2f}")


def bench_rows_per_run(server_url: str) -> None:
    with scratch.migrated_database(server_url, "evalledger_scale_demo") as dsn:
        with psycopg.connect(dsn, autocommit=True) as conn:
            before = dict(conn.execute(
                "SELECT relname, n_live_tup FROM pg_stat_user_tables WHERE schemaname = 'evalledger'").fetchall())
            wal_before = wal(conn)
        home = tempfile.mkdtemp(prefix="evalledger-scale-home-")
        try:
            child([str(CLI), "demo"], {"DATABASE_URL": dsn, "EVALLEDGER_HOME": home})
        finally:
            shutil.rmtree(home, ignore_errors=True)
        with psycopg.connect(dsn, autocommit=True) as conn:
            written = wal(conn) - wal_before
            counts = {}
            for (table,) in conn.execute("SELECT relname FROM pg_stat_user_tables WHERE schemaname = 'evalledger' "
                                         "AND relname NOT LIKE 'eval_candidates_p%' ORDER BY relname").fetchall():
                counts[table] = conn.execute(f"SELECT count(*) FROM evalledger.{table}").fetchone()[0]
            runs = conn.execute("SELECT count(*) FROM evalledger.brain_eval_log").fetchone()[0]
    print(f"\nthe demo's rows per table ({runs} brain-eval runs, one takes-quality run, two work-quality runs, "
          f"3 captures; {written / 2**20:.1f} MB of WAL):")
    for table, count in counts.items():
        if count - before.get(table, 0) > 0 or count:
            print(f"  {table:40}{count:>8}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--capture", default="1000000,10000000", help="captured-row counts, ascending ('' skips)")
    parser.add_argument("--runs", default="1000,10000", help="brain-eval run counts, ascending ('' skips)")
    parser.add_argument("--triggered", type=int, default=200_000,
                        help="captured rows written with every trigger on (the load rate); the rest in bulk")
    parser.add_argument("--backup-every-size", action="store_true", help="time `db backup` at every size")
    parser.add_argument("--repeat", type=int, default=3, help="timed reads per panel and size (median)")
    args = parser.parse_args()
    capture = [int(s) for s in args.capture.split(",") if s]
    runs = [int(s) for s in args.runs.split(",") if s]
    print(f"scale: load average {loadavg()} on {os.cpu_count()} cores", flush=True)
    with scratch.server() as server_url:
        with psycopg.connect(server_url, autocommit=True) as conn:
            print(f"PostgreSQL {conn.execute('SHOW server_version').fetchone()[0]}", flush=True)
        bench_rows_per_run(server_url)
        if runs:
            bench_ledger(server_url, runs, args.repeat, 100_000)
        if capture:
            bench_capture(server_url, capture, 100_000_000, args.triggered, args.backup_every_size)
    print(f"\ndone; load average {loadavg()}")


if __name__ == "__main__":
    main()
