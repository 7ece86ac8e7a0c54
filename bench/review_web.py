"""Bench: page time of the review web app (`evalledger serve`) for a signed-in reviewer.

A scratch database (DATABASE_URL's server, else an embedded one) gets the demo's 30-question
harness run with its recorded answers and judge drafts, for a reviewer login of its own with a
password. The app runs under uvicorn on a free localhost port; a client signs in once (as the
browser would, with the cookie) and fetches each page N times after a warm-up, timing the whole
HTTP round trip (the queries run as the reviewer's login, under row-level security):

- queue:     GET /queue (the open runs waiting for the reviewer);
- run page:  GET /runs/RUN (the 30 questions with what each still needs);
- question:  GET /runs/RUN/questions/EVAL-Q01 (answer, sources, automatic scores, the form).

Aim: p95 under 50 ms for the queue and the run page.

    .venv/bin/python bench/review_web.py [--repeat 200]
"""

from __future__ import annotations

import argparse
import re
import secrets
import statistics
import sys
import time
from pathlib import Path

import httpx2
from psycopg import sql

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "runner"))
sys.path.insert(0, str(ROOT))

from evalledger.core import db, scratch  # noqa: E402
from evalledger.suites.brain_eval import store  # noqa: E402
from evalledger.web.app import create_app  # noqa: E402
from evalledger.suites.brain_eval.demo import open_demo_run, register_demo  # noqa: E402
from tests.web.conftest import Served  # noqa: E402

AIM_MS = 50


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=200, help="timed requests per page (after 10 warm-up ones)")
    args = parser.parse_args()
    role, password = f"evalledger_bench_reviewer_{secrets.token_hex(3)}", secrets.token_urlsafe(18)
    with scratch.server() as server_url, scratch.migrated_database(server_url, "evalledger_bench_web") as dsn:
        with db.transaction(None, dsn) as conn:
            store.create_reviewer_role(conn, role, password)
        try:
            with db.transaction("owner", dsn) as conn:
                store.add_reviewer(conn, role, "Bench reviewer")
            register_demo(dsn)
            run_id, _ = open_demo_run(dsn, role)
            served = Served(create_app(dsn))
            try:
                print(f"review web app: {served.base}, one open 30-question harness run, {args.repeat} requests a page")
                with httpx2.Client(base_url=served.base, timeout=10) as client:
                    token = re.search(r'name="csrf_token" value="([^"]+)"', client.get("/sign-in").text).group(1)
                    signed = client.post("/sign-in", data={"csrf_token": token, "login": role, "password": password})
                    assert signed.status_code == 303 and signed.headers["location"] == "/", signed.text[:300]
                    worst = 0.0
                    for name, path in (("queue", "/queue"), ("run page (30 questions)", f"/runs/{run_id}"),
                                       ("question page", f"/runs/{run_id}/questions/EVAL-Q01")):
                        for _ in range(10):
                            assert client.get(path).status_code == 200
                        times = []
                        for _ in range(args.repeat):
                            started = time.perf_counter()
                            response = client.get(path)
                            times.append((time.perf_counter() - started) * 1000)
                            assert response.status_code == 200
                        p50, p95 = statistics.median(times), percentile(times, 0.95)
                        if name != "question page":
                            worst = max(worst, p95)
                        print(f"  {name:26} p50 {p50:6.1f} ms   p95 {p95:6.1f} ms   max {max(times):6.1f} ms")
                print(f"aim: p95 under {AIM_MS} ms for the queue and the run page: "
                      f"{'met' if worst < AIM_MS else 'MISSED'} ({worst:.1f} ms)")
            finally:
                served.stop()
        finally:
            with db.transaction(None, dsn) as conn:
                conn.execute(sql.SQL("DROP OWNED BY {}").format(sql.Identifier(role)))
            with db.transaction(None, server_url) as conn:
                conn.execute(sql.SQL("DROP ROLE IF EXISTS {}").format(sql.Identifier(role)))


if __name__ == "__main__":
    main()
