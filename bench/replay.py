"""Bench: `run replay` against a stand-in brain answering each query after a fixed latency (100 ms),
beside a bare client asking the same brain the same queries at the same concurrency.

The stand-in (a threaded HTTP server in a child process, so its time is not the runner's) sleeps
the latency, then answers the captured row's own results. Figures, each level best of two:
  replay s       `run replay --url` minus its printing: the run started, every query asked through
                 the URL adapter and recorded as it returns, the run completed and read back
  bare s         the same requests POSTed by a thread pool of the same size, nothing recorded
  bare/replay    the issue's aim is >= 0.9: the brain's concurrency, not the ledger, is the limit
  db ms/q        time per replayed query of recording its batch (each INSERT: the admission
                 trigger's copy of the captured row, every measure, the journal; and the batch's
                 one commit, shared by the answers that arrived together), as the runner sees it
It starts its own database (DATABASE_URL's server when set, else a throwaway embedded one).

    .venv/bin/python bench/replay.py [--queries 200] [--latency-ms 100] [--levels 8,32]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import sys
import tempfile
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import psycopg  # noqa: E402

from evalledger.core import db  # noqa: E402
from evalledger.core.scratch import migrated_database, server  # noqa: E402
from evalledger.suites.replay import run as replay, store  # noqa: E402


def _serve_in_child(latency_s: float, conn) -> None:
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Brain(BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802 (http.server's name)
            request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            time.sleep(latency_s)
            n = request["id"]
            body = json.dumps({"retrieved_slugs": [f"doc/{n % 97}", f"doc/{n % 89 + 100}"],
                               "retrieved_chunk_ids": [n, n + 1, n + 1], "source_ids": ["crm"],
                               "vector_enabled": request["vector_enabled"], "expansion_applied": False,
                               "detail_resolved": "medium", "latency_ms": 100.0}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    class Server(ThreadingHTTPServer):
        daemon_threads = True
        request_queue_size = 256  # the listen backlog: every caller of the highest level at once

    httpd = Server(("127.0.0.1", 0), Brain)
    conn.send(f"http://127.0.0.1:{httpd.server_port}/replay")
    httpd.serve_forever()


def bare(url: str, requests: list[dict], concurrency: int) -> float:
    def ask(request: dict) -> None:
        post = urllib.request.Request(url, data=json.dumps(request).encode(), method="POST",
                                      headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(post, timeout=30) as response:
            json.loads(response.read())

    start = time.perf_counter()
    with ThreadPoolExecutor(max_workers=concurrency) as pool:
        list(pool.map(ask, requests))
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--latency-ms", type=float, default=100)
    parser.add_argument("--levels", default="8,32")
    args = parser.parse_args()
    levels = [int(x) for x in args.levels.split(",")]

    parent_conn, child_conn = multiprocessing.Pipe()
    child = multiprocessing.Process(target=_serve_in_child, args=(args.latency_ms / 1000, child_conn), daemon=True)
    child.start()
    url = parent_conn.recv()
    try:
        with server() as server_url, migrated_database(server_url, "evalledger_bench_replay") as dsn:
            with psycopg.connect(dsn, autocommit=True) as conn:
                conn.execute(
                    "INSERT INTO evalledger.eval_candidates (tool_name, query, retrieved_slugs, retrieved_chunk_ids,"
                    " source_ids, vector_enabled, expansion_applied, latency_ms, remote, capture_key, created_at)"
                    " SELECT 'query', 'renewal forecast for account ' || i, ARRAY['doc/' || (i %% 97),"
                    " 'doc/' || (i %% 89 + 100)], ARRAY[i, i + 1, i + 1]::bigint[], ARRAY['crm'], true, false, 110,"
                    " true, gen_random_uuid(), date_trunc('month', now()) + i * interval '1 millisecond'"
                    " FROM generate_series(1, %s) i", (args.queries,))
                requests = [{"id": i, "tool_name": "query", "query": q, "detail": None, "expand_enabled": None,
                             "vector_enabled": True}
                            for i, q in conn.execute("SELECT id, query FROM evalledger.eval_candidates")]
            db.use_database_url(dsn)
            os.environ["EVALLEDGER_HOME"] = tempfile.mkdtemp(prefix="evalledger-bench-replay-")  # the receipts
            recorded = {"seconds": 0.0, "calls": 0}
            original = store.record_many

            def timed(conn, run_id, answered):
                start = time.perf_counter()
                try:
                    return original(conn, run_id, answered)
                finally:
                    recorded["seconds"] += time.perf_counter() - start
                    recorded["calls"] += len(answered)

            store.record_many = timed
            print(f"{args.queries} captured queries, {args.latency_ms:.0f} ms stand-in brain")
            print(f"{'concurrency':>11} {'replay s':>9} {'bare s':>7} {'bare/replay':>11} {'db ms/q':>8}")
            bare(url, requests[:16], 8)  # warm-up: the server's threads, the first connections
            for level in levels:
                replayed, baseline, db_ms = [], [], []
                for attempt in range(2):
                    recorded.update(seconds=0.0, calls=0)
                    opts = replay.ReplayOptions(brain_version=f"bench-{level}-{attempt}", url=url,
                                                concurrency=level, timeout_s=30)
                    start = time.perf_counter()
                    outcome = replay.run(opts, say=lambda _line: None)
                    replayed.append(time.perf_counter() - start)
                    assert outcome.document["decision"] == "pass", outcome.document["rationale"]
                    db_ms.append(1000 * recorded["seconds"] / max(recorded["calls"], 1))
                    baseline.append(bare(url, requests, level))
                best_replay, best_bare = min(replayed), min(baseline)
                print(f"{level:>11} {best_replay:>9.2f} {best_bare:>7.2f} {best_bare / best_replay:>11.2f} "
                      f"{min(db_ms):>8.2f}")
            store.record_many = original
    finally:
        child.terminate()


if __name__ == "__main__":
    main()
