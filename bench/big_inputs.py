"""Bench: memory and time of reading big input files, against an export of the same rows.

Figures, all measured in this run on the same server, each command a process of its own whose
peak resident memory (ru_maxrss, from wait4) is read when it exits:
  capture import   an NDJSON capture log of --mb megabytes (seed 001's rows), written to the ledger
  corpus load      a JSONL takes corpus of --mb megabytes, loaded into the ledger
  export           the captured rows streamed back out: the baseline, flat memory at any size
  ratio            the command's peak memory / export's peak memory (flat: close to 1)

It uses DATABASE_URL's server when set, else a throwaway embedded server in a temporary
EVALLEDGER_HOME (stopped and removed at the end); either way in a database of its own.

    .venv/bin/python bench/big_inputs.py [--mb 50] [--checkout DIR]

--checkout runs the commands of another checkout's runner/ (e.g. an export of main, to compare
before and after a change) with this venv's packages.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "runner"))

from evalledger.core import scratch  # noqa: E402

SCRIPT = Path(sys.executable).with_name("evalledger")


def capture_log(path: Path, megabytes: int) -> int:
    """Seed 001 rows (a varied query of about 300 characters) up to the size; the number of rows."""
    rows = 0
    with open(path, "w", encoding="utf-8") as out:
        while out.tell() < megabytes * 2**20:
            rows += 1
            out.write(json.dumps({
                "tool_name": "query" if rows % 3 else "search",
                "query": f"row {rows}: how did the renewal forecast for segment {rows % 97} change after the "
                         f"pricing update of week {rows % 52}? " + "context " * 25,
                "retrieved_slugs": [f"doc/{rows % 101}", f"doc/{rows % 89}"], "retrieved_chunk_ids": [rows, rows + 1],
                "source_ids": ["crm"], "expand_enabled": True if rows % 3 else None, "detail": "medium", "detail_resolved": "medium",
                "vector_enabled": True, "expansion_applied": False, "latency_ms": 120.5, "remote": True,
                "job_id": None, "subagent_id": None}) + "\n")
    return rows


def takes_corpus(path: Path, megabytes: int) -> int:
    rows = 0
    with open(path, "w", encoding="utf-8") as out:
        while out.tell() < megabytes * 2**20:
            rows += 1
            out.write(json.dumps({"slug": f"bench/{rows % 1000}/{rows}", "kind": "take", "holder": "ann",
                                  "weight": (rows % 10) / 10, "since": "2026-01", "source": "bench notes",
                                  "claim": f"take {rows}: " + "a claim about the pipeline " * 10}) + "\n")
    return rows


def measured(command: list[str], args: list[str], env: dict) -> tuple[float, float, str]:
    """(seconds, peak resident MB, last stderr line) of one CLI process."""
    started = time.perf_counter()
    proc = subprocess.Popen([*command, *args], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True)
    said: list[str] = []
    drain = threading.Thread(target=lambda: said.append(proc.stderr.read()))  # a full pipe would stall it
    drain.start()
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - started
    drain.join()
    err = said[0]
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed ({proc.returncode}): {err}")
    return seconds, usage.ru_maxrss / 1024, (err.strip().splitlines() or [""])[-1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, default=50)
    parser.add_argument("--checkout", type=Path, default=None)
    opts = parser.parse_args()
    command = [str(SCRIPT)]
    extra_env = {}
    if opts.checkout is not None:
        command = [sys.executable, "-c", "from evalledger.cli import main; main()"]
        extra_env = {"PYTHONPATH": str(opts.checkout.resolve() / "runner")}
    work = Path(tempfile.mkdtemp(prefix="evalledger-bench-inputs-"))
    try:
        log, corpus = work / "capture.ndjson", work / "takes.jsonl"
        log_rows, corpus_rows = capture_log(log, opts.mb), takes_corpus(corpus, opts.mb)
        with scratch.server() as server_url, scratch.migrated_database(server_url, "evalledger_inputs_bench") as dsn:
            env = {**os.environ, "DATABASE_URL": dsn, "EVALLEDGER_HOME": str(work / "home"), **extra_env}
            imp = measured(command, ["capture", "import", str(log)], env)
            load = measured(command, ["corpus", "load", str(corpus)], env)
            exp = measured(command, ["export"], env)
        print(f"runner: {opts.checkout or ROOT}")
        print(f"inputs: capture log {log.stat().st_size / 2**20:.0f} MB ({log_rows:,} rows), takes corpus "
              f"{corpus.stat().st_size / 2**20:.0f} MB ({corpus_rows:,} takes)")
        for name, (seconds, peak, _) in (("capture import", imp), ("corpus load", load), ("export (baseline)", exp)):
            print(f"  {name:<18} {seconds:7.1f} s   peak RSS {peak:6.0f} MB   ratio to export {peak / exp[1]:.2f}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
