"""Bench: the panel's calls against the provider stand-in, with the peers beside it, in one run.

Scenarios (90 calls, 200 ms stand-in latency by default, the stand-in in its own process):
  no flags      every tool at its default: evalledger's adaptive limit; evalledger at --baseline
                (the last commit with the fixed default of 8 and 3 retries: "today"); inspect-ai's
                automatic adaptive connections; promptfoo's default concurrency
  30% 429       the same, with 30% of requests answered 429 with Retry-After: 1 (--repeats runs each)
  fixed N       evalledger with --concurrency N (8, 16, 32): ratio against ideal = ceil(90 / N) x latency
  panel         3 providers x 30 items, evalledger adaptive against the baseline's fixed 8
  start-up      `evalledger --help`; importing the judge layer; and process start to the first request
                the stand-in receives, for a panel of all three providers (--startup-cli: the real
                `run takes-quality` against a scratch database)
  imports       process start to each provider's first request of a 3-provider panel, beside a
                process that only imports each SDK (the floor any import order can reach)
The one-provider scenarios send every tool's calls to openai:gpt-4o through the OpenAI-compatible
API, so each tool's limit is one limit.

Columns (the limit column is evalledger's own report of each provider's limit): run s is the tool's own time for its calls (evalledger: around run_calls, after a warm-up
run in the same process; inspect-ai: around eval(), after a warm-up eval; promptfoo: the whole
process, node start-up included); span s is measured by the stand-in for every tool alike, from the
first request received to the last answer sent; peak is the most requests in flight at the
stand-in; 429s the refusals it sent; lost = calls without an answer. Ratios: ideal/run for the fixed
levels; `x` against evalledger's span in the same repeat (above 1: that tool is slower) for the
scenarios; the aims compare medians over the repeats. Under 30% 429 each repeat draws its 429s with
a seed of its own, the same seed for every tool. evalledger's own rows there show `f`: its span
against the floor no tool that honours Retry-After and loses nothing can beat, the unluckiest call's
own chain (its 429s x Retry-After + its other attempts x latency); a tool that gives up early (today's 3
retries) can end before that floor only by losing the calls that set it.

The peers are measured only with --peers, from a scratch folder (never the project's dependencies):
    --install-peers   creates DIR/venv (pip install inspect-ai openai) and DIR/promptfoo
                      (npm install promptfoo), DIR from --peers-dir (default: a folder in the
                      system's temporary directory); a peer not installed is skipped with a note.

    .venv/bin/python bench/panel_concurrency.py [--peers [--install-peers]] [--latency-ms 200]
        [--baseline REF] [--repeats 5] [--levels 8,16,32] [--only SCENARIO,...] [--startup-cli]
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing
import os
import pathlib
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.standin import FAKE_KEYS, StandIn  # noqa: E402

# The last commit whose panel had a fixed concurrency of 8 and 3 retries by count.
FIXED_DEFAULT_COMMIT = "f4fb6a0"
PANEL = ["openai:gpt-4o", "anthropic:claude-opus-4-7", "google:gemini-1.5-pro"]
PEERS_DIR = pathlib.Path(tempfile.gettempdir()) / "evalledger-bench-peers"
SCENARIOS = ("defaults", "throttled", "fixed", "panel", "startup", "imports")


# --- the stand-in, in its own process ------------------------------------------------------


def _serve(conn) -> None:
    with StandIn() as standin:
        conn.send(standin.env())
        while True:
            command, payload = conn.recv()
            if command == "configure":
                standin.reset()
                standin.latency_s = payload.get("latency_s", 0.0)
                if payload.get("throttle"):
                    fraction, retry_after, *seed = payload["throttle"]
                    standin.throttle(fraction, retry_after, seed=seed[0] if seed else 20)
                conn.send(None)
            elif command == "stats":
                conn.send(standin.stats())
            else:
                return


class StandInProcess:
    def __init__(self) -> None:
        self.conn, child = multiprocessing.Pipe()
        self.process = multiprocessing.Process(target=_serve, args=(child,), daemon=True)
        self.process.start()
        self.env = self.conn.recv()

    def configure(self, **settings) -> None:
        self.conn.send(("configure", settings))
        self.conn.recv()

    def stats(self) -> dict:
        self.conn.send(("stats", None))
        return self.conn.recv()

    def close(self) -> None:
        self.conn.send(("stop", None))
        self.process.join(5)


# --- evalledger, this tree or the baseline's, in a process of its own ------------------------

_EVALLEDGER_WORKER = r'''
import asyncio, json, sys, time
from evalledger.judges.providers import JudgeRequest, run_calls
job = json.loads(sys.argv[1])
DIMS = ["accuracy", "attribution", "weight_calibration", "kind_classification", "signal_density"]
SCHEMA = {"type": "object", "additionalProperties": False, "required": ["scores", "narrative"], "properties": {
    "scores": {"type": "object", "additionalProperties": False, "required": DIMS,
               "properties": {d: {"type": "integer", "minimum": 1, "maximum": 10} for d in DIMS}},
    "narrative": {"type": "string"}}}
SYSTEM = "You are a strict judge. Score the take on each dimension from 1 to 10. " * 10

def requests(n, models):
    return [JudgeRequest(models[i % len(models)], system=SYSTEM, json_schema=SCHEMA, max_output_tokens=400,
                         user=f"<take id={i}>Revenue grew {i}% last quarter.</take>" * 20, key=i) for i in range(n)]

kwargs = {"concurrency": job["concurrency"], "timeout_s": 30, "max_retries": job["max_retries"]}
if job.get("warm", True):
    asyncio.run(run_calls(requests(8, job["models"]), **kwargs))  # imports, first connections, caches
    print("ready", flush=True)
    sys.stdin.readline()
cpu0, t0 = time.process_time(), time.perf_counter()
calls = asyncio.run(run_calls(requests(job["calls"], job["models"]), **kwargs))
wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
report = getattr(calls, "report", None)  # the baseline's run_calls returns a plain list
limits = " ".join(f"{r.start}->{r.final}/{r.highest}" + (f" cut {r.cuts_congestion}+{r.cuts_latency}"
                  if r.cuts_congestion or r.cuts_latency else "") for r in report.providers.values()) if report else ""
worst = max(calls, key=lambda c: c.latency_ms)
# No tool that honours Retry-After and loses nothing ends sooner than its unluckiest call's own
# chain: each 429's Retry-After (the stand-in answers a 429 at once) plus each other attempt's
# latency (the baseline's calls have no rate_limited: all but the last attempt count as 429s).
def chain(c):
    refused = getattr(c, "rate_limited", c.attempts - 1)
    return refused * job["retry_after"] + (c.attempts - refused) * job["latency_s"]
floor = max(chain(c) for c in calls if c.ok) if job["retry_after"] else 0.0
print(json.dumps({"run_s": wall, "cpu_ms_per_call": cpu * 1000 / job["calls"], "limits": limits, "floor_s": floor,
                  "slowest": f"slowest call {worst.latency_ms / 1000:.1f} s, {worst.attempts} attempts",
                  "failed": sum(not c.ok for c in calls)}), flush=True)
'''


def baseline_tree(ref: str, into: pathlib.Path) -> pathlib.Path | None:
    """The runner and the SQL of commit ref, unpacked (git archive), or None without the history."""
    try:
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", ref, "runner", "sql", "migrations", "triggers"],
                                 capture_output=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    into.mkdir(parents=True, exist_ok=True)
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into / "runner"


def run_evalledger(standin: StandInProcess, scenario: dict, *, runner: pathlib.Path, concurrency, max_retries,
                   calls: int, models: list[str], warm: bool = True) -> dict:
    job = {"concurrency": concurrency, "max_retries": max_retries, "calls": calls, "models": models, "warm": warm,
           "latency_s": scenario["latency_s"], "retry_after": scenario.get("throttle", [0, 0])[1]}
    env = {**os.environ, **standin.env, "PYTHONPATH": str(runner)}
    standin.configure(latency_s=scenario["latency_s"])
    worker = subprocess.Popen([sys.executable, "-c", _EVALLEDGER_WORKER, json.dumps(job)], env=env,
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    if warm:
        assert worker.stdout.readline().strip() == "ready"
        standin.configure(**scenario)
        worker.stdin.write("go\n")
        worker.stdin.flush()
    out, _ = worker.communicate(timeout=900)
    return {**json.loads(out.strip().splitlines()[-1]), **_span(standin.stats(), calls)}


def _span(stats: dict, calls: int) -> dict:
    span = (stats["last_done_at"] - stats["first_at"]) if stats["first_at"] is not None else math.nan
    return {"span_s": span, "peak": stats["max_in_flight"], "r429": stats["statuses"].get(429, 0),
            "lost": calls - stats["statuses"].get(200, 0)}


# --- the peers -----------------------------------------------------------------------------

_INSPECT_WORKER = r'''
import json, sys, time, tempfile
from inspect_ai import Task, eval as inspect_eval
from inspect_ai.dataset import Sample
from inspect_ai.solver import generate
n = int(sys.argv[1])
logs = tempfile.mkdtemp()
def task(k):
    return Task(dataset=[Sample(input=f"<take id={i}>Revenue grew {i}% last quarter.</take>" * 20) for i in range(k)],
                solver=generate(), name="bench")
inspect_eval(task(8), model="openai/gpt-4o", display="none", log_dir=logs)
print("ready", flush=True)
sys.stdin.readline()
t0 = time.perf_counter()
[log] = inspect_eval(task(n), model="openai/gpt-4o", display="none", log_dir=logs)
wall = time.perf_counter() - t0
print(json.dumps({"run_s": wall, "status": log.status}), flush=True)
'''


def install_peers(folder: pathlib.Path) -> None:
    """inspect-ai into folder/venv, promptfoo into folder/promptfoo: scratch, not the project's."""
    folder.mkdir(parents=True, exist_ok=True)
    venv = folder / "venv"
    if not (venv / "bin" / "python").exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    subprocess.run([str(venv / "bin" / "pip"), "install", "-q", "inspect-ai", "openai"], check=True)
    (folder / "promptfoo").mkdir(exist_ok=True)
    node = subprocess.run(["node", "--version"], capture_output=True, text=True, check=True).stdout
    # promptfoo 0.122 and later need Node 22; 0.121 is the last to run on Node 20.
    package = "promptfoo" if int(node.lstrip("v").split(".")[0]) >= 22 else "promptfoo@~0.121"
    subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--prefix", str(folder / "promptfoo"), package],
                   check=True, stdout=subprocess.DEVNULL)


def peer_versions(folder: pathlib.Path) -> dict[str, str | None]:
    found: dict[str, str | None] = {"inspect-ai": None, "promptfoo": None}
    python = folder / "venv" / "bin" / "python"
    if python.exists():
        done = subprocess.run([str(python), "-c", "import importlib.metadata as m; print(m.version('inspect-ai'))"],
                              capture_output=True, text=True)
        found["inspect-ai"] = done.stdout.strip() or None
    package = folder / "promptfoo" / "node_modules" / "promptfoo" / "package.json"
    if package.exists():
        found["promptfoo"] = json.loads(package.read_text())["version"]
    return found


def run_inspect(standin: StandInProcess, scenario: dict, folder: pathlib.Path, calls: int) -> dict:
    env = {**os.environ, "OPENAI_BASE_URL": standin.env["OPENAI_BASE_URL"], "OPENAI_API_KEY": FAKE_KEYS["openai"],
           "INSPECT_LOG_LEVEL": "error", "INSPECT_DISPLAY": "none"}
    standin.configure(latency_s=scenario["latency_s"])
    worker = subprocess.Popen([str(folder / "venv" / "bin" / "python"), "-c", _INSPECT_WORKER, str(calls)], env=env,
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert worker.stdout.readline().strip() == "ready"
    standin.configure(**scenario)
    worker.stdin.write("go\n")
    worker.stdin.flush()
    out, _ = worker.communicate(timeout=900)
    return {**json.loads(out.strip().splitlines()[-1]), **_span(standin.stats(), calls)}


def run_promptfoo(standin: StandInProcess, scenario: dict, folder: pathlib.Path, calls: int) -> dict:
    work = pathlib.Path(tempfile.mkdtemp(prefix="evalledger-bench-promptfoo-"))
    config = {"providers": [{"id": "openai:chat:gpt-4o",
                             "config": {"apiBaseUrl": standin.env["OPENAI_BASE_URL"], "apiKey": FAKE_KEYS["openai"]}}],
              "prompts": ["Judge this take: revenue grew {{i}}% last quarter."],
              "tests": [{"vars": {"i": i}} for i in range(calls)]}
    (work / "promptfooconfig.json").write_text(json.dumps(config))
    env = {**os.environ, "PROMPTFOO_DISABLE_TELEMETRY": "1", "PROMPTFOO_DISABLE_UPDATE": "1",
           "PROMPTFOO_CONFIG_DIR": str(work / "home"), "PROMPTFOO_DISABLE_SHARING": "1", "NO_COLOR": "1"}
    standin.configure(**scenario)
    t0 = time.perf_counter()
    subprocess.run([str(folder / "promptfoo" / "node_modules" / ".bin" / "promptfoo"), "eval", "-c",
                    str(work / "promptfooconfig.json"), "--no-cache", "--no-progress-bar", "--no-table",
                    "-o", str(work / "out.json")], env=env, cwd=work, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, timeout=900)
    wall = time.perf_counter() - t0
    shutil.rmtree(work, ignore_errors=True)
    return {"run_s": wall, **_span(standin.stats(), calls)}


# --- printing ------------------------------------------------------------------------------


def load() -> str:
    return pathlib.Path("/proc/loadavg").read_text().split()[0] if pathlib.Path("/proc/loadavg").exists() else "?"


HEADER = (f"{'scenario':<10} {'tool':<36} {'run s':>6} {'span s':>6} {'peak':>4} {'429s':>4} {'lost':>4} "
          f"{'ratio':>6} {'load':>5}  limit: start->final/highest, cuts on 429+latency")


def row(scenario: str, tool: str, r: dict, ratio: str = "") -> str:
    return (f"{scenario:<10} {tool:<36} {r['run_s']:>6.2f} {r['span_s']:>6.2f} {r['peak']:>4} {r['r429']:>4} "
            f"{r['lost']:>4} {ratio:>6} {load():>5}  {r.get('limits', '')}  {r.get('slowest', '')}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency-ms", type=float, default=200)
    parser.add_argument("--calls", type=int, default=90)
    parser.add_argument("--levels", default="8,16,32")
    parser.add_argument("--repeats", type=int, default=5, help="runs of each tool under 30%% 429s")
    parser.add_argument("--baseline", default=FIXED_DEFAULT_COMMIT, help="the commit measured as today's")
    parser.add_argument("--peers", action="store_true", help="measure inspect-ai and promptfoo too")
    parser.add_argument("--install-peers", action="store_true", help="install them first, into --peers-dir")
    parser.add_argument("--peers-dir", type=pathlib.Path, default=PEERS_DIR)
    parser.add_argument("--only", default=",".join(SCENARIOS), help=f"some of {','.join(SCENARIOS)}")
    parser.add_argument("--startup-cli", action="store_true",
                        help="also time `run takes-quality` to its first request (starts a scratch database)")
    args = parser.parse_args()
    only = set(args.only.split(","))
    latency = args.latency_ms / 1000
    calls = args.calls
    if args.install_peers:
        install_peers(args.peers_dir)
    versions = peer_versions(args.peers_dir) if args.peers else {}
    scratch = pathlib.Path(tempfile.mkdtemp(prefix="evalledger-bench-baseline-"))
    baseline = baseline_tree(args.baseline, scratch)
    here = ROOT / "runner"
    standin = StandInProcess()
    one = ["openai:gpt-4o"]
    summary: dict[str, float] = {}  # medians over the repeats
    spans: dict[str, list[float]] = {}
    try:
        print(f"{calls} calls, {args.latency_ms:.0f} ms stand-in latency, stand-in in its own process, "
              f"{os.cpu_count()} cores; baseline {args.baseline}" + ("" if baseline else " (no git history: skipped)"))
        if args.peers:
            for name, version in versions.items():
                print(f"{name}: {version or 'not installed (--install-peers installs it)'}")
        print(HEADER)
        plain = {"latency_s": latency}
        throttled = {"latency_s": latency, "throttle": [0.3, 1]}
        for name, scenario, repeats in (("defaults", plain, 1), ("throttled", throttled, args.repeats)):
            if name not in only:
                continue
            label = "no flags" if name == "defaults" else "30% 429"
            # Each repeat draws its 429s with a seed of its own, the same for every tool.
            runs = [{**scenario, "throttle": [*scenario["throttle"], 20 + k]} if "throttle" in scenario else scenario
                    for k in range(repeats)]
            ours = [run_evalledger(standin, each, runner=here, concurrency=None, max_retries=3, calls=calls,
                                   models=one) for each in runs]
            summary[f"{name} evalledger"] = statistics.median(r["span_s"] for r in ours)
            if "throttle" in scenario:
                summary[f"{name} evalledger/floor"] = statistics.median(r["span_s"] / r["floor_s"] for r in ours)
                summary[f"{name} evalledger lost"] = sum(r["lost"] for r in ours)
            for r in ours:
                print(row(label, "evalledger (adaptive)", r,
                          f"{r['span_s'] / r['floor_s']:.2f}f" if r.get("floor_s") else ""))
            others = []
            if baseline:
                others.append((f"evalledger {args.baseline} (fixed 8)",
                               lambda each: run_evalledger(standin, each, runner=baseline, concurrency=8, max_retries=3,
                                                           calls=calls, models=one)))
            if versions.get("inspect-ai"):
                others.append((f"inspect-ai {versions['inspect-ai']} (adaptive)",
                               lambda each: run_inspect(standin, each, args.peers_dir, calls)))
            if versions.get("promptfoo"):
                others.append((f"promptfoo {versions['promptfoo']} (default)",
                               lambda each: run_promptfoo(standin, each, args.peers_dir, calls)))
            for tool, measure in others:
                for k, each in enumerate(runs):
                    r = measure(each)
                    spans.setdefault(f"{name} {_tool_name(tool)}", []).append(r["span_s"])
                    print(row(label, tool, r, f"{r['span_s'] / ours[k]['span_s']:.2f}x"))
        for key, values in spans.items():
            summary[key] = statistics.median(values)
        if "fixed" in only:
            for level in (int(x) for x in args.levels.split(",")):
                ideal = math.ceil(calls / level) * latency
                r = run_evalledger(standin, plain, runner=here, concurrency=level, max_retries=3, calls=calls,
                                   models=one)
                summary[f"fixed {level}"] = ideal / r["run_s"]
                print(row(f"fixed {level}", "evalledger --concurrency", r, f"{ideal / r['run_s']:.2f}"))
                if baseline:
                    b = run_evalledger(standin, plain, runner=baseline, concurrency=level, max_retries=3, calls=calls,
                                       models=one)
                    print(row(f"fixed {level}", f"evalledger {args.baseline}", b, f"{ideal / b['run_s']:.2f}"))
        if "panel" in only:
            r = run_evalledger(standin, plain, runner=here, concurrency=None, max_retries=3, calls=calls, models=PANEL)
            print(row("panel", "evalledger (adaptive, 3 providers)", r))
            if baseline:
                b = run_evalledger(standin, plain, runner=baseline, concurrency=8, max_retries=3, calls=calls,
                                   models=PANEL)
                print(row("panel", f"evalledger {args.baseline} (fixed 8)", b, f"{b['span_s'] / r['span_s']:.2f}x"))
        if "startup" in only:
            startup(standin, here, baseline, args)
        if "imports" in only:
            summary.update(imports(standin, here, args.repeats))
        print()
        for line in aims(summary, args):
            print(line)
    finally:
        standin.close()
        shutil.rmtree(scratch, ignore_errors=True)


def _tool_name(tool: str) -> str:
    """The tool's name without its version: "inspect-ai 0.3.285 (adaptive)" -> "inspect-ai"."""
    name = tool.split(" (")[0]
    return name if name.startswith("evalledger") else name.split()[0]


def aims(summary: dict[str, float], args) -> list[str]:
    said = []

    def verdict(ok: bool) -> str:
        return "met" if ok else "NOT met"

    ours = summary.get("defaults evalledger")
    for peer in ("inspect-ai", "promptfoo", "evalledger " + args.baseline):
        theirs = summary.get(f"defaults {peer}")
        if ours and theirs:
            said.append(f"aim: no flags at least as fast as {peer}: {ours:.2f} s against {theirs:.2f} s "
                        f"({theirs / ours:.2f}x): {verdict(ours <= theirs)}")
    ours = summary.get("throttled evalledger")
    today = summary.get(f"throttled evalledger {args.baseline}")
    if ours and today:
        said.append(f"aim: 30% 429 at least as fast as today: median {ours:.2f} s against {today:.2f} s: "
                    f"{verdict(ours <= today)} (today's lost calls: see the rows)")
    if "throttled evalledger lost" in summary:
        lost = int(summary["throttled evalledger lost"])
        said.append(f"aim: 30% 429, 0 calls lost: {lost} lost over {args.repeats} runs: {verdict(lost == 0)}; "
                    f"span against the unluckiest call's own Retry-After chain (f): median "
                    f"{summary['throttled evalledger/floor']:.2f}")
    if "imports panel" in summary:
        slowest = summary["imports panel"]
        said.append(f"aim: each judge's first request within 1 s of the process start: the last provider's "
                    f"median {slowest:.2f} s: {verdict(slowest <= 1.0)}")
    for level, aim in ((16, 0.95), (32, 0.9)):
        if f"fixed {level}" in summary:
            said.append(f"aim: --concurrency {level} at least {aim} of ideal: {summary[f'fixed {level}']:.2f}: "
                        f"{verdict(summary[f'fixed {level}'] >= aim)}")
    return said


# --- start-up ------------------------------------------------------------------------------


def startup(standin: StandInProcess, here: pathlib.Path, baseline: pathlib.Path | None, args) -> None:
    print()
    trees = [("this tree", here)] + ([(args.baseline, baseline)] if baseline else [])
    for name, runner in trees:
        env = {**os.environ, "PYTHONPATH": str(runner)}
        helps = [_timed([sys.executable, "-c", "import sys; from evalledger.cli import main; sys.argv = "
                         "['evalledger', '--help']; main()"], env) for _ in range(5)]
        imports = [_timed([sys.executable, "-c", "import evalledger.judges.panel, evalledger.cli"], env)
                   for _ in range(3)]
        firsts = []
        for _ in range(3):
            standin.configure(latency_s=0.0)
            started = time.monotonic()
            run_evalledger(standin, {"latency_s": 0.0}, runner=runner, concurrency=None if runner == here else 8,
                           max_retries=3, calls=3, models=PANEL, warm=False)
            firsts.append(standin.stats()["first_at"] - started)
        print(f"start-up {name:>9}: --help {statistics.median(helps):.2f} s, importing the judge layer and the CLI "
              f"{statistics.median(imports):.2f} s, process start to the first request of a 3-provider panel "
              f"{statistics.median(firsts):.2f} s (median of {len(firsts)}; load {load()})")
        if args.startup_cli:
            cli_startup(standin, name, runner)


# One call per model of the 3-provider panel, from a fresh process.
_IMPORTS_WORKER = r'''
import asyncio, sys
from evalledger.judges.providers import JudgeRequest, run_calls
asyncio.run(run_calls([JudgeRequest(m, system="s", user="u") for m in sys.argv[1].split(",")], timeout_s=30))
'''


def imports(standin: StandInProcess, here: pathlib.Path, repeats: int) -> dict[str, float]:
    """Each provider's first request after process start, against a process that only imports its SDK."""
    print()
    env = {**os.environ, **standin.env, "PYTHONPATH": str(here)}
    firsts: dict[str, dict[str, list[float]]] = {"panel": {}}
    for _ in range(repeats):
        for how in firsts:
            standin.configure(latency_s=0.0)
            started = time.monotonic()
            subprocess.run([sys.executable, "-c", _IMPORTS_WORKER, ",".join(PANEL)], env=env, check=True,
                           stdout=subprocess.DEVNULL)
            for model, at in standin.stats()["first_at_by_model"].items():
                firsts[how].setdefault(model, []).append(at - started)
    bare = {sdk: statistics.median(_timed([sys.executable, "-c", f"import {sdk}"], env) for _ in range(3))
            for sdk in ("openai", "anthropic")}
    summary = {}
    for how, by_model in firsts.items():
        medians = {model: statistics.median(times) for model, times in by_model.items()}
        summary[f"imports {how}"] = max(medians.values())
        print(f"imports {how:>12}: process start to each provider's first request (median of {repeats}): "
              + ", ".join(f"{model} {seconds:.2f} s" for model, seconds in sorted(medians.items()))
              + f" (load {load()})")
    print(f"imports: a process that imports only openai takes {bare['openai']:.2f} s, only anthropic "
          f"{bare['anthropic']:.2f} s (medians of 3)")
    return summary


def _timed(argv: list[str], env: dict) -> float:
    t0 = time.perf_counter()
    subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - t0


# The console script, noting on stderr when the run reaches run_calls (the panel's own start).
_CLI = r'''
import sys, time
import evalledger.judges.panel as panel
real = panel.run_calls
async def noted(*args, **kwargs):
    print(f"bench: run_calls at {time.monotonic()}", file=sys.stderr, flush=True)
    return await real(*args, **kwargs)
panel.run_calls = noted
from evalledger.cli import main
main()
'''


def cli_startup(standin: StandInProcess, name: str, runner: pathlib.Path) -> None:
    """`run takes-quality` on 3 takes with the 3-provider panel: process start to first request."""
    from evalledger.core.scratch import migrated_database, server

    folder = pathlib.Path(tempfile.mkdtemp())
    with server() as url, migrated_database(url, "evalledger_bench_startup") as dsn:
        firsts, panels = [], []
        for seed in range(3):
            # Takes of their own each time: the same corpus again would be read back, with no call.
            takes = folder / f"takes-{name}-{seed}.jsonl"
            takes.write_text("".join(json.dumps({"slug": f"a/t{i}", "kind": "take", "holder": "ann", "weight": 0.5,
                                                 "since": "2026-01", "source": "notes",
                                                 "claim": f"Claim {i} of {name} run {seed}."}) + "\n"
                                     for i in range(3)))
            standin.configure(latency_s=0.0)
            env = {**os.environ, **standin.env, "PYTHONPATH": str(runner), "DATABASE_URL": dsn,
                   "EVALLEDGER_HOME": str(folder / "home")}
            started = time.monotonic()
            done = subprocess.run([sys.executable, "-c", _CLI, "run",
                                   "takes-quality", "--source", "fs", "--path", str(takes), "--seed", str(seed),
                                   "--models", ",".join(PANEL)], env=env, capture_output=True, text=True)
            first = standin.stats()["first_at"]
            if first is None:
                print(f"start-up {name:>9}: `run takes-quality` made no call (exit {done.returncode}): "
                      f"{(done.stdout + done.stderr).strip()[:900]}")
                return
            firsts.append(first - started)
            entered = [float(line.split()[-1]) for line in done.stderr.splitlines() if line.startswith("bench: run_calls")]
            panels.append(entered[0] - started)
    shutil.rmtree(folder, ignore_errors=True)
    if firsts:
        print(f"start-up {name:>9}: `run takes-quality` (3 providers) from process start to the panel's run_calls "
              f"{statistics.median(panels):.2f} s, to its first request {statistics.median(firsts):.2f} s "
              f"(medians of 3: {', '.join(f'{f:.2f}' for f in firsts)}; load {load()})")


if __name__ == "__main__":
    main()
