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


@pytest.mark.skipif(os.geteuid() != 0, reason="only root's cluster lives outside its home, and outlives it")
def test_a_home_made_again_is_not_served_the_ledger_its_deleted_namesake_left(private_home):
    """As root the cluster lives in /var/lib/evalledger/<id of the home's path>: a home deleted and
    made again at the same path found the old cluster and served its ledger as if it were the new
    home's. Now the cluster and the home share an id: a command in the new home is refused (exit 3,
    nothing deleted), `db up --adopt` serves it the old ledger, and `db reset --yes` deletes it."""
    from evalledger.core.embedded import IDENTITY

    env = {"EVALLEDGER_HOME": str(private_home), "DATABASE_URL": ""}
    server = EmbeddedServer(private_home)
    assert run_cli("db", "migrate", env=env).code == 0
    identity = (server.base / IDENTITY).read_text()
    assert (private_home / IDENTITY).read_text() == identity and len(identity.strip()) == 32
    assert run_script("db", "down", env=env).out == "stopped\n"
    shutil.rmtree(private_home)

    refused = run_cli("db", "status", env=env)
    assert (refused.code, refused.out) == (3, "")
    assert refused.err == (f"evalledger: error: {server.base} holds the embedded cluster, and ledger, of an earlier "
                           f"EVALLEDGER_HOME at {private_home}, not of this one (made again since, or copied): "
                           "`evalledger db up --adopt` serves it to this home, `evalledger db reset --yes` deletes it\n")
    assert not server.is_running() and (server.pgdata / "PG_VERSION").exists()
    assert not (private_home / IDENTITY).exists()

    adopted = run_script("db", "up", "--adopt", env=env)
    assert adopted.code == 0, adopted.err
    assert (private_home / IDENTITY).read_text() == identity
    status = run_cli("db", "status", env=env)  # the old ledger, migrated, served without --adopt now
    assert status.code == 0, status.err
    assert "pending" not in status.out and "0001.baseline" in status.out

    assert run_script("db", "down", env=env).code == 0
    shutil.rmtree(private_home)
    assert run_cli("db", "reset", "--yes", env=env).code == 0
    fresh = run_cli("db", "status", env=env)  # a cluster of its own, nothing applied
    assert fresh.code == 0, fresh.err
    assert (private_home / IDENTITY).read_text() == (server.base / IDENTITY).read_text() != identity


@pytest.mark.skipif(os.geteuid() != 0, reason="only root's cluster lives outside its home")
def test_a_cluster_from_before_ids_is_its_homes(private_home):
    """A cluster made before clusters had ids (or restored, or replicated) has none: it is the home's,
    as before, and gets the home's id."""
    from evalledger.core.embedded import IDENTITY

    server = EmbeddedServer(private_home)
    server.start()
    server.stop()
    (server.base / IDENTITY).unlink()
    (private_home / IDENTITY).unlink()
    with psycopg.connect(server.start()) as conn:
        assert conn.execute("SELECT 1").fetchone() == (1,)
    assert (server.base / IDENTITY).read_text() == (private_home / IDENTITY).read_text()


@pytest.mark.skipif(os.geteuid() != 0, reason="only root's cluster lives outside its home")
def test_two_commands_racing_in_a_new_home_tie_one_cluster_to_it(private_home):
    """Two commands starting the server of a new home at once: each compares and writes the ids under
    the home's lock, so one makes the cluster and its id and the other is served that cluster."""
    import subprocess

    from evalledger.core.embedded import IDENTITY
    from tests.cli import SCRIPT

    env = {**os.environ, "EVALLEDGER_HOME": str(private_home), "DATABASE_URL": ""}
    racing = [subprocess.Popen([str(SCRIPT), "db", "up"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True) for _ in range(2)]
    done = [(p.wait(timeout=120), *p.communicate()) for p in racing]
    assert [code for code, _, _ in done] == [0, 0], done
    assert done[0][1] == done[1][1]  # the same DSN
    server = EmbeddedServer(private_home)
    assert (private_home / IDENTITY).read_text() == (server.base / IDENTITY).read_text()
