"""Physical copies of the server: base backups, their restore, WAL archiving with point-in-time
recovery, and a hot standby for readers, all with the embedded wheel's own binaries.

- A base backup is pg_basebackup's plain copy of the whole cluster (every database and role) with
  the WAL that makes it consistent and a SHA-256 manifest, checked as pg_verifybackup checks it
  (ops/manifest.py) when it is made and again before it is restored. BACKUP_INFO beside it says when and from what.
- An archive folder holds base/<UTC time>/ (base backups) and wal/ (every completed WAL segment,
  copied there by the embedded server's archive_command, fsynced, never overwritten). Restoring it
  replays WAL onto the newest base backup made before the moment asked for.
- A restore always lands in the embedded server's home; the cluster it replaces is kept beside it
  (data.replaced-<UTC time>) until `db reset`, never deleted. A restored cluster archives nowhere
  and follows no primary until told to: it is a new history.
- A replica is an embedded server of its own home, started from pg_basebackup -R: it streams from
  its primary through a replication slot, on its own socket.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from urllib.parse import quote

import psycopg

from evalledger.core import db, queries, reader
from evalledger.core.embedded import DATABASE, EmbeddedServer, _ensure_service_user, _traversable_by_others, wheel_bin
from evalledger.core.errors import EvalledgerError
from evalledger.core.queries import Queries

from .pgtools import libpq_args, run

QUERIES = Queries(__package__)

BACKUP_INFO = "evalledger-backup.json"
ARCHIVE_INFO = "evalledger-archive.json"
# Settings a restored or replicated cluster must not inherit from the one it was copied from.
INHERITED = ("archive_mode", "archive_command", "archive_library", "archive_timeout", "restore_command",
             "recovery_target_time", "recovery_target_action", "recovery_target", "recovery_target_lsn",
             "recovery_target_xid", "recovery_target_name", "recovery_target_inclusive", "primary_conninfo",
             "primary_slot_name")
# At most this much of the last commits is lost with the machine: the server switches to a new WAL
# segment (and archives the last) at least this often when anything was written.
ARCHIVE_TIMEOUT = "5min"


@dataclass
class BackupInfo:
    """One verified base backup."""

    folder: Path
    made_at: datetime
    bytes: int


def _stamp(moment: datetime) -> str:
    return moment.strftime("%Y%m%dT%H%M%SZ")


def _size(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


# -- base backups --------------------------------------------------------------------------------


def base_backup(url: str, folder: Path) -> BackupInfo:
    """A base backup of the server at url into folder (new, or empty), verified before it counts.

    A folder that does not exist yet is made, with the folders above it that are missing (a dated
    folder per backup, as cron names them); a backup that fails removes what it made.
    """
    folder = folder.absolute()
    if folder.exists() and not folder.is_dir():
        raise EvalledgerError(f"{folder}: not a folder; a backup goes into a new folder")
    if folder.exists() and any(folder.iterdir()):
        raise EvalledgerError(f"{folder}: not empty; a backup goes into a new folder")
    with db.connect(url, autocommit=True) as conn:
        started = conn.execute(QUERIES["database_clock"]).fetchone()[0].replace(tzinfo=timezone.utc)
        system, major = _identity(conn)
    made_here = _make_folder(folder)
    target, env = libpq_args(url)
    try:
        run("pg_basebackup", "--dbname", target, "--pgdata", str(folder), "--wal-method=stream", "--checkpoint=fast",
            "--manifest-checksums=SHA256", f"--label=evalledger {_stamp(started)}", "--no-password", env=env,
            what="pg_basebackup (the user needs REPLICATION and a replication line in pg_hba.conf)")
        with db.connect(url, autocommit=True) as conn:
            made = conn.execute(QUERIES["database_clock"]).fetchone()[0].replace(tzinfo=timezone.utc)
        verify(folder, info=False)
    except BaseException:
        if made_here is not None:
            shutil.rmtree(made_here, ignore_errors=True)
        elif folder.is_dir():  # the empty folder it was given stays, empty
            for inside in folder.iterdir():
                if inside.is_dir() and not inside.is_symlink():
                    shutil.rmtree(inside, ignore_errors=True)
                else:
                    inside.unlink(missing_ok=True)
        raise
    (folder / BACKUP_INFO).write_text(json.dumps({
        "format": "evalledger-backup", "started_at": started.isoformat(), "made_at": made.isoformat(),
        "system_identifier": system, "server_major": major, "source": db.describe(url)}, indent=1) + "\n")
    return BackupInfo(folder, made, _size(folder))


def _make_folder(folder: Path) -> Path | None:
    """Make folder and the folders above it that are missing; the topmost one made (None when folder
    was there already), which is what to remove to leave nothing behind."""
    missing = [p for p in (folder, *folder.parents) if not p.exists()]
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    except OSError as exc:
        raise EvalledgerError(f"{folder}: cannot make the folder: {exc.strerror}") from None
    return missing[-1] if missing else None


def _identity(conn: psycopg.Connection) -> tuple[str | None, int]:
    """The cluster's system identifier (None when the user may not read it) and major version."""
    major = conn.execute(QUERIES["server_major"]).fetchone()[0]
    if not conn.execute(QUERIES["may_read_control"]).fetchone()[0]:
        return None, major
    return str(conn.execute(QUERIES["system_identifier"]).fetchone()[0]), major


def verify(folder: Path, info: bool = True) -> int:
    """pg_verifybackup's checks (ops/manifest.py): every file the manifest lists, byte for byte, and
    the WAL it needs; the number of files checked."""
    from .manifest import Damaged, check

    if not (folder / "backup_manifest").is_file():
        raise EvalledgerError(f"{folder}: not a base backup (no backup_manifest)")
    try:
        return check(folder, wheel_bin("pg_waldump"), ignore=(BACKUP_INFO,) if info else ())
    except Damaged as exc:
        raise EvalledgerError(f"{folder}: the backup does not verify: {exc}") from None


def _recorded(record: Path, field: str) -> str | None:
    """A text field of a record `db backup` or `db archive` wrote, read as the door reads every file (a
    key given twice refused, not read as its last value); None where the record is unreadable or lacks it."""
    try:
        value = reader.decode_json(record.read_text(encoding="utf-8"), str(record))
    except (OSError, ValueError, EvalledgerError):
        return None
    found = value.get(field) if isinstance(value, dict) else None
    return found if isinstance(found, str) else None


def made_at(folder: Path) -> datetime:
    """When the base backup in folder was made, as its BACKUP_INFO says."""
    try:
        made = datetime.fromisoformat(_recorded(folder / BACKUP_INFO, "made_at"))
        if made.tzinfo is not None:  # as `db backup` writes it; a naive time could not be ordered with one
            return made
    except (TypeError, ValueError):
        pass
    raise EvalledgerError(f"{folder}: no readable {BACKUP_INFO}: not a backup made by `evalledger db backup`")


# -- restore -------------------------------------------------------------------------------------


def restore(source: Path, *, until: datetime | None = None, yes: bool = False) -> tuple[Path, str]:
    """Restore a base backup, or an archive to the moment until (UTC), into the embedded server's home.

    The base backup and the cluster it replaces; raises before touching anything when the backup does
    not verify, or the home holds a cluster and yes is not given.
    """
    source = source.absolute()
    archive = (source / ARCHIVE_INFO).is_file()
    if until is not None and not archive:
        raise EvalledgerError(f"{source}: --until needs an archive made by `evalledger db archive` (WAL to replay); "
                              "this is a single base backup, restorable only to the moment it was made")
    base = _base_for(source, until) if archive else source
    verify(base)
    server = EmbeddedServer()
    if (server.pgdata / "PG_VERSION").exists() and not yes and not _holds_nothing(server):
        state = "running" if server.is_running() else "stopped"
        raise EvalledgerError(f"the embedded server of {server.home} holds a cluster ({state}): add --yes to replace "
                              f"it (it is kept, not deleted, at {server.base}/data.replaced-<time>)")
    was_running = server.stop()
    staging = server.base / "data.restoring"
    replaced = None
    with server._locked():
        if server.as_root:
            server.base.parent.mkdir(mode=0o755, parents=True, exist_ok=True)
        server._make_private_dir(server.base)
        shutil.rmtree(staging, ignore_errors=True)
        try:
            shutil.copytree(base, staging, symlinks=True, ignore=shutil.ignore_patterns(BACKUP_INFO))
            _forget_origin(staging)
            if archive:
                _prepare_recovery(server, staging, source / "wal", base, until)
            _own(server, staging)
        except BaseException:
            # A copy cut short (a full disk, Ctrl-C) is no cluster: none of it stays to be mistaken for one.
            shutil.rmtree(staging, ignore_errors=True)
            shutil.rmtree(server.base / "restore-wal", ignore_errors=True)
            raise
        if server.pgdata.exists():
            replaced = server.base / f"data.replaced-{_stamp(datetime.now(timezone.utc))}"
            server.pgdata.rename(replaced)
        staging.rename(server.pgdata)
    try:
        # The cluster restored is this home's, whichever home the one it replaced served.
        server.start(wait=3600, adopt=True)
        if archive:
            _await_promotion(server, until)
    except (EvalledgerError, psycopg.Error) as exc:
        # The server may stop between pg_ctl's "started" and the first connection (a recovery target
        # past the WAL does): its log says why.
        reason = str(exc) if isinstance(exc, EvalledgerError) else f"the restored server stopped: {_log_tail(server)}"
        raise _put_back(server, replaced, was_running, reason) from None
    finally:
        shutil.rmtree(server.base / "restore-wal", ignore_errors=True)
    return base, str(replaced) if replaced else ""


def _holds_nothing(server: EmbeddedServer) -> bool:
    """Whether the home's cluster is one with nothing in it to lose: what any command (`doctor`, say,
    after a restore that failed) makes in a fresh home, with no database, schema, object, extension,
    event trigger or role of anyone's. Such a cluster needs no --yes to be replaced (it is kept aside
    all the same). A cluster that cannot be started to look into counts as holding something."""
    was_running = server.is_running()
    try:
        admin = psycopg.conninfo.make_conninfo(server.start(), dbname="postgres")
        with psycopg.connect(admin, autocommit=True, connect_timeout=10) as conn:
            names = [name for (name,) in conn.execute(QUERIES["connectable_databases"])]
        if not set(names) <= {"template1", "postgres", DATABASE}:
            return False
        for name in names:
            with psycopg.connect(psycopg.conninfo.make_conninfo(admin, dbname=name), autocommit=True,
                                 connect_timeout=10) as conn:
                if not conn.execute(QUERIES["holds_nothing"]).fetchone()[0]:
                    return False
        return True
    except (EvalledgerError, psycopg.Error, OSError):
        return False
    finally:
        if not was_running:
            server.stop()


def _put_back(server: EmbeddedServer, replaced: Path | None, was_running: bool, reason: str) -> EvalledgerError:
    """After a restore that did not come up: the cluster it replaced back in place (started again if it
    was running), the failed one kept beside it; the error that says so."""
    server.stop()
    failed = server.base / f"data.failed-{_stamp(datetime.now(timezone.utc))}"
    with server._locked():
        server.pgdata.rename(failed)
        if replaced is not None:
            replaced.rename(server.pgdata)
    if replaced is not None and was_running:
        server.start()
    back = "the cluster that was there is back in place" + (" and running" if replaced and was_running else "")
    return EvalledgerError(f"{reason}; nothing was replaced: {back}; the failed restore is kept at {failed}"
                           if replaced else f"{reason}; the failed restore is kept at {failed}")


def _bases(archive: Path) -> list[tuple[datetime, Path]]:
    """The archive's base backups, oldest first, ordered by when each was made (not by its name)."""
    bases = [p for p in (archive / "base").glob("*") if (p / BACKUP_INFO).is_file()]
    return sorted((made_at(p), p) for p in bases)


def _base_for(archive: Path, until: datetime | None) -> Path:
    """The newest base backup of the archive made by until (the newest of all without until)."""
    made = _bases(archive)
    usable = [p for at, p in made if until is None or at <= until]
    if not usable:
        first = f"; its first was made at {made[0][0].isoformat()}" if made else ""
        raise EvalledgerError(f"{archive}: no base backup made before {until.isoformat() if until else 'now'}{first}")
    return usable[-1]


def _forget_origin(pgdata: Path, standby: bool = False) -> None:
    """No archiving, recovery or primary settings carried over from the cluster copied (a standby
    keeps the primary that pg_basebackup -R named, and its signal)."""
    forgotten = [name for name in INHERITED if not (standby and name.startswith("primary_"))]
    auto = pgdata / "postgresql.auto.conf"
    if auto.exists():
        kept = [line for line in auto.read_text().splitlines()
                if line.split("=", 1)[0].strip() not in forgotten]
        auto.write_text("\n".join(kept) + "\n")
    for signal in ("recovery.signal",) if standby else ("standby.signal", "recovery.signal"):
        (pgdata / signal).unlink(missing_ok=True)


def _prepare_recovery(server: EmbeddedServer, pgdata: Path, wal: Path, base: Path, until: datetime | None) -> None:
    """Replay the archive's WAL from the base backup's start to until (to its end without), then
    become a primary.

    The segments are copied into the cluster's own folder, so the server never reads (nor writes)
    the archive, which may sit where its system user cannot reach.
    """
    start = re.search(r"START WAL LOCATION: .*\(file ([0-9A-F]{24})\)", (base / "backup_label").read_text())
    first = start.group(1)[8:] if start else ""
    local = server.base / "restore-wal"
    shutil.rmtree(local, ignore_errors=True)
    local.mkdir(mode=0o700)
    for segment in sorted(wal.glob("*")):
        name = segment.name.removesuffix(".partial")
        if segment.name.endswith(".history") or (len(name) == 24 and name[8:] >= first):
            if not (local / name).exists():
                shutil.copy2(segment, local / name)
    _own(server, local)
    with open(pgdata / "postgresql.auto.conf", "a") as conf:
        conf.write(f"restore_command = 'cp \"{local}/%f\" \"%p\"'\n")
        if until is not None:
            moment = until.astimezone(timezone.utc).strftime("%Y-%m-%d %H:%M:%S.%f+00")
            conf.write(f"recovery_target_time = '{moment}'\nrecovery_target_action = 'promote'\n")
    (pgdata / "recovery.signal").touch()


def _await_promotion(server: EmbeddedServer, until: datetime | None, timeout: float = 3600) -> None:
    deadline = time.monotonic() + timeout
    goal = until.isoformat() if until else "the end of the archive"
    while time.monotonic() < deadline:
        if not server.is_running():
            raise EvalledgerError(f"recovery to {goal} stopped: {_log_tail(server)}")
        try:
            with psycopg.connect(server.dsn(), autocommit=True, connect_timeout=5) as conn:
                if not conn.execute(queries.get("in_recovery")).fetchone()[0]:
                    for name in ("restore_command", "recovery_target_time", "recovery_target_action"):
                        conn.execute(psycopg.sql.SQL(QUERIES["alter_system_reset"]).format(
                            name=psycopg.sql.Identifier(name)))
                    return
        except psycopg.OperationalError:
            pass
        time.sleep(0.2)
    raise EvalledgerError(f"recovery to {goal} did not finish within {timeout:.0f} s")


def _log_tail(server: EmbeddedServer) -> str:
    lines = [line for line in server.logfile.read_text().splitlines() if "FATAL" in line or "LOG:  recovery" in line]
    return " | ".join(lines[-2:]) or "see " + str(server.logfile)


def _own(server: EmbeddedServer, folder: Path) -> None:
    """folder and everything in it the server's (as root, its system user's), closed to others."""
    os.chmod(folder, 0o700)
    if not server.as_root:
        return
    entry = _ensure_service_user()
    for path in [folder, *folder.rglob("*")]:
        os.lchown(path, entry.pw_uid, entry.pw_gid)


# -- WAL archive ---------------------------------------------------------------------------------


def archive(folder: Path, keep: int | None = None) -> tuple[BackupInfo, list[Path], bool]:
    """Archive the embedded server's WAL into folder/wal and take a base backup into folder/base.

    Run it again (daily, say) for a fresh base backup; with keep, only the newest keep base backups
    stay, and the WAL older than the oldest of them goes. The backup, the base backups removed, and
    whether the server had to restart to turn archiving on.
    """
    folder = folder.absolute()
    if "'" in str(folder) or '"' in str(folder) or "%" in str(folder):
        raise EvalledgerError(f"{folder}: the archive's path may not contain quotes or %")
    server = EmbeddedServer()
    url = server.start()
    if server.as_root and not _traversable_by_others(folder.parent if not folder.exists() else folder):
        raise EvalledgerError(f"{folder}: the embedded server runs as {_ensure_service_user().pw_name}, which cannot "
                              "reach this folder (a folder above it is closed to other users): choose one it can reach")
    if not folder.parent.is_dir():
        raise EvalledgerError(f"{folder.parent}: no such folder")
    with db.connect(url, autocommit=True) as conn:
        _claim(folder, _identity(conn)[0])
        wal = folder / "wal"
        wal.mkdir(mode=0o700, exist_ok=True)
        (folder / "base").mkdir(mode=0o700, exist_ok=True)
        _own(server, wal)
        command = (f"f='{wal}/%f'; if [ -f \"$f\" ]; then cmp -s '%p' \"$f\"; "
                   f"else cp '%p' \"$f.part\" && sync \"$f.part\" && mv \"$f.part\" \"$f\" && sync '{wal}'; fi")
        for name, value in (("archive_mode", "on"), ("archive_command", command), ("archive_timeout", ARCHIVE_TIMEOUT)):
            conn.execute(psycopg.sql.SQL(QUERIES["alter_system"]).format(
                name=psycopg.sql.Identifier(name), value=psycopg.sql.Literal(value)))
        conn.execute(QUERIES["reload_configuration"])
        restart = conn.execute(QUERIES["archive_mode"]).fetchone()[0] == "off"
    if restart:
        server.stop()
        server.start()
    with db.connect(url, autocommit=True) as conn:
        conn.execute(QUERIES["switch_wal"])  # the first segment reaches the archive now, not at its end
    backup = base_backup(url, _new_base_folder(folder / "base"))
    removed = _prune(folder, keep) if keep else []
    return backup, removed, restart


def _claim(folder: Path, system: str) -> None:
    """An archive holds one cluster's WAL: refuse another's (its segment names would collide)."""
    info = folder / ARCHIVE_INFO
    if info.is_file():
        found = _recorded(info, "system_identifier")
        if found is None:
            raise EvalledgerError(f"{info}: not the record `db archive` writes (damaged?): it names which "
                                  "cluster the archive holds: put back a copy of it, or name a new folder")
        if found != system:
            raise EvalledgerError(f"{folder} archives another cluster (system {found}, this one is {system}): "
                                  "give each cluster an archive folder of its own")
        return
    if folder.exists() and any(folder.iterdir()):
        raise EvalledgerError(f"{folder}: not empty and not an archive: name a new folder")
    folder.mkdir(mode=0o700, parents=False, exist_ok=True)
    if EmbeddedServer().as_root:
        os.chmod(folder, 0o711)  # the server's system user enters it to reach wal/
    info.write_text(json.dumps({"format": "evalledger-archive", "system_identifier": system}, indent=1) + "\n")


def _new_base_folder(base: Path) -> Path:
    """base/<UTC time>, with -2, -3 ... after it when a backup of the same second is there already."""
    stamp = _stamp(datetime.now(timezone.utc))
    candidate, n = base / stamp, 1
    while candidate.exists():
        n += 1
        candidate = base / f"{stamp}-{n}"
    return candidate


def _prune(folder: Path, keep: int) -> list[Path]:
    bases = [p for _, p in _bases(folder)]
    removed = bases[:-keep] if len(bases) > keep else []
    for old in removed:
        shutil.rmtree(old)
    oldest = bases[len(removed)] if bases else None
    if oldest is not None:
        start = re.search(r"\(file ([0-9A-F]{24})\)", (oldest / "backup_label").read_text())
        if start:
            run("pg_archivecleanup", str(folder / "wal"), start.group(1), what="pg_archivecleanup")
    return removed


# -- replica -------------------------------------------------------------------------------------


def replica(primary: str, folder: Path) -> str:
    """A hot standby of the server at primary, as the embedded server of home folder; its read URL."""
    folder = folder.absolute()
    server = EmbeddedServer(folder)
    if (server.pgdata / "PG_VERSION").exists():
        raise EvalledgerError(f"{folder} already holds a cluster: a replica goes into a new folder")
    slot = f"evalledger_replica_{secrets.token_hex(4)}"
    target, env = libpq_args(primary)
    if server.as_root:
        server.base.parent.mkdir(mode=0o755, parents=True, exist_ok=True)
    server.home.mkdir(mode=0o700, parents=True, exist_ok=True)
    server._make_private_dir(server.base)
    result = server._run("pg_basebackup", "--dbname", target, "--pgdata", str(server.pgdata), "--write-recovery-conf",
                         "--wal-method=stream", "--checkpoint=fast", "--create-slot", "--slot", slot, "--no-password",
                         check=False, env=env, timeout=24 * 3600)
    if result.returncode != 0:
        shutil.rmtree(server.pgdata, ignore_errors=True)
        _drop_slot(primary, slot)
        lines = [line for line in result.stdout.splitlines() if line.strip()]
        raise EvalledgerError(f"pg_basebackup from the primary failed: {lines[-1] if lines else 'no output'} (the "
                              "user needs REPLICATION and a replication line in pg_hba.conf)")
    _forget_origin(server.pgdata, standby=True)  # promoted one day, it must not archive into the primary's archive
    dsn = server.start(wait=3600)
    dbname = psycopg.conninfo.conninfo_to_dict(primary).get("dbname") or DATABASE
    return dsn.replace(f"/{DATABASE}?", f"/{quote(dbname, safe='')}?", 1)


def _drop_slot(primary: str, slot: str) -> None:
    try:
        with db.connect(primary, autocommit=True) as conn:
            conn.execute(QUERIES["drop_slot_if_exists"], {"slot": slot})
    except (psycopg.Error, EvalledgerError):
        pass
