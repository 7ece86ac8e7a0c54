"""Dumps and loads between servers and major versions, with real clusters on this machine.

A dump of the primary (tests/clusters.py: the demo's ledger and a cold run) loads into a fresh
embedded cluster and into CI's second PostgreSQL where there is one, and every role's SELECT of
every table and view is what it was; a dump of a ledger fresh from the migrations, loaded the same
way, passes the insider, append-only and journal modules whole; `ledger verify` holds a loaded dump
and catches a superuser's rewrite there; a load that would not be the dump rolls back.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

import psycopg
import pytest

from tests.cli import run_cli
from tests.clusters import assert_the_same_ledger, cluster, dashboards, every_role_sees, ok
from tests.conftest import REVIEWER_ROLE
from tests.ledger_forge import rewrite
from tests.provisioning import MEMORY, MEMORY_NEEDED, SERVER_HOME_PREFIX

# On one worker (make test distributes by --dist loadgroup), which makes a primary of its own: the
# module shares nothing with tests/e2e/test_backup.py but the way a primary is built, and its guard
# runs, which take minutes, start while the backup tests run on the other worker.
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("dump_clusters")]

ROOT = Path(__file__).resolve().parents[2]
# The modules that try every guard as every role, and every tampering the journal must make evident:
# run whole against a loaded dump.
GUARD_TESTS = [f"tests/db/{name}.py" for name in (
    "test_owner_role_powerless", "test_windows_on_the_database_clock", "test_isolation_checked",
    "test_reveal_committed_before_drafts", "test_policy_follows_the_prompt", "test_automatic_scores",
    "test_finite_numbers_and_admitted_rubrics", "test_no_login_stalls_the_ledger", "test_refusals_reveal_nothing",
    "test_holds_catalogs_and_ageing", "test_append_only", "test_journal")]


def dump_of(primary, name: str, dbname: str = "evalledger") -> Path:
    dumped = primary.parent / name
    if not dumped.exists():
        ok(run_cli("db", "dump", str(dumped), "--database-url", primary.url(dbname), env=primary.env))
    return dumped


@pytest.fixture(scope="module")
def bare_dump(primary):
    """A dump of a ledger fresh from the migrations (the guard tests build their own rows)."""
    from evalledger.core.migrate import migrate

    with psycopg.connect(primary.url("postgres"), autocommit=True) as conn:
        conn.execute("CREATE DATABASE bare")
    migrate(primary.url("bare"))
    return dump_of(primary, "bare.dump", "bare")


@pytest.fixture(scope="module")
def loaded(primary, bare_dump):
    """A fresh embedded cluster: the primary's ledger loaded into evalledger, the bare one into bare."""
    with contextlib.ExitStack() as after_the_server, cluster(primary.parent, "loaded") as made:
        made.out = ok(run_cli("db", "load", str(dump_of(primary, "ledger.dump")), env=made.env)).out
        with psycopg.connect(made.url("postgres"), autocommit=True) as conn:
            conn.execute("CREATE DATABASE bare")
        ok(run_cli("db", "load", str(bare_dump), "--database-url", made.url("bare"), env=made.env))
        made.guards = GuardTests(made.url("postgres"), "bare", after_the_server)
        try:
            yield made
        finally:
            made.guards.stop()


@pytest.fixture(scope="module", autouse=True)
def guards_under_way(loaded, system_leg):
    """Both guard runs start before the module's first test, and the tests that wait for them come
    last: each run takes minutes of its server's time, which the other tests overlap."""


def test_a_dump_loads_into_a_fresh_server_with_every_role_seeing_what_it_saw(primary, loaded):
    dumped = dump_of(primary, "ledger.dump")
    assert oct(dumped.stat().st_mode & 0o777) == "0o600"
    shown = loaded.out.splitlines()
    assert shown[0].startswith(f"loaded {dumped} into postgres@{loaded.server.socket_dir}:5432/evalledger: ")
    assert shown[1].startswith("roles created: ") and REVIEWER_ROLE in shown[1]
    before = every_role_sees(primary.url())
    assert_the_same_ledger(loaded.url(), loaded.env, before, dashboards(primary.env))
    # Loaded twice: refused, and the first load is untouched.
    twice = run_cli("db", "load", str(dumped), env=loaded.env)
    assert twice.code == 3 and "is not empty (schema evalledger, schema evalledger_guard, " in twice.err
    assert every_role_sees(loaded.url()) == before


def rewrap(dumped: Path, into: Path, manifest=None, archive=None) -> Path:
    """A copy of the dump at dumped with its manifest or archive replaced."""
    with tarfile.open(dumped) as tar:
        parts = {"manifest.json": manifest if manifest is not None else json.load(tar.extractfile("manifest.json")),
                 "ledger.pgdump": archive if archive is not None else tar.extractfile("ledger.pgdump").read()}
    with tarfile.open(into, "w") as tar:
        for name, part in parts.items():
            data = json.dumps(part).encode() if name == "manifest.json" else part
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return into


def test_a_load_that_would_not_be_the_dump_rolls_back_whole(primary, loaded, tmp_path):
    with tarfile.open(dump_of(primary, "ledger.dump")) as tar:
        manifest = json.load(tar.extractfile("manifest.json"))
    # One more grant than the dump makes (as if pg_restore had left one out), and one more role.
    manifest["fingerprint"].append(["table", "evalledger.target", "grant SELECT to evalledger_agent"])
    manifest["roles"].append({"name": "evalledger_test_rolled_back", "login": True, "inherit": True,
                              "connection_limit": -1, "valid_until": None})
    bent = rewrap(dump_of(primary, "ledger.dump"), tmp_path / "bent.dump", manifest=manifest)
    with psycopg.connect(loaded.url("postgres"), autocommit=True) as conn:
        conn.execute("CREATE DATABASE empty")
    target = loaded.url("empty")
    refused = run_cli("db", "load", str(bent), "--database-url", target, env=loaded.env)
    assert refused.code == 3
    assert refused.err.startswith("evalledger: error: the load was rolled back, nothing was written: evalledger: "
                                  "the loaded ledger is not the one dumped: missing table evalledger.target "
                                  "(grant SELECT to evalledger_agent)")
    with psycopg.connect(target, autocommit=True) as conn:
        assert conn.execute("SELECT to_regnamespace('evalledger')").fetchone()[0] is None
        assert conn.execute("SELECT count(*) FROM pg_roles WHERE rolname = 'evalledger_test_rolled_back'").fetchone()[0] == 0
    # One whose archive is not what its manifest recorded is refused before anything runs.
    damaged = rewrap(dump_of(primary, "ledger.dump"), tmp_path / "damaged.dump", archive=b"not pg_dump's")
    assert run_cli("db", "load", str(damaged), "--database-url", target, env=loaded.env).err == (
        f"evalledger: error: {damaged}: ledger.pgdump does not match the checksum its manifest recorded: the file "
        "is damaged or was changed\n")


class GuardTests:
    """The insider, append-only and journal modules, whole, in a pytest of their own on clones of template (a
    loaded dump) of server_url, running in the background from the moment it is made (the two
    servers' runs overlap, each waiting mostly on its own server)."""

    def __init__(self, server_url: str, template: str, after_the_server: contextlib.ExitStack):
        """after_the_server unwinds once the server has stopped: it removes the template's folder."""
        memory = template_in_memory(server_url, template)
        if memory is not None:
            after_the_server.callback(shutil.rmtree, memory, ignore_errors=True)
        env = {**os.environ, "DATABASE_URL": server_url, "EVALLEDGER_TEST_TEMPLATE": template}
        env.pop("DATABASE_READ_URL", None)
        self.output = tempfile.TemporaryFile(mode="w+")
        self.process = subprocess.Popen([sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider",
                                         *GUARD_TESTS], cwd=ROOT, env=env, stdout=self.output, stderr=subprocess.STDOUT,
                                        text=True)

    def passed(self) -> None:
        code = self.process.wait(timeout=900)
        self.output.seek(0)
        printed = self.output.read()
        assert code == 0, printed[-6000:]
        assert " passed" in printed.strip().splitlines()[-1]

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        self.output.close()


def template_in_memory(server_url: str, template: str) -> Path | None:
    """Move template (the loaded bare ledger) into a tablespace on tmpfs, where the guard run's clones
    of it then land too, as tests/provisioning.py does for the session's own server: a clone on ext4
    costs tens of times more kernel time once hundreds were dropped, and each run makes hundreds.
    Where a database's files live is nothing the guards or the dump decide. The folder, or None where
    the machine has no tmpfs to spare."""
    if not (MEMORY.is_dir() and os.access(MEMORY, os.W_OK)):
        return None
    free = os.statvfs(MEMORY)
    if free.f_bavail * free.f_frsize < MEMORY_NEEDED:
        return None
    with psycopg.connect(server_url, autocommit=True) as conn:
        data = Path(conn.execute("SELECT current_setting('data_directory')").fetchone()[0])
        # Named as the session's server's folder is, so a later session reaps it if this one dies.
        folder = Path(tempfile.mkdtemp(prefix=f"{SERVER_HOME_PREFIX}{os.getpid()}-", dir=MEMORY))
        owner = data.stat()
        os.chown(folder, owner.st_uid, owner.st_gid)
        name = "evalledger_test_guards_" + folder.name.rsplit("-", 1)[-1].lower()
        conn.execute(psycopg.sql.SQL("CREATE TABLESPACE {} LOCATION {}").format(psycopg.sql.Identifier(name),
                                                                                psycopg.sql.Literal(str(folder))))
        conn.execute(psycopg.sql.SQL("ALTER DATABASE {} SET TABLESPACE {}").format(psycopg.sql.Identifier(template),
                                                                                   psycopg.sql.Identifier(name)))
    return folder


@pytest.fixture(scope="module")
def system_leg(primary, bare_dump):
    """CI's second PostgreSQL (None where there is none): the primary's ledger loaded into its database
    ledger, the bare one into bare, and the guard tests already running on bare."""
    if system_postgresql() is None:
        yield None
        return
    with contextlib.ExitStack() as after_the_server, system_server() as server_url:
        with psycopg.connect(server_url, autocommit=True) as conn:
            conn.execute("CREATE DATABASE ledger")
            conn.execute("CREATE DATABASE bare")
        home = primary.parent / "system-home"
        env = {"DATABASE_URL": psycopg.conninfo.make_conninfo(server_url, dbname="ledger"), "EVALLEDGER_HOME": str(home)}
        loaded_out = ok(run_cli("db", "load", str(dump_of(primary, "ledger.dump")), env=env)).out
        ok(run_cli("db", "load", str(bare_dump), "--database-url", psycopg.conninfo.make_conninfo(server_url, dbname="bare"),
                   env=env))
        guards = GuardTests(server_url, "bare", after_the_server)
        try:
            yield {"url": server_url, "env": env, "out": loaded_out, "guards": guards}
        finally:
            guards.stop()


def test_a_user_that_is_not_a_superuser_loads_as_on_a_managed_server(primary, bare_dump):
    with cluster(primary.parent, "managed") as server:
        with psycopg.connect(server.url("postgres"), autocommit=True) as conn:
            conn.execute("CREATE ROLE evalledger_test_manager LOGIN CREATEROLE PASSWORD 'manager-password'")
            conn.execute("CREATE DATABASE managed OWNER evalledger_test_manager")
        target = psycopg.conninfo.make_conninfo(server.url("managed"), user="evalledger_test_manager",
                                                password="manager-password")
        out = ok(run_cli("db", "load", str(bare_dump), "--database-url", target, env=server.env)).out
        assert ("note: not a superuser: the guard event triggers cannot be installed here (as on a managed server); "
                "`evalledger doctor` says what that leaves open\n") in out
        doctor = run_cli("doctor", "--database-url", target, env=server.env).out
        # What `db migrate` as this user would leave: the installer in the code role, no event triggers.
        assert "ok    guard triggers: " in doctor and "ok    roles: " in doctor
        assert "warn  code: logins that may act as evalledger_code and so lift every guard: evalledger_test_manager" in doctor
        assert "warn  event triggers: absent: the user who migrated was not a superuser" in doctor
        with psycopg.connect(target) as conn:
            assert conn.execute("SELECT pg_get_userbyid(nspowner) FROM pg_namespace WHERE nspname = 'evalledger'"
                                ).fetchone()[0] == "evalledger_code"
            assert not conn.execute("SELECT rolsuper FROM pg_roles WHERE rolname = current_user").fetchone()[0]


def system_postgresql() -> Path | None:
    """The distribution's newest PostgreSQL bin/ (CI's second version), as .ci/run finds it."""
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin"), key=lambda p: int(p.parent.name)
                   if p.parent.name.isdigit() else 0)
    if not found or not (found[-1] / "pg_ctl").exists():
        return None
    try:
        import pwd

        pwd.getpwnam("postgres")
    except KeyError:
        return None
    return found[-1] if os.geteuid() == 0 else None


@contextlib.contextmanager
def system_server():
    """CI's second PostgreSQL, started as the postgres user on a socket in a scratch folder."""
    bin_dir = system_postgresql()
    scratch = Path(tempfile.mkdtemp(prefix="evalledger-pg-"))
    shutil.chown(scratch, "postgres")

    def as_postgres(*command):
        subprocess.run(["su", "postgres", "-s", "/bin/sh", "-c", " ".join(command)], check=True,
                       capture_output=True, timeout=120)

    try:
        as_postgres(f"{bin_dir}/initdb", "-D", f"{scratch}/data", "-U", "postgres", "--auth=trust")
        as_postgres(f"{bin_dir}/pg_ctl", "-D", f"{scratch}/data", "-l", f"{scratch}/log", "-w", "-o",
                    f"\"-c listen_addresses='' -c unix_socket_directories={scratch} -c fsync=off "
                    "-c synchronous_commit=off -c full_page_writes=off\"", "start")
        yield f"postgresql://postgres@/postgres?host={scratch}"
    finally:
        with contextlib.suppress(Exception):
            as_postgres(f"{bin_dir}/pg_ctl", "-D", f"{scratch}/data", "-m", "immediate", "stop")
        shutil.rmtree(scratch, ignore_errors=True)


def test_a_loaded_dump_refuses_every_insider_as_the_migrations_did(loaded):
    loaded.guards.passed()  # the system server's run, if any, is under way too


@pytest.mark.skipif(system_postgresql() is None, reason="no distribution PostgreSQL and postgres user (CI's second "
                                                        "version), or not root")
def test_a_dump_of_18_loads_into_the_older_system_postgresql_and_refuses_every_insider(primary, system_leg):
    with psycopg.connect(system_leg["url"], autocommit=True) as conn:
        major = conn.execute("SELECT current_setting('server_version_num')::int / 10000").fetchone()[0]
    assert f"note: a PostgreSQL 18 dump loaded into {major}" in system_leg["out"]
    assert_the_same_ledger(system_leg["env"]["DATABASE_URL"], system_leg["env"], every_role_sees(primary.url()),
                           dashboards(primary.env))
    system_leg["guards"].passed()


# Last: its digest seals the primary's journal, which the loaded copies above are compared with.
def test_ledger_verify_holds_a_loaded_dump_and_catches_a_superusers_rewrite_there(primary, loaded, tmp_path):
    """The dump carries the journal, its blocks and the ledger's identity: the loaded copy verifies
    against a digest the primary gave before the dump, and a row a superuser rewrites on the copy
    with its triggers lifted is named, exit 1, as on the primary."""
    digest = tmp_path / "digest.json"
    ok(run_cli("ledger", "digest", "--out", str(digest), env=primary.env))
    dumped = tmp_path / "after-digest.dump"
    ok(run_cli("db", "dump", str(dumped), env=primary.env))
    with psycopg.connect(loaded.url("postgres"), autocommit=True) as conn:
        conn.execute("CREATE DATABASE verified")
    copy = loaded.url("verified")
    ok(run_cli("db", "load", str(dumped), "--database-url", copy, env=loaded.env))
    held = ok(run_cli("ledger", "verify", "--digest", str(digest), "--recompute", "--database-url", copy, env=loaded.env))
    assert held.out.startswith("verified: ") and ", 1 digest, every decision recomputed; " in held.out, held.out

    with psycopg.connect(copy, autocommit=True) as superuser:
        rewrite(superuser, "target", "display_name = 'rewritten on the loaded copy'", "target_id = 'AGT-901'")
        assert superuser.execute("SELECT * FROM evalledger.journal_coverage_v2()").fetchall() == []  # triggers back
    caught = run_cli("ledger", "verify", "--digest", str(digest), "--database-url", copy, env=loaded.env)
    assert caught.code == 1, caught.out + caught.err
    lines = caught.out.splitlines()
    assert lines[0].startswith('row_changed: target {"target_id":"AGT-901"}: display_name differs from journal entry ')
    assert lines[1].startswith("tampering: 1 finding (") and len(lines) == 2
