"""The installed console script as a real process: its entry point, streams and exit codes."""

import pytest

from evalledger.core.migrate import read_migrations
from tests.cli import run_script


@pytest.mark.processes
def test_the_console_script_runs_a_command_and_exits_with_its_code(dsn):
    status = run_script("db", "status", env={"DATABASE_URL": dsn})
    assert (status.code, status.err) == (0, "")
    assert status.out == "".join(f"applied  {m.id}\n" for m in read_migrations())
    bogus = run_script("db", "status", "--bogus", env={"DATABASE_URL": dsn})
    assert (bogus.code, bogus.out, bogus.err) == (3, "", "evalledger: error: db status: No such option '--bogus'.\n")
