"""Bench: page and save times of the review web app (`evalledger serve`) for a signed-in reviewer.

A scratch database (DATABASE_URL's server, else an embedded one) gets the demo's 30-question
harness run with its recorded answers and judge drafts, for a reviewer login of its own with a
password. The app runs under uvicorn on a free localhost port; a client signs in once (as the
browser would, with the cookie) and times each request N times after a warm-up, the whole HTTP
round trip (the queries run as the reviewer's login, under row-level security):

- baseline:  GET /static/review.css (the app and HTTP without the database), measured in the same run;
- queue:     GET /queue (the open runs waiting for the reviewer, with what each question needs);
- run page:  GET /runs/RUN (the 30 questions with their text and what each still needs);
- question:  GET /runs/RUN/questions/EVAL-Q01 (answer, sources, automatic scores, the form);
- save:      POST /review/save of EVAL-Q01 with a changed value each time (the optimistic check,
             the update and its trail, the suggestions and the reference recorded), and the redirect.

Each line prints p50, p95 and the p95's ratio to the baseline's. Aim: p95 under 50 ms for the
queue, the run page and the question page, under 100 ms for a save.

    .venv/bin/python bench/review_web.py [--repeat 200]
"""

from __future__ import annotations

import argparse
import html
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

AIMS_MS = {"queue": 50, "run page (30 questions)": 50, "question page": 50, "save": 100}


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def save_form(page: str, coherence: int) -> dict:
    """The question form as its page shows it, with the numbers typed in (coherence changing)."""
    form = page[page.index('id="score"'):]
    fields = {m[0]: html.unescape(m[1]) for m in re.findall(r'<input type="hidden" name="(\w+)" value="([^"]*)"', form)}
    return {**fields, "hallucinations_detected": "0", "total_claims": "3", "diagnosis_accuracy_score": "1",
            "narrative_coherence_rating": str(coherence), "reviewer_comments": ""}


def timed(client: httpx2.Client, repeat: int, request) -> list[float]:
    for n in range(10):
        request(client, n)
    times = []
    for n in range(repeat):
        started = time.perf_counter()
        request(client, n)
        times.append((time.perf_counter() - started) * 1000)
    return times


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
                question = f"/runs/{run_id}/questions/EVAL-Q01"

                def get(path):
                    def request(client, n):
                        response = client.get(path)
                        assert response.status_code == 200, (path, response.status_code)
                    return request

                def save(client, n):
                    page = client.get(question).text  # untimed in a real session: the reviewer reads it first
                    started = time.perf_counter()
                    response = client.post("/review/save", data=save_form(page, 1 + n % 5))
                    assert response.status_code == 303, response.text[:500]
                    return time.perf_counter() - started

                with httpx2.Client(base_url=served.base, timeout=10) as client:
                    token = re.search(r'name="csrf_token" value="([^"]+)"', client.get("/sign-in").text).group(1)
                    signed = client.post("/sign-in", data={"csrf_token": token, "login": role, "password": password})
                    assert signed.status_code == 303, signed.text[:300]
                    results = {"baseline (static file)": timed(client, args.repeat, get("/static/review.css"))}
                    for name, path in (("queue", "/queue"), ("run page (30 questions)", f"/runs/{run_id}"),
                                       ("question page", question)):
                        results[name] = timed(client, args.repeat, get(path))
                    for _ in range(10):
                        save(client, 0)
                    results["save"] = [save(client, n) * 1000 for n in range(args.repeat)]
                base = percentile(results["baseline (static file)"], 0.95)
                missed = []
                for name, times in results.items():
                    p50, p95 = statistics.median(times), percentile(times, 0.95)
                    print(f"  {name:26} p50 {p50:6.1f} ms   p95 {p95:6.1f} ms   p95 / baseline {p95 / base:5.1f}x")
                    if name in AIMS_MS and p95 >= AIMS_MS[name]:
                        missed.append(f"{name} {p95:.1f} ms")
                print("aim: p95 under 50 ms for the pages, 100 ms for a save: "
                      + ("met" if not missed else "MISSED: " + ", ".join(missed)))
            finally:
                served.stop()
        finally:
            with db.transaction(None, dsn) as conn:
                conn.execute(sql.SQL("DROP OWNED BY {}").format(sql.Identifier(role)))
            with db.transaction(None, server_url) as conn:
                conn.execute(sql.SQL("DROP ROLE IF EXISTS {}").format(sql.Identifier(role)))


if __name__ == "__main__":
    main()
