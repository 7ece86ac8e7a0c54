"""Bench: a 30-question harness run (the brain, then a 3-judge panel on each answer) against the
provider stand-in at a fixed latency, at concurrency 8 and 16.

Each level runs twice. --concurrency N is a ceiling per provider (the brain, anthropic here, and
each judge's provider have N each), so the ideal is the schedule of those limits, not one pool. `streamed` is `run brain-eval` as the CLI makes it, minus its printing: one
connection for the whole command, the run inserted on it, 30 brain calls with each answer stored as it arrives, with those that arrived while
the last were stored (analysis row, answer row, the database's automatic scores), each
contract-keeping answer's 3 judge calls joining the same pool as soon as it is stored, each draft
stored as it arrives (answers first when both wait). `phased` is the earlier way, the
baseline in the same run: all 30 answers first, then the 90 judge calls. Figures:
  wall s        the whole run
  ideal s       the run as the limits allow it with no cost but the latency: every provider
                running c calls at a time, each answer's judges queued the moment it returns
                (a discrete schedule of the calls; `pool s` beside it is calls / c x latency, the
                yardstick when c bounded all providers together)
  phased s      the same schedule with all the answers first, then the judges
  ideal/wall    the issue's aim is >= 0.9
  db ms/q       time in the database per question: its answer stored, plus its three drafts
and, per phase (brain, then judges; streamed: the one pool, then what is left), where its wall time goes:
  calls s       inside run_calls (the provider calls, with each result stored as it arrives)
  other s       the phase's own setup and teardown outside run_calls (connection, reading the
                answers to judge, building requests)
  tail ms       after the last call of the phase returned, until its results were stored
It starts its own database (DATABASE_URL's server when set, else a throwaway embedded one) and
runs the stand-in in a child process, so the wall time is the runner's alone.

    .venv/bin/python bench/harness_run.py [--latency-ms 200] [--levels 8,16]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import multiprocessing
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from evalledger.core import db  # noqa: E402
from evalledger.core.scratch import migrated_database, server  # noqa: E402
from evalledger.judges.panel import Panel  # noqa: E402
from evalledger.suites.brain_eval import brains, catalog, contracts, harness, store  # noqa: E402
from tests.standin import StandIn  # noqa: E402

TRIGGERS = ("quarterly", "on_demand", "pre_launch", "prompt_change", "model_promotion")
PROMPT = "You are the action brain of RevOps. Cite the source id of every number you state.\n"


def _serve_in_child(latency_s: float, conn) -> None:
    with StandIn() as standin:
        standin.latency_s = latency_s
        conn.send(standin.env())
        conn.recv()  # block until the parent is done


class Timed:
    """Wall time spent in one module function, summed over calls."""

    def __init__(self, module, name: str) -> None:
        self.module, self.name, self.original, self.seconds = module, name, getattr(module, name), 0.0

        def timed(*args, **kwargs):
            start = time.perf_counter()
            try:
                return self.original(*args, **kwargs)
            finally:
                self.seconds += time.perf_counter() - start

        setattr(module, name, timed)

    def restore(self) -> None:
        setattr(self.module, self.name, self.original)


class TimedCalls:
    """run_calls as harness uses it, timed: seconds inside it, and when its last call returned."""

    def __init__(self) -> None:
        self.original, self.seconds, self.tails = harness.run_calls, [], []

        async def timed(requests, *, on_result=None, **kwargs):
            last = [0.0]

            async def noted(call):
                last[0] = time.perf_counter()  # this result's call has returned
                outcome = on_result(call)
                if asyncio.iscoroutine(outcome):
                    outcome = await outcome
                return outcome  # the follow-ups (judges) an answer asks for

            start = time.perf_counter()
            try:
                return await self.original(requests, on_result=noted if on_result else None, **kwargs)
            finally:
                end = time.perf_counter()
                self.seconds.append(end - start)
                self.tails.append(end - last[0] if last[0] else 0.0)

        harness.run_calls = timed

    def restore(self) -> None:
        harness.run_calls = self.original


def ideal_schedule(brain: str, judges: list[str], questions: int, level: int, latency: float, *,
                   streamed: bool) -> float:
    """When the last call ends if every provider runs `level` calls at a time, first come first served,
    each call taking `latency`, and each answer's judges join the queues when it returns (streamed) or
    after the last answer (phased)."""
    free = {}  # provider -> the times its slots come free
    def provider(spec):
        return spec.split(":")[0]
    for spec in [brain, *judges]:
        free.setdefault(provider(spec), [0.0] * level)

    def run(spec, ready):
        slots = free[provider(spec)]
        slot = min(range(level), key=slots.__getitem__)
        start = max(ready, slots[slot])
        slots[slot] = start + latency
        return start + latency

    answers = [run(brain, 0.0) for _ in range(questions)]
    last_answer = max(answers)
    ends = []
    # Judges queue in the order their answers return.
    for answered in sorted(answers):
        for judge in judges:
            ends.append(run(judge, answered if streamed else last_answer))
    return max(ends + answers)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency-ms", type=float, default=200)
    parser.add_argument("--levels", default="8,16")
    args = parser.parse_args()
    latency = args.latency_ms / 1000
    levels = [int(x) for x in args.levels.split(",")]
    assert len(levels) < len(TRIGGERS), "one run trigger per level (and the warm-up) keeps each run its own"

    parent_conn, child_conn = multiprocessing.Pipe()
    child = multiprocessing.Process(target=_serve_in_child, args=(latency, child_conn), daemon=True)
    child.start()
    os.environ.update(parent_conn.recv())
    views = Path(tempfile.mkdtemp(prefix="evalledger-bench-views-"))
    (views / "v.sql").write_text("CREATE VIEW v_accounts AS SELECT account_id, name FROM accounts;\n")
    try:
        with server() as url, migrated_database(url, "evalledger_bench_harness") as dsn:
            with db.transaction("owner", dsn) as conn:
                catalog.load(conn, json.loads(catalog.demo_catalog_path().read_text("utf-8")), None)
                brain, _ = brains.add(conn, "AGT-902", "anthropic:claude-sonnet-4-6", PROMPT, None,
                                      ["add_pipeline_generation", "rep_coaching", "save_play"])
                store.add_reviewer(conn, "evalledger_bench_reviewer", "Bench reviewer")
            found = contracts.from_folder(views)
            def panel(concurrency: int) -> Panel:
                return Panel(harness.DEFAULT_JUDGES, suite=harness.__package__, judges="live", concurrency=concurrency,
                             timeout_s=10, max_retries=0)

            print(f"30 questions x (1 brain + {len(panel(8).specs)} judges), {args.latency_ms:.0f} ms stand-in latency")
            print(f"{'concurrency':>11} {'mode':>8} {'wall s':>8} {'ideal s':>8} {'pool s':>7} {'phased s':>9} {'ideal/wall':>10} {'db ms/q':>8}"
                  f"  brain: wall / calls / other s, tail ms   judges: wall / calls / other s, tail ms   load")
            # Warm-up: SDK imports, first connections and caches are not what the levels measure.
            with db.transaction("runner", dsn) as conn:
                warm = harness.plan(conn, brain, catalog.DEMO_VERSION, ["EVAL-Q01", "EVAL-Q02"],
                                    "evalledger_bench_reviewer", TRIGGERS[-1], found, "live")
                warm_id, _, _ = harness.start_or_resume(conn, warm)
            asyncio.run(harness.execute(warm, warm_id, set(), url=dsn, concurrency=8, timeout_s=10, max_retries=0,
                                        budget=None))
            asyncio.run(harness.judge(warm_id, panel(8), url=dsn))
            for (level, mode), trigger in zip([(lv, m) for lv in levels for m in ("phased", "streamed")], TRIGGERS * 2):
                # One connection for the run, as `run brain-eval` has it: the run started on it, then
                # its answers and drafts stored on it.
                conn = db.connect(dsn, role="runner")
                with db.within(conn):
                    planned = harness.plan(conn, brain, catalog.DEMO_VERSION, None, "evalledger_bench_reviewer",
                                           trigger, found, "live")
                    run_id, _, answered = harness.start_or_resume(conn, planned)
                answers = Timed(harness, "store_answer")
                drafts = Timed(harness, "store_suggestion")
                calls_timed = TimedCalls()
                try:
                    start = time.perf_counter()
                    streamed = harness.Judged()
                    judges = panel(level)
                    outcome = asyncio.run(harness.execute(
                        planned, run_id, answered, url=dsn, concurrency=level, timeout_s=10, max_retries=0, budget=None,
                        conn=conn,
                        **({"panel": judges, "judged": streamed} if mode == "streamed" else {})))
                    between = time.perf_counter()
                    judged = asyncio.run(harness.judge(run_id, judges, url=dsn, conn=conn)).plus(streamed)
                    wall = time.perf_counter() - start
                finally:
                    answers.restore()
                    drafts.restore()
                    calls_timed.restore()
                    conn.close()
                phases = []
                for phase_wall, calls_s, tail_s in zip((between - start, start + wall - between),
                                                       calls_timed.seconds, calls_timed.tails):
                    phases.append(f"{phase_wall:>5.2f} / {calls_s:.2f} / {phase_wall - calls_s:.2f}, {tail_s * 1000:>4.0f}")
                phases += ["(none left)"] * (2 - len(phases))
                questions = len(planned.questions)
                calls = outcome.asked + judged.asked
                judge_specs = [j.spec for j in judges]
                ideal = ideal_schedule(brain.model_spec, judge_specs, outcome.asked, level, latency, streamed=True)
                phased = ideal_schedule(brain.model_spec, judge_specs, outcome.asked, level, latency, streamed=False)
                pool = calls / level * latency
                db_ms = (answers.seconds + drafts.seconds) * 1000 / questions
                failed = len(outcome.failed) + judged.failed
                note = f"  ({failed} failed)" if failed else ""
                load = Path("/proc/loadavg").read_text().split()[0]
                print(f"{level:>11} {mode:>8} {wall:>8.2f} {ideal:>8.2f} {pool:>7.2f} {phased:>9.2f} {ideal / wall:>10.2f} {db_ms:>8.1f}"
                      f"  {phases[0]:>27}   {phases[1]:>28}   {load}{note}")
    finally:
        parent_conn.send("stop")
        child.join(5)


if __name__ == "__main__":
    main()
