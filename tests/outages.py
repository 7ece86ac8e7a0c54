"""What an operator's machine does when it fails, as tests bring it about: a server that is not
there, a tiny or read-only disk, a process killed at a moment of the test's choosing."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest


def unreachable(tmp_path: Path) -> str:
    """A server that is not there: the connection fails at once, as when the database is down."""
    return f"postgresql://nobody@/nodb?host={tmp_path / 'no-server'}"


def wait_until(condition: Callable[[], object], seconds: float = 30.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


@pytest.fixture
def mounted(tmp_path):
    """mount(DIR, options): a tmpfs at DIR, unmounted after the test; root only."""
    if os.geteuid() != 0:
        pytest.skip("mounting a tiny or read-only tmpfs needs root (CI runs as root)")
    done = []

    def mount(where: Path, options: str) -> Path:
        where.mkdir(parents=True, exist_ok=True)
        subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(where)], check=True)
        done.append(where)
        return where

    yield mount
    for where in reversed(done):
        subprocess.run(["umount", "-l", str(where)], check=False)


def killed_when(argv: list[str], env: dict, when: Callable[[], object], seconds: float = 180.0,
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) -> bool:
    """Start argv as a process of its own (env added to this one's) and SIGKILL it as soon as
    when() is true (asked every 20 ms). True when it was killed; False when it ended first.
    Fails when neither happened within `seconds`."""
    process = subprocess.Popen(argv, env={**os.environ, **env}, stdout=stdout, stderr=stderr)
    try:
        deadline = time.monotonic() + seconds
        while not when():
            if process.poll() is not None:
                return False
            assert time.monotonic() < deadline, f"{argv[:3]} neither ended nor reached the kill in {seconds}s"
            time.sleep(0.02)
        process.send_signal(signal.SIGKILL)
        return process.wait(timeout=30) == -signal.SIGKILL
    finally:
        if process.poll() is None:
            process.kill()
        process.wait(timeout=30)
