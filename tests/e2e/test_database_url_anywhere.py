"""--database-url is accepted after every command, including those that take no database."""

from __future__ import annotations

import pytest

from evalledger.core.embedded import EmbeddedServer
from tests.cli import run_cli

OTHER = "postgresql://someone@elsewhere.invalid:5432/ledger"


@pytest.mark.parametrize("command", ["up", "down"])
@pytest.mark.parametrize("before", [False, True])
def test_db_up_and_down_refuse_another_server_before_touching_anything(tmp_path, command, before):
    env = {"EVALLEDGER_HOME": str(tmp_path)}
    args = ("--database-url", OTHER, "db", command) if before else ("db", command, "--database-url", OTHER)
    refused = run_cli(*args, env=env)
    assert (refused.code, refused.out) == (3, "")
    assert refused.err == (f"evalledger: error: db {command} manages only the embedded server; "
                           "--database-url names another PostgreSQL: leave it out\n")
    assert not EmbeddedServer(tmp_path).base.exists()  # nothing was initialised or started


def test_db_down_accepts_the_embedded_servers_own_url(tmp_path):
    dsn = EmbeddedServer(tmp_path).dsn()
    stopped = run_cli("db", "down", "--database-url", dsn, env={"EVALLEDGER_HOME": str(tmp_path)})
    assert (stopped.code, stopped.out, stopped.err) == (0, "not running\n", "")


@pytest.mark.parametrize("json_flag", [(), ("--json",)])
def test_capture_status_accepts_it_and_reads_no_database(tmp_path, json_flag):
    # Capture's resolution reads config.json and the environment, never a DSN: the URL changes nothing.
    env = {"EVALLEDGER_HOME": str(tmp_path), "EVALLEDGER_CONTRIBUTOR_MODE": "1"}
    plain = run_cli("capture", "status", *json_flag, env=env)
    assert plain.code == 0, plain.err
    for args in (("capture", "status", *json_flag, "--database-url", OTHER),
                 ("--database-url", OTHER, "capture", "status", *json_flag)):
        given = run_cli(*args, env=env)
        assert (given.code, given.out, given.err) == (0, plain.out, "")
