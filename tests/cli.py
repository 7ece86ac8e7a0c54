"""The command line as tests drive it: in-process through click's test runner, or, where the
process itself is the point (a closed pipe, a kill, the console script), as a real process."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner

SCRIPT = Path(sys.executable).with_name("evalledger")

# Commands that find no EVALLEDGER_HOME in a test's env get this one, never the user's
# ~/.evalledger (receipts, spools and an embedded server would land there).
DEFAULT_HOME = Path(tempfile.gettempdir()) / f"evalledger-test-home-{os.getpid()}"


@dataclass
class Result:
    """Exit code and both streams of one CLI run."""

    code: int
    out: str
    err: str


def _environment(env: dict | None) -> dict:
    return {"EVALLEDGER_HOME": str(DEFAULT_HOME), **(env or {})}


def run_cli(*args: str, env: dict | None = None, input: str | None = None) -> Result:
    """`evalledger ARGS` in this process, with env added to the current environment.

    What a process would start with is reset around each call, so no call sees another's state.
    An exception that escapes the CLI's error edge is a crash: its traceback is in err, exit 1,
    as the console script would print it.
    """
    from evalledger.cli import cli

    _reset_process_state()
    try:
        result = _runner().invoke(cli, list(args), env=_environment(env), input=input, catch_exceptions=True,
                                  prog_name="evalledger")
    finally:
        _reset_process_state()
    err = result.stderr
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        err += "".join(traceback.format_exception(result.exception))
    return Result(result.exit_code, result.stdout, err)


def _runner() -> CliRunner:
    """A runner that keeps stderr apart from stdout (click 8.2 always does; 8.1 must be asked)."""
    try:
        return CliRunner(mix_stderr=False)
    except TypeError:
        return CliRunner()


def _reset_process_state() -> None:
    """Module-level state one CLI call may leave behind for the next."""
    from evalledger import capture
    from evalledger.core import db

    db.use_database_url(None)
    db.use_read_url(None)
    capture.close(0)


def run_script(*args: str, env: dict | None = None, input: str | None = None, timeout: int = 120) -> Result:
    """`evalledger ARGS` as a real process of the console script, env added to the current environment."""
    merged = {**os.environ, **_environment(env)}
    done = subprocess.run([str(SCRIPT), *args], env=merged, input=input, capture_output=True, text=True,
                          timeout=timeout)
    return Result(done.returncode, done.stdout, done.stderr)


def recorded_demo_file(tmp_path, env):
    """The demo's recorded-run file (`brain-eval record`'s example) in tmp_path, its catalog loaded and
    its brain version registered first through the CLI (a run names a loaded catalog, and its prompt
    must be one its brain registered, with the levers its answers keep to)."""
    from evalledger.suites.brain_eval.catalog import demo_catalog_path
    from evalledger.suites.brain_eval.demo import DEMO_BRAIN, fixture_path, prompt_path

    loaded = run_cli("catalog", "load", str(demo_catalog_path()), env=env)
    assert loaded.code == 0, loaded.err
    levers = [arg for lever in DEMO_BRAIN["levers"] for arg in ("--lever", lever)]
    added = run_cli("brain", "add", "AGT-902", "--model", DEMO_BRAIN["model"], "--prompt-file", str(prompt_path()),
                    "--label", DEMO_BRAIN["version_label"], *levers, env=env)
    assert added.code == 0, added.err
    path = tmp_path / "run.json"
    path.write_text(fixture_path().read_text())
    return path


# How long a test waits for a process of the console script to reach the moment the test acts at:
# a guard against a hang, never a measure of speed. Three dated sessions at once on two cores (CI's
# `make test-dates`) once kept a runner from its first batch submission for over a minute.
REACH_S = 300


def start_script(*args: str, env: dict | None = None, text: bool = False) -> subprocess.Popen:
    """`evalledger ARGS` started as a real process, both streams piped; its stack is printed on SIGABRT."""
    merged = {name: value for name, value in {**os.environ, **_environment(env), "PYTHONFAULTHANDLER": "1"}.items()
              if value is not None}  # None unsets, as in run_cli
    return subprocess.Popen([str(SCRIPT), *args], env=merged, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=text)


def wait_until(proc: subprocess.Popen, until, what: str, timeout: float = REACH_S) -> None:
    """Poll until() while proc runs. A process that ended first, or one that never got there, fails the
    test with what it printed; the one that never got there is first made to print every thread's stack
    (SIGABRT under PYTHONFAULTHANDLER, as start_script runs it), so the failure says where it waited."""
    deadline = time.monotonic() + timeout
    while not until():
        if proc.poll() is not None:
            out, err = proc.communicate()
            pytest.fail(f"the process ended (exit {proc.returncode}) before it {what}:\n{_said(out, err)}")
        if time.monotonic() >= deadline:
            proc.send_signal(signal.SIGABRT)
            out, err = proc.communicate()
            pytest.fail(f"the process never {what} in {timeout:g} s; what it printed, its stack last:\n"
                        f"{_said(out, err)}")
        time.sleep(0.02)


def kill_when(proc: subprocess.Popen, until, what: str, timeout: float = REACH_S) -> None:
    """SIGKILL proc once until() holds (see wait_until), and reap it; a process left running is killed."""
    try:
        wait_until(proc, until, what, timeout)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate()


def _said(out, err) -> str:
    text = "\n".join(s.decode(errors="replace") if isinstance(s, bytes) else (s or "") for s in (out, err))
    return text[-6000:]
