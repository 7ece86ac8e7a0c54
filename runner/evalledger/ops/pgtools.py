"""The wheel's client programs (pg_dump, pg_restore, psql, pg_basebackup, ...), run as the invoking
user, with a connection's password passed in the environment, never on the command line."""

from __future__ import annotations

import os
import subprocess

import psycopg

from evalledger.core.embedded import wheel_bin
from evalledger.core.errors import EvalledgerError


def libpq_args(url: str) -> tuple[str, dict]:
    """url without its password, and the environment that gives the password to a libpq program."""
    info = psycopg.conninfo.conninfo_to_dict(url)
    env = dict(os.environ)
    password = info.pop("password", None)
    if password is not None:
        env["PGPASSWORD"] = str(password)
    return psycopg.conninfo.make_conninfo(**info), env


def last_line(text: str) -> str:
    """The last non-blank line of a program's output (where PostgreSQL's tools say what failed)."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else "no output"


def run(program: str, *args: str, env: dict | None = None, what: str = "") -> str:
    """Run a wheel client program; its stdout, or an EvalledgerError naming what failed and why."""
    result = subprocess.run([str(wheel_bin(program)), *args], env=env, stdin=subprocess.DEVNULL,
                            capture_output=True, text=True)
    if result.returncode != 0:
        raise EvalledgerError(f"{what or program} failed: {last_line(result.stderr) if result.stderr.strip() else f'exit {result.returncode}'}")
    return result.stdout
