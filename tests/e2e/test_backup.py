"""Backups, restores, point-in-time recovery and a standby, with real clusters on this machine.

One primary (tests/clusters.py: an embedded cluster of its own, over its Unix socket) holds the
demo's ledger and a run 25 months old (cold: RevOps no longer sees it). Each test makes the other
clusters it needs, restored or replicated from it, through the commands a user runs, and removes
them. What a role sees is compared whole: every role's SELECT of every table and view of the ledger.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tarfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import psycopg
import pytest
from psycopg import sql

from evalledger.core.embedded import EmbeddedServer
from tests.cli import run_cli
from tests.conftest import TEST_PASSWORD, ensure_login_role
from tests.clusters import Cluster, assert_the_same_ledger, cluster, dashboards, every_role_sees, ok

# On one worker (make test distributes by --dist loadgroup), which makes a primary of its own
# (tests/e2e/test_dump.py, in a group of its own, makes its own on its worker).
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("backup_clusters")]
EVALLEDGER = Path(sys.executable).with_name("evalledger")
READERS = {"evalledger_test_standby_auditor": "evalledger_auditor", "evalledger_test_standby_revops": "evalledger_revops"}


def test_a_backup_restores_elsewhere_and_every_role_sees_what_it_saw(primary, tmp_path):
    before = every_role_sees(primary.url())
    shown = dashboards(primary.env)
    backup = tmp_path / "backup"
    made = ok(run_cli("db", "backup", str(backup), env=primary.env))
    assert made.out.startswith(f"backed up postgres@{primary.server.socket_dir}:5432/evalledger into {backup}: ")
    assert "verified against its SHA-256 manifest" in made.out

    with cluster(primary.parent, "restored", start=False) as restored:
        done = ok(run_cli("db", "restore", str(backup), env=restored.env))
        assert done.out.splitlines()[0] == f"restored {backup} into the embedded server of {restored.home}"
        # Roles are the cluster's, and came along.
        assert_the_same_ledger(restored.url(), restored.env, before, shown)

        # A live cluster is replaced only with --yes, and kept beside the new one.
        again = run_cli("db", "restore", str(backup), env=restored.env)
        assert again.code == 3 and "holds a cluster (running): add --yes to replace it" in again.err
        replaced = ok(run_cli("db", "restore", str(backup), "--yes", env=restored.env))
        kept = Path(replaced.out.splitlines()[1].removeprefix("the cluster it replaced is kept at "))
        assert kept.parent == restored.server.base and (kept / "PG_VERSION").is_file()
        assert every_role_sees(restored.url()) == before


@pytest.mark.skipif(os.geteuid() != 0, reason="only root's cluster lives outside its home, and outlives it")
def test_a_restore_into_a_home_made_again_makes_the_restored_cluster_the_homes(primary, tmp_path):
    """A home made again at the path of a deleted one is refused the cluster the deleted one left
    (tests/e2e/test_embedded.py); `db restore --yes` replaces that cluster, keeping it aside as ever,
    and the restored one is the new home's."""
    from evalledger.core.embedded import IDENTITY

    backup = tmp_path / "backup"
    ok(run_cli("db", "backup", str(backup), env=primary.env))
    with cluster(primary.parent, "made-again") as again:
        left = (again.server.base / IDENTITY).read_text()
        again.server.stop()
        shutil.rmtree(again.home)
        refused = run_cli("db", "status", env=again.env)
        assert refused.code == 3 and "`evalledger db up --adopt` serves it to this home" in refused.err
        without_yes = run_cli("db", "restore", str(backup), env=again.env)
        assert without_yes.code == 3 and "holds a cluster (stopped): add --yes to replace it" in without_yes.err
        done = ok(run_cli("db", "restore", str(backup), "--yes", env=again.env))
        assert done.out.splitlines()[1].startswith(f"the cluster it replaced is kept at {again.server.base}/")
        assert (again.home / IDENTITY).read_text() == (again.server.base / IDENTITY).read_text() == left
        ok(run_cli("db", "status", env=again.env))


def test_a_backup_makes_the_folders_it_goes_into_and_a_failed_one_leaves_none(primary, tmp_path):
    # docs/backup.md's dated folder, in a folder of backups not made yet.
    dated = tmp_path / "backups" / "2026-06-30"
    made = ok(run_cli("db", "backup", str(dated), env=primary.env))
    assert made.out.startswith(f"backed up postgres@{primary.server.socket_dir}:5432/evalledger into {dated}: ")
    assert (dated / "backup_manifest").is_file() and (dated / "evalledger-backup.json").is_file()

    # A login that may not stream (no REPLICATION, no replication line): the backup fails, and of
    # the folders made for it none is left; an empty folder it was given stays, and stays empty.
    login = "evalledger_test_backup_reader"
    empty = tmp_path / "empty"
    empty.mkdir()
    with psycopg.connect(primary.url(), autocommit=True) as admin:
        ensure_login_role(admin, login, "evalledger_auditor")
    try:
        reader = psycopg.conninfo.make_conninfo(primary.url(), user=login, password=TEST_PASSWORD)
        failed = run_cli("db", "backup", str(tmp_path / "elsewhere" / "2026-07-01"), "--database-url", reader,
                         env=primary.env)
        into_empty = run_cli("db", "backup", str(empty), "--database-url", reader, env=primary.env)
    finally:
        with psycopg.connect(primary.url(), autocommit=True) as admin:
            admin.execute(sql.SQL("DROP ROLE {}").format(sql.Identifier(login)))
    assert failed.code == 3 and failed.err.count("\n") == 1 and "REPLICATION" in failed.err, failed.err
    assert not (tmp_path / "elsewhere").exists()
    assert into_empty.code == 3 and empty.is_dir() and not any(empty.iterdir()), into_empty.err
    # A folder that holds anything is refused.
    taken = run_cli("db", "backup", str(dated), env=primary.env)
    assert taken.code == 3 and taken.err == f"evalledger: error: {dated}: not empty; a backup goes into a new folder\n"


def test_a_restore_that_failed_leaves_nothing_a_later_one_trips_on(primary, tmp_path):
    """docs/backup.md as a reader may first run it: the restore of a backup not made yet fails, the
    doctor after it meets the empty cluster any command makes in a fresh home, and once the backup
    is there, the restore goes through without --yes: that cluster held nothing. One that holds a
    ledger, even a fresh one, still needs --yes."""
    backup = tmp_path / "backups" / "2026-06-30"
    with cluster(primary.parent, "restored-later", start=False) as restored:
        early = run_cli("db", "restore", str(backup), env=restored.env)
        assert early.code == 3 and early.err.count("\n") == 1 and "does not exist" in early.err, early.err
        assert run_cli("doctor", env=restored.env).code == 1  # the empty cluster: no ledger migrated there
        assert restored.server.is_running()

        ok(run_cli("db", "backup", str(backup), env=primary.env))
        done = ok(run_cli("db", "restore", str(backup), env=restored.env))
        assert done.out.splitlines()[0] == f"restored {backup} into the embedded server of {restored.home}"
        kept = Path(done.out.splitlines()[1].removeprefix("the cluster it replaced is kept at "))
        assert kept.parent == restored.server.base and (kept / "PG_VERSION").is_file()
        ok(run_cli("doctor", env=restored.env))
        assert ok(run_cli("target", "show", "AGT-901", env=restored.env))

    with cluster(primary.parent, "migrated-empty") as fresh:
        ok(run_cli("db", "migrate", env=fresh.env))
        fresh.server.stop()  # stopped, it is looked into all the same, and left stopped
        refused = run_cli("db", "restore", str(backup), env=fresh.env)
        assert refused.code == 3 and "holds a cluster (stopped): add --yes to replace it" in refused.err
        assert not fresh.server.is_running()


def test_a_damaged_backup_is_refused_before_anything_is_replaced(primary, tmp_path):
    backup = tmp_path / "backup"
    ok(run_cli("db", "backup", str(backup), env=primary.env))
    victim = next(p for p in sorted((backup / "base").rglob("*")) if p.is_file() and p.stat().st_size > 8192)
    data = bytearray(victim.read_bytes())
    data[100] ^= 1
    victim.write_bytes(bytes(data))
    refused = run_cli("db", "restore", str(backup), "--yes", env=primary.env)
    assert refused.code == 3
    assert refused.err == (f"evalledger: error: {backup}: the backup does not verify: "
                           f"{victim.relative_to(backup)} does not match its SHA256 checksum\n")
    assert primary.server.is_running()  # the live cluster was not touched
    assert ok(run_cli("target", "show", "AGT-901", env=primary.env))


def test_ledger_verify_passes_after_a_restore_against_a_digest_taken_before(primary, tmp_path):
    digest = tmp_path / "digest.json"
    ok(run_cli("ledger", "digest", "--out", str(digest), env=primary.env))
    backup = tmp_path / "backup"
    ok(run_cli("db", "backup", str(backup), env=primary.env))
    with cluster(primary.parent, "verified", start=False) as restored:
        ok(run_cli("db", "restore", str(backup), env=restored.env))
        ok(run_cli("ledger", "verify", "--digest", str(digest), env=restored.env))


# -- point-in-time recovery ------------------------------------------------------------------------


def test_an_archive_recovers_to_a_moment_before_a_superusers_drop_and_not_a_row_past_it(primary):
    from evalledger.core.migrate import migrate

    with psycopg.connect(primary.url("postgres"), autocommit=True) as conn:
        conn.execute("CREATE DATABASE mistaken")
    migrate(primary.url("mistaken"))
    mistaken = {**primary.env, "DATABASE_URL": primary.url("mistaken")}
    archive = primary.parent / "archive"
    made = ok(run_cli("db", "archive", str(archive), env=primary.env)).out
    assert "restarted the embedded server to turn archiving on\n" in made
    assert f"archiving WAL into {archive / 'wal'}; base backup " in made
    ok(run_cli("target", "add", "KEPT-1", "--name", "before the moment", env=mistaken))
    with psycopg.connect(primary.url(), autocommit=True) as conn:
        moment = conn.execute("SELECT now()").fetchone()[0]
        time.sleep(0.05)
    ok(run_cli("target", "add", "LOST-1", "--name", "after the moment", env=mistaken))
    # The mistake: a superuser lifts the guards and drops the ledger.
    with psycopg.connect(primary.url("mistaken"), autocommit=True) as conn:
        conn.execute("ALTER EVENT TRIGGER evalledger_drop_guard_v1 DISABLE")
        conn.execute("ALTER EVENT TRIGGER evalledger_ddl_guard_v1 DISABLE")
        conn.execute("DROP SCHEMA evalledger CASCADE")
        closed = conn.execute("SELECT pg_walfile_name(pg_switch_wal())").fetchone()[0]
        deadline = time.monotonic() + 30
        while (conn.execute("SELECT last_archived_wal FROM pg_stat_archiver").fetchone()[0] or "") < closed:
            assert time.monotonic() < deadline, f"{closed} was not archived within 30 s"
            time.sleep(0.1)
    assert "wal archive: on; last segment" in run_cli("doctor", env=primary.env).out
    # The archive as it stood then: WAL the primary archives later (its 5-minute switch on a slow
    # machine) would make a moment "past the archive's end" reachable.
    archive = Path(shutil.copytree(archive, primary.parent / "archive-at-the-mistake", symlinks=True))

    with cluster(primary.parent, "recovered", start=False) as recovered:
        until = moment.astimezone(timezone(timedelta(hours=-5))).isoformat()  # any zone it names: the same moment
        done = ok(run_cli("db", "restore", str(archive), "--until", until, env=recovered.env)).out
        assert f", recovered to {moment.astimezone(timezone.utc).isoformat()} (UTC)\n" in done
        again = {**recovered.env, "DATABASE_URL": recovered.url("mistaken")}
        listed = ok(run_cli("target", "list", "--json", env=again)).out
        assert '"KEPT-1"' in listed and '"LOST-1"' not in listed
        ok(run_cli("doctor", env=again))  # exit 0: no check fails
        # A restored cluster archives nowhere: it is a new history.
        with psycopg.connect(recovered.url(), autocommit=True) as conn:
            assert conn.execute("SHOW archive_mode").fetchone()[0] == "off"
        # A moment before the archive's first base backup cannot be reached, and nothing is replaced.
        early = run_cli("db", "restore", str(archive), "--until", "2001-01-01T00:00:00Z", "--yes", env=recovered.env)
        assert early.code == 3 and "no base backup made before 2001-01-01T00:00:00+00:00" in early.err
        assert recovered.server.is_running()
        # Nor can one past the archive's last segment (its WAL ends first): the cluster there stays.
        late = (datetime.now(timezone.utc) - timedelta(seconds=1)).isoformat()
        short = run_cli("db", "restore", str(archive), "--until", late, "--yes", env=recovered.env)
        assert short.code == 3, short.out
        assert "recovery ended before configured recovery target was reached" in short.err
        assert "; nothing was replaced: the cluster that was there is back in place and running; " in short.err
        assert '"KEPT-1"' in ok(run_cli("target", "list", "--json", env=again)).out
        # Without --until, the archive replays to its end: the mistake too.
        ended = ok(run_cli("db", "restore", str(archive), "--yes", env=recovered.env)).out
        assert ", recovered to the end of its archived WAL\n" in ended
        with psycopg.connect(recovered.url("mistaken"), autocommit=True) as conn:
            assert conn.execute("SELECT to_regnamespace('evalledger')").fetchone()[0] is None

    # The next day's run: a fresh base backup, the older one and the WAL only it needed removed; the
    # moment before it is then out of reach.
    first = sorted((archive / "base").iterdir())
    oldest_wal = sorted(p.name for p in (archive / "wal").iterdir())[0]
    again = ok(run_cli("db", "archive", str(archive), "--keep", "1", env=primary.env)).out
    assert "restarted" not in again and f"removed base backup {first[0].name} and the WAL only it needed\n" in again
    assert [p.name for p in sorted((archive / "base").iterdir())] != [p.name for p in first]
    assert oldest_wal not in {p.name for p in (archive / "wal").iterdir()}
    with cluster(primary.parent, "too-late", start=False) as late_home:
        gone = run_cli("db", "restore", str(archive), "--until", moment.isoformat(), env=late_home.env)
        assert gone.code == 3 and f"{archive}: no base backup made before " in gone.err


# -- the standby -----------------------------------------------------------------------------------


def test_a_standby_serves_every_reader_refuses_writers_and_catches_up(primary, tmp_path):
    folder = tmp_path / "standby"
    try:
        url = ok(run_cli("db", "replica", "--from", primary.url(), str(folder), env=primary.env)).out.strip()
        standby = EmbeddedServer(folder)
        assert url == standby.dsn()
        readers = {**primary.env, "DATABASE_READ_URL": url}
        assert dashboards(readers) == dashboards(primary.env)
        sees = every_role_sees(url)
        assert sees == every_role_sees(primary.url())
        # The tiers hold there: RevOps does not see the cold run, the auditor does.
        revops = sees["evalledger_revops", "evalledger.brain_eval_log"]
        auditor = sees["evalledger_auditor", "evalledger.brain_eval_log"]
        assert not any(str(primary.cold) in row for row in revops) and any(str(primary.cold) in row for row in auditor)
        assert any(str(primary.hot) in row for row in revops)

        refused = run_cli("target", "add", "STANDBY-1", "--name", "written to the standby", "--database-url", url,
                          env=primary.env)
        assert refused.code == 3
        assert refused.err == (
            f"evalledger: error: the database at postgres@{standby.socket_dir}:5432/evalledger is a read-only standby "
            f"replicating from the primary at {primary.server.socket_dir}:5432: commands that write go to the primary "
            "(DATABASE_URL or --database-url); point only readers at a standby (DATABASE_READ_URL or --read-url)\n")

        ok(run_cli("target", "add", "PRIMARY-1", "--name", "written to the primary", env=primary.env))
        deadline = time.monotonic() + 30
        while '"PRIMARY-1"' not in run_cli("target", "list", "--json", "--database-url", url, env=primary.env).out:
            assert time.monotonic() < deadline, "the standby did not catch up within 30 s"
            time.sleep(0.1)
        exported_from_a_paused_standby(primary, url)
        reported_from_a_paused_standby(primary, url, tmp_path)
        served_to_readers_from(primary, url)
        # A dump of the standby is a dump of the primary: the load checks it against what it saw.
        dumped = tmp_path / "standby.dump"
        ok(run_cli("db", "dump", str(dumped), "--database-url", url, env=primary.env))
        with tarfile.open(dumped) as tar:
            assert json.load(tar.extractfile("manifest.json"))["rows"]["evalledger.target"] == \
                len(json.loads(ok(run_cli("target", "list", "--json", env=primary.env)).out)["rows"])
        lag = [line for line in ok(run_cli("doctor", "--database-url", url, env=primary.env)).out.splitlines()
               if "replica:" in line]
        assert lag and lag[0].startswith(f"ok    replica: standby of {primary.server.socket_dir}:5432, streaming: ")
        assert "standbys: 1 streaming" in run_cli("doctor", env=primary.env).out
    finally:
        Cluster(folder).remove()
        drop_slots(primary.url())


def exported_from_a_paused_standby(primary, url: str) -> None:
    """export reading the standby takes its window's bound from the primary and waits for the
    standby to replay up to it: a row the primary committed while the standby's replay was paused
    is in it, and the export is, byte for byte, the primary's export of the same window."""
    marker = "captured while the standby's replay was paused"
    with psycopg.connect(url, autocommit=True) as standby, psycopg.connect(primary.url(), autocommit=True) as conn:
        standby.execute("SELECT pg_wal_replay_pause()")
        try:
            conn.execute("INSERT INTO evalledger.eval_candidates (tool_name, query, vector_enabled, expansion_applied, "
                         "latency_ms, remote, capture_key) "
                         "VALUES ('query', %s, true, false, 1, false, gen_random_uuid())", (marker,))
            exporting = subprocess.Popen([str(EVALLEDGER), "export"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                         env={**os.environ, **primary.env, "DATABASE_READ_URL": url}, text=True)
            deadline = time.monotonic() + 60
            while not standby.execute("SELECT count(*) FROM pg_stat_activity WHERE pid <> pg_backend_pid() "
                                      "AND query LIKE '%pg_last_wal_replay_lsn() >=%'").fetchone()[0]:
                assert exporting.poll() is None, exporting.communicate()
                assert time.monotonic() < deadline, "the export never waited for the standby"
                time.sleep(0.05)
        finally:
            standby.execute("SELECT pg_wal_replay_resume()")
        out, err = exporting.communicate(timeout=120)
    assert exporting.returncode == 0, err
    assert marker in out
    until = err.splitlines()[-1].rsplit("--since ", 1)[1]
    assert out == ok(run_cli("export", "--until", until, env=primary.env)).out


def reported_from_a_paused_standby(primary, url: str, folder: Path) -> None:
    """report --read-url reads the standby, as it has replayed the primary: a block the primary seals
    while the standby's replay is paused is the latest in the primary's report and absent from the
    standby's, which says it was read on a standby."""
    from evalledger.core import db

    with psycopg.connect(url, autocommit=True) as standby, psycopg.connect(primary.url(), autocommit=True) as conn:
        db.replayed(standby, conn, "the report test")
        standby.execute("SELECT pg_wal_replay_pause()")
        try:
            ok(run_cli("target", "add", "PAUSED-1", "--name", "written while the standby's replay was paused",
                       env=primary.env))
            ok(run_cli("ledger", "seal", env=primary.env))
            latest = conn.execute("SELECT max(block_id) FROM evalledger.ledger_block").fetchone()[0]
            there = ok(run_cli("report", "--read-url", url, "--out", str(folder / "standby.html"), env=primary.env))
            here = ok(run_cli("report", "--out", str(folder / "primary.html"), env=primary.env))
        finally:
            standby.execute("SELECT pg_wal_replay_resume()")
        db.replayed(standby, conn, "the report test")  # the rest of the test reads the standby caught up
    assert there.out.endswith(f"; latest sealed block {latest - 1}; read on a standby\n"), there.out
    assert here.out.endswith(f"; latest sealed block {latest}\n"), here.out
    standby_html, primary_html = (folder / "standby.html").read_text(), (folder / "primary.html").read_text()
    assert f'<td id="block-id">{latest - 1} (' in standby_html and 'id="standby"' in standby_html
    assert f'<td id="block-id">{latest} (' in primary_html and 'id="standby"' not in primary_html


def served_to_readers_from(primary, url: str) -> None:
    """`evalledger serve` on the standby signs the auditor and RevOps in, as their own logins, and
    shows each the runs its tier holds: the auditor the 25-month-old run, RevOps not. A reviewer,
    who could save nothing there, is refused and sent to the primary's app, though the app was
    not told it serves readers only: the standby says so itself."""
    from evalledger.web.app import create_app
    from evalledger.web.auth import READERS_ONLY
    from tests.web.conftest import Client, Served

    reviewer = "evalledger_test_standby_reviewer"
    with psycopg.connect(primary.url(), autocommit=True) as admin:
        for login, role in {**READERS, reviewer: "evalledger_reviewer"}.items():
            ensure_login_role(admin, login, role)
        wanted = admin.execute("SELECT pg_current_wal_insert_lsn()").fetchone()[0]
    with psycopg.connect(url, autocommit=True) as standby:
        deadline = time.monotonic() + 30
        while not standby.execute("SELECT pg_last_wal_replay_lsn() >= %s::pg_lsn", (wanted,)).fetchone()[0]:
            assert time.monotonic() < deadline, "the standby did not replay the new logins within 30 s"
            time.sleep(0.05)
    served = Served(create_app(url))
    try:
        pages = {}
        for login in READERS:
            reader = Client(served.base)
            try:
                assert reader.sign_in(login).status_code == 303
                page = reader.http.get("/runs")
                assert page.status_code == 200
                pages[login] = page.text
            finally:
                reader.close()
        sent_away = Client(served.base)
        try:
            refused = sent_away.sign_in(reviewer)
            assert refused.status_code == 403 and READERS_ONLY in refused.text
        finally:
            sent_away.close()
    finally:
        served.stop()
        with psycopg.connect(primary.url(), autocommit=True) as admin:
            for login in (*READERS, reviewer):
                admin.execute(sql.SQL("DROP ROLE {}").format(sql.Identifier(login)))
    auditor, revops = pages.values()
    assert str(primary.hot) in auditor and str(primary.cold) in auditor
    assert str(primary.hot) in revops and str(primary.cold) not in revops


def drop_slots(url: str) -> None:
    """Drop the primary's replication slots once their standby's sender has gone."""
    with psycopg.connect(url, autocommit=True) as conn:
        deadline = time.monotonic() + 30
        while conn.execute("SELECT count(*) FROM pg_replication_slots WHERE active").fetchone()[0]:
            assert time.monotonic() < deadline, "a replication slot stayed active"
            time.sleep(0.1)
        conn.execute("SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots")
