"""Bench: 90 panel judge calls through run_calls against the stand-in, at several concurrencies.

Every level uses the same fixed server latency (default 200 ms), so concurrency 1 takes
about 90 x 0.2 = 18 s and the whole bench well under a minute. Each level is one
run_calls() as a suite would make it: fresh clients, fresh connections, 30 items x a
3-model cross-family panel (OpenAI, Anthropic, Gemini via the OpenAI-compatible API).
ideal = ceil(calls / concurrency) x latency; ratio = ideal / wall.
cpu ms/call is this process's CPU time (process_time) per call. With --standin process
(the default) the server runs in a child process, so the figure and the wall time are
the runner's alone; with --standin thread the server shares this process and its GIL,
and its request handling counts too.

    .venv/bin/python bench/panel_concurrency.py [--latency-ms 200] [--standin thread|process]
"""

from __future__ import annotations

import argparse
import asyncio
import math
import multiprocessing
import pathlib
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from evalledger.judges.providers import JudgeRequest, run_calls  # noqa: E402
from tests.standin import StandIn  # noqa: E402

CALLS = 90
PANEL = ["openai:gpt-4o", "anthropic:claude-opus-4-7", "google:gemini-1.5-pro"]
DIMS = ["accuracy", "attribution", "weight_calibration", "kind_classification", "signal_density"]
SCHEMA = {
    "type": "object",
    "properties": {
        "scores": {
            "type": "object",
            "properties": {d: {"type": "integer", "minimum": 1, "maximum": 10} for d in DIMS},
            "required": DIMS,
            "additionalProperties": False,
        },
        "narrative": {"type": "string"},
    },
    "required": ["scores", "narrative"],
    "additionalProperties": False,
}
SYSTEM = "You are a strict judge. Score the take on each dimension from 1 to 10. " * 10


def _serve_in_child(latency_s: float, conn) -> None:
    with StandIn() as standin:
        standin.latency_s = latency_s
        conn.send(standin.env())
        conn.recv()  # block until the parent is done


def _requests() -> list[JudgeRequest]:
    items = CALLS // len(PANEL)
    return [
        JudgeRequest(spec, system=SYSTEM, user=f"<take id={i}>Revenue grew {i}% last quarter.</take>" * 20,
                     json_schema=SCHEMA, max_output_tokens=400, key=(i, spec))
        for i in range(items)
        for spec in PANEL
    ]


async def _run(env: dict, concurrency: int) -> list:
    return await run_calls(_requests(), concurrency=concurrency, timeout_s=10, max_retries=0, env=env)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency-ms", type=float, default=200)
    parser.add_argument("--standin", choices=["thread", "process"], default="process")
    parser.add_argument("--levels", default="1,8,16,32")
    args = parser.parse_args()
    latency = args.latency_ms / 1000

    child = parent_conn = standin = None
    if args.standin == "process":
        parent_conn, child_conn = multiprocessing.Pipe()
        child = multiprocessing.Process(target=_serve_in_child, args=(latency, child_conn), daemon=True)
        child.start()
        env = parent_conn.recv()
    else:
        standin = StandIn().start()
        standin.latency_s = latency
        env = standin.env()

    try:
        asyncio.run(_run(env, 8))  # warm-up: imports, first connections, caches
        print(f"{CALLS} calls, {args.latency_ms:.0f} ms stand-in latency, stand-in in a {args.standin}")
        print(f"{'concurrency':>11} {'wall s':>8} {'ideal s':>8} {'ideal/wall':>10} {'cpu ms/call':>11}")
        for level in (int(x) for x in args.levels.split(",")):
            cpu0, t0 = time.process_time(), time.perf_counter()
            calls = asyncio.run(_run(env, level))
            wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
            failed = sum(not c.ok for c in calls)
            ideal = math.ceil(CALLS / level) * latency
            note = f"  ({failed} failed)" if failed else ""
            print(f"{level:>11} {wall:>8.2f} {ideal:>8.2f} {ideal / wall:>10.2f} {cpu * 1000 / CALLS:>11.1f}{note}")
    finally:
        if standin is not None:
            standin.stop()
        if child is not None:
            parent_conn.send("stop")
            child.join(5)


if __name__ == "__main__":
    main()
