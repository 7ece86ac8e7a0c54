"""The embedded server: `db up` / `db down`, and nothing around it loosened.

Each test builds a cluster of its own (slow); `db up` and `db down` run as real processes, as the
server they start must outlive the command that started it.
"""

import os
import shutil
import stat

import psycopg
import pytest

from evalledger.core.embedded import EmbeddedServer, _wheel_install
from tests.cli import run_cli, run_script

pytestmark = pytest.mark.slow


def modes(path):
    return {p: stat.S_IMODE(p.stat().st_mode) for p in [path, *path.parents]}


@pytest.fixture
def private_home(tmp_path):
    parent = tmp_path / "private"
    parent.mkdir()
    os.chmod(parent, 0o700)
    home = parent / "home"
    yield home
    server = EmbeddedServer(home)
    server.stop()
    if server.as_root:
        shutil.rmtree(server.base, ignore_errors=True)


def test_up_serves_down_stops_and_no_folder_above_changes_mode(private_home):
    env = {"EVALLEDGER_HOME": str(private_home), "DATABASE_URL": ""}
    server = EmbeddedServer(private_home)
    above_home = modes(private_home.parent)
    above_binaries = modes(_wheel_install())

    up = run_script("db", "up", env=env)
    assert up.code == 0, up.err
    dsn = up.out.strip()
    with psycopg.connect(dsn) as conn:
        assert conn.execute("SELECT current_database()").fetchone()[0] == "evalledger"
        assert int(conn.execute("SHOW server_version_num").fetchone()[0]) >= 140000
        assert conn.execute("SHOW listen_addresses").fetchone()[0] == ""

    assert modes(private_home.parent) == above_home
    assert modes(_wheel_install()) == above_binaries
    for private in (server.base, server.pgdata, server.socket_dir):
        assert stat.S_IMODE(private.stat().st_mode) == 0o700, private
    if server.as_root:
        assert server.base.owner() == "evalledger-pg"
        assert stat.S_IMODE(server.base.parent.stat().st_mode) == 0o755

    assert run_script("db", "up", env=env).out.strip() == dsn  # already running: same server
    assert run_script("db", "down", env=env).out == "stopped\n"
    assert run_script("db", "down", env=env).out == "not running\n"
    assert modes(private_home.parent) == above_home


def test_commands_start_the_server_on_demand(private_home):
    result = run_cli("db", "migrate", env={"EVALLEDGER_HOME": str(private_home), "DATABASE_URL": ""})
    assert result.code == 0, result.err
    assert result.out.startswith("applied 0001.baseline\n")
    assert EmbeddedServer(private_home).is_running()


@pytest.mark.skipif(os.geteuid() != 0, reason="only root's server runs from a copy of the binaries")
def test_root_runs_a_copy_when_the_binaries_are_out_of_reach(private_home, monkeypatch):
    import evalledger.core.embedded as embedded

    # As when the project's .venv sits under a home directory of mode 700.
    monkeypatch.setattr(embedded, "_traversable_by_others", lambda path: False)
    server = EmbeddedServer(private_home)
    above_binaries = modes(_wheel_install())
    with psycopg.connect(server.start()) as conn:
        assert conn.execute("SELECT 1").fetchone() == (1,)
    assert server.bin_dir().is_relative_to(embedded.ROOT_PARENT)
    assert modes(_wheel_install()) == above_binaries
