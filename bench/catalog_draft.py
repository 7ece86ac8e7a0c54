"""Bench: `evalledger catalog draft --from-capture` over 1M captured rows, against `evalledger
export` of the same rows measured in the same run.

Figures, measured in this run on the same server and database:
  draft s            the real CLI (`evalledger catalog draft --from-capture --questions 30`, a child
                     process): read the window's candidates (scrub failures and replay flags
                     joined in the database), normalise, fold, stratify, pick, fold the rest,
                     write the draft (target: under 60 s at 1M rows)
  export s           the real CLI (`evalledger export`, a child process, stdout to /dev/null): the
                     same rows, as seed-001 NDJSON
  ratio              draft / export, in seconds (how much more a draft costs than reading the rows out)
  peak RSS           ru_maxrss of each child (os.wait4)

The rows: 100,000 distinct questions (five phrasings, each with an 8-character account code),
each captured ten times, one in seven with a question mark (an exact fold), over the strata of
three tools-and-details and remote or local; one row in a thousand with a scrubber failure; 2,000
rows flagged by a replay run (recorded directly, as the runner would).

It uses DATABASE_URL's server when set, else a throwaway embedded server in a temporary
EVALLEDGER_HOME (stopped and removed at the end); either way in a database of its own.

    .venv/bin/python bench/catalog_draft.py [--rows 1000000]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psycopg

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "runner"))

from evalledger.core import scratch  # noqa: E402

CLI = Path(sys.executable).with_name("evalledger")


def child(argv: list[str], env: dict | None = None) -> tuple[float, int]:
    """Run argv with stdout to /dev/null; return (seconds, peak RSS in MB)."""
    with open(os.devnull, "wb") as devnull:
        t0 = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=devnull, stderr=subprocess.PIPE, env={**os.environ, **(env or {})})
        _, status, usage = os.wait4(proc.pid, 0)
        seconds = time.perf_counter() - t0
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        raise SystemExit(f"{argv[:3]} exited {code}: {proc.stderr.read().decode()[-2000:]}")
    return seconds, usage.ru_maxrss // 1024


def load(conn: psycopg.Connection, rows: int) -> None:
    for start in range(0, rows, 100_000):
        conn.execute(
            "INSERT INTO evalledger.eval_candidates (tool_name, query, retrieved_slugs, retrieved_chunk_ids,"
            " source_ids, expand_enabled, detail, detail_resolved, vector_enabled, expansion_applied,"
            " latency_ms, remote, capture_key, created_at)"
            " SELECT CASE WHEN i %% 3 = 0 THEN 'search' ELSE 'query' END,"
            " (ARRAY['renewals at risk for account', 'why did account churn', 'expansion signals at account',"
            "        'open support tickets of account', 'pricing discount history of account'])[1 + (i %% 100000) %% 5]"
            "   || ' ' || substr(md5((i %% 100000)::text), 1, 8) || CASE WHEN i %% 7 = 0 THEN '?' ELSE '' END,"
            " ARRAY['doc/' || (i %% 97), 'doc/' || (i %% 89 + 100)], ARRAY[i, i + 1, i + 1]::bigint[],"
            " ARRAY['crm'], CASE WHEN i %% 3 = 0 THEN NULL ELSE true END,"
            " CASE WHEN i %% 3 = 0 THEN NULL WHEN i %% 3 = 1 THEN 'medium' ELSE 'high' END, 'medium', true, false,"
            " 120.5, i %% 5 < 3, gen_random_uuid(),"
            " date_trunc('month', now()) + i * interval '1 millisecond' / 4"
            " FROM generate_series(%s::int, %s::int) i", (start + 1, min(start + 100_000, rows)))
    conn.execute("INSERT INTO evalledger.eval_capture_failures (failure_key, reason, occurred_at, tool_name, capture_key)"
                 " SELECT gen_random_uuid(), 'scrubber_exception', now(), tool_name, capture_key"
                 " FROM evalledger.eval_candidates WHERE id % 1000 = 0")
    # A replay run of the ledger's rows that lost a source on 2,000 of them, recorded as the runner would.
    conn.execute("SET ROLE evalledger_runner")
    until = conn.execute("SELECT evalledger.capture_export_bound_v2()").fetchone()[0]
    run_id = conn.execute(
        "INSERT INTO evalledger.replay_run (brain_version, adapter_kind, adapter, source, request, until_at, max_rows)"
        " VALUES ('bench', 'python', 'bench:brain', 'ledger', '{}', %s, 2000) RETURNING replay_run_id",
        (until,)).fetchone()[0]
    conn.execute(
        "INSERT INTO evalledger.replay_query (replay_run_id, capture_id, capture_created_at, outcome, retrieved_slugs,"
        " retrieved_chunk_ids, source_ids, vector_enabled, expansion_applied, detail_resolved, latency_ms)"
        " SELECT %s, c.id, c.created_at, 'answered', c.retrieved_slugs, c.retrieved_chunk_ids, '{}', true, false,"
        " c.detail_resolved, 100"
        " FROM evalledger.eval_candidates c WHERE c.created_at < %s ORDER BY c.created_at DESC, c.id DESC LIMIT 2000",
        (run_id, until))
    conn.execute("RESET ROLE")
    conn.execute("VACUUM ANALYZE evalledger.eval_candidates")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    args = parser.parse_args()

    with scratch.server() as server_url, scratch.migrated_database(server_url, "evalledger_draft_bench") as dsn, \
            tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        with psycopg.connect(dsn, autocommit=True) as conn:
            load(conn, args.rows)
            flagged = conn.execute("SELECT count(*) FROM evalledger.replay_query "
                                   "WHERE cardinality(sources_lost) > 0").fetchone()[0]
        print(f"loaded {args.rows:,} rows ({flagged:,} flagged by replay) in {time.perf_counter() - t0:.0f} s")
        env = {"DATABASE_URL": dsn}
        out = Path(tmp) / "draft.json"
        draft = [str(CLI), "catalog", "draft", "--from-capture", "--questions", "30", "-o", str(out)]
        results: dict[str, list[float]] = {"draft": [], "export": []}
        rss: dict[str, list[int]] = {"draft": [], "export": []}
        for _ in range(2):  # alternate, best of two, so a burst of load does not skew one side
            for name, argv in (("draft", draft), ("export", [str(CLI), "export"])):
                seconds, peak = child(argv, env)
                results[name].append(seconds)
                rss[name].append(peak)
        best = {k: min(v) for k, v in results.items()}
        print(f"catalog draft --from-capture (CLI, 30 questions): {best['draft']:6.1f} s  "
              f"(target < 60 s: {'met' if best['draft'] < 60 else 'NOT met'}), peak RSS {max(rss['draft'])} MB")
        print(f"export of the same rows (CLI, baseline):          {best['export']:6.1f} s  "
              f"peak RSS {max(rss['export'])} MB")
        print(f"  ratio draft / export {best['draft'] / best['export']:.2f} (in seconds: a draft costs this many exports)")


if __name__ == "__main__":
    main()
