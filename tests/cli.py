"""Run the real console script, as a user would, and capture what it printed."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

SCRIPT = Path(sys.executable).with_name("evalledger")


@dataclass
class Result:
    """Exit code and both streams of one CLI run."""

    code: int
    out: str
    err: str


def run_cli(*args: str, env: dict | None = None, input: str | None = None, timeout: int = 120) -> Result:
    """`evalledger ARGS` in a subprocess with env added to the current environment."""
    merged = {**os.environ, **(env or {})}
    done = subprocess.run([str(SCRIPT), *args], env=merged, input=input, capture_output=True,
                          text=True, timeout=timeout)
    return Result(done.returncode, done.stdout, done.stderr)
