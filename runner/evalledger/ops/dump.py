"""Logical dumps of a ledger that load into another server, of the same or another major version.

pg_dump carries one database: its tables and rows, ownership, grants, row-level security, policies,
triggers with their ENABLE ALWAYS state and the event triggers. It does not carry what lives outside
the database, nor make it load anywhere:

- Roles are the cluster's. The dump records the ledger's roles (the application roles, every role
  an owner, grant or policy names, the reviewers' logins and every role that is a member of these:
  attributes, memberships and, when a superuser dumps, password verifiers); the load creates those
  the server lacks, in the same transaction as everything else, so no GRANT names a missing role.
- The installer (the user who migrated, owner of the event triggers and of yoyo's tables) is a
  name on one server; the user who loads takes its place, as if it had run the migrations.
- Event triggers need a superuser. Loaded by one, they come back as they were; loaded by anyone
  else they cannot, exactly as `db migrate` on a managed server: the load says so, doctor warns.
- A dump made by a newer pg_dump may set what an older server does not know (transaction_timeout
  before 17): the load leaves that setting out for such a server.

What a load may not change, it checks: the loaded database's fingerprint (ledger_fingerprint: every
owner, grant, policy, trigger state, function, event trigger and sequence) and every table's row
count must equal the dump's, or the whole load rolls back and nothing is left half-written.

The file is a tar of manifest.json (what the check compares against, the roles, a SHA-256 of the
archive) and ledger.pgdump (pg_dump's custom format, taken in the same snapshot as the manifest).
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import shutil
import subprocess
import tarfile
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import psycopg
from psycopg import sql

from evalledger.core import db, queries
from evalledger.core.embedded import wheel_bin
from evalledger.core.errors import EvalledgerError
from evalledger.core.queries import Queries

from .pgtools import last_line, libpq_args, run

QUERIES = Queries(__package__)

FORMAT = "evalledger-dump"
FORMAT_VERSION = 1
MANIFEST = "manifest.json"
ARCHIVE = "ledger.pgdump"
# The ledger's own roles, whether or not anything in the database names them yet.
LEDGER_ROLES = (*db.ROLES.values(), "evalledger_code", "evalledger_retention")
# What a non-superuser installer is made a member of by the migrations (0001 and 0004).
INSTALLER_ROLES = ("evalledger_code", "evalledger_owner", "evalledger_retention")
INSTALLER_PLACEHOLDER = "(installer)"


@dataclass
class DumpSummary:
    """What a dump holds."""

    path: Path
    tables: int
    rows: int
    roles: list[str]
    passwords: int
    bytes: int


@dataclass
class LoadSummary:
    """What a load did."""

    tables: int
    rows: int
    created_roles: list[str] = field(default_factory=list)
    kept_roles: list[str] = field(default_factory=list)
    event_triggers: bool = True
    checked: int = 0
    notes: list[str] = field(default_factory=list)


# -- dump ----------------------------------------------------------------------------------------


def dump(url: str, path: Path, *, passwords: bool = True) -> DumpSummary:
    """Write the ledger at url to path (a new file, mode 600), whole or not at all."""
    path = Path(path)
    if path.exists():
        raise EvalledgerError(f"{path}: already exists; a dump never overwrites a file: name a new one")
    if not path.parent.is_dir():
        raise EvalledgerError(f"{path.parent}: no such folder")
    with tempfile.TemporaryDirectory(prefix=".evalledger-dump-", dir=path.parent) as scratch:
        archive = Path(scratch) / ARCHIVE
        manifest = _dump_in_one_snapshot(url, archive, passwords)
        manifest["archive_sha256"] = _sha256(archive)
        partial = Path(scratch) / "dump.tar"
        with tarfile.open(partial, "w", format=tarfile.PAX_FORMAT) as tar:
            data = json.dumps(manifest, indent=1, sort_keys=True).encode()
            info = tarfile.TarInfo(MANIFEST)
            info.size, info.mode, info.mtime = len(data), 0o600, int(datetime.now().timestamp())
            tar.addfile(info, io.BytesIO(data))
            tar.add(archive, arcname=ARCHIVE)
        os.chmod(partial, 0o600)
        with open(partial, "rb") as handle:
            os.fsync(handle.fileno())
        os.rename(partial, path)
    counts = manifest["rows"]
    return DumpSummary(path, len(counts), sum(counts.values()), [r["name"] for r in manifest["roles"]],
                       len(manifest["passwords"]), path.stat().st_size)


def _dump_in_one_snapshot(url: str, archive: Path, passwords: bool) -> dict:
    """pg_dump into archive, and the manifest read in the very snapshot pg_dump reads."""
    conn = db.connect(url)
    try:
        conn.isolation_level = psycopg.IsolationLevel.REPEATABLE_READ
        conn.read_only = True
        with conn.transaction():
            if not conn.execute(QUERIES["doctor_schema_exists"]).fetchone()[0]:
                raise EvalledgerError(f"{db.describe(url)} holds no ledger (no schema evalledger): nothing to dump")
            snapshot = conn.execute(QUERIES["export_snapshot"]).fetchone()[0]
            conn.execute(QUERIES["no_search_path"])
            manifest = _manifest(conn, passwords)
            target, env = libpq_args(url)
            run("pg_dump", "--format=custom", f"--snapshot={snapshot}", "--file", str(archive), "--dbname", target,
                env=env)
    finally:
        conn.close()
    return manifest


def _manifest(conn: psycopg.Connection, passwords: bool) -> dict:
    roles = [dict(zip(("name", "login", "inherit", "connection_limit", "valid_until"), row))
             for row in conn.execute(QUERIES["dump_roles"], {"named": list(LEDGER_ROLES)})]
    for role in roles:
        role["valid_until"] = role["valid_until"].isoformat() if role["valid_until"] else None
    names = [r["name"] for r in roles]
    memberships = [dict(zip(("role", "member", "admin", "inherit", "set"), row))
                   for row in conn.execute(QUERIES["dump_memberships"], {"roles": names})]
    carried = passwords and conn.execute(QUERIES["is_superuser"]).fetchone()[0]
    verifiers = dict(conn.execute(QUERIES["dump_role_passwords"], {"roles": names}).fetchall()) if carried else {}
    installer_roles = [r for (r,) in conn.execute(QUERIES["dump_installer_roles"], {"roles": names})]
    return {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "made_at": conn.execute(QUERIES["database_clock"]).fetchone()[0].isoformat() + "Z",
        "server_major": conn.execute(QUERIES["server_major"]).fetchone()[0],
        "installer": conn.execute(QUERIES["installer"]).fetchone()[0],
        "installer_roles": installer_roles,
        "migrations": [m for (m,) in conn.execute(QUERIES["dump_migrations"])],
        "roles": roles,
        "memberships": memberships,
        "passwords": verifiers,
        "passwords_carried": carried,
        "fingerprint": [list(row) for row in conn.execute(QUERIES["ledger_fingerprint"])],
        "rows": row_counts(conn),
    }


def row_counts(conn: psycopg.Connection) -> dict[str, int]:
    """Every table's row count, by quoted name (partitions apart from their parent)."""
    counted = {}
    for table, root in conn.execute(QUERIES["ledger_tables"]).fetchall():
        counted[table] = conn.execute(sql.SQL(QUERIES["count_rows"]).format(
            table=sql.Literal(table), root=sql.SQL(root))).fetchone()[0]
    return counted


# -- load ----------------------------------------------------------------------------------------


def load(url: str, path: Path) -> LoadSummary:
    """Load the dump at path into the empty database at url, in one transaction, checked before it commits."""
    with _opened(Path(path)) as (manifest, archive):
        with db.connect(url, autocommit=True) as conn:
            _refuse_unless_empty(conn, url)
            major = conn.execute(QUERIES["server_major"]).fetchone()[0]
            superuser = conn.execute(QUERIES["is_superuser"]).fetchone()[0]
            loader = conn.execute(QUERIES["doctor_session_user"]).fetchone()[0]
            summary = LoadSummary(len(manifest["rows"]), sum(manifest["rows"].values()), event_triggers=superuser)
            prelude = _roles_prelude(conn, manifest, loader, superuser, major, summary)
            check = _check(conn, manifest, major, superuser, summary)
        if major < manifest["server_major"]:
            summary.notes.append(f"a PostgreSQL {manifest['server_major']} dump loaded into {major}: the ledger's "
                                 "SQL needs nothing newer, and the check below compared every fact")
        entries = _passes(archive, manifest["installer"], superuser)
        _run_in_one_transaction(url, archive, prelude, entries, check, major)
    return summary


@contextlib.contextmanager
def _opened(path: Path) -> Iterator[tuple[dict, Path]]:
    """The manifest and the archive (extracted, its checksum checked) of the dump at path."""
    if not path.is_file():
        raise EvalledgerError(f"{path}: no such file")
    try:
        tar = tarfile.open(path, "r:")
    except (tarfile.TarError, OSError) as exc:
        raise EvalledgerError(f"{path}: not an evalledger dump ({exc})") from None
    with tar, tempfile.TemporaryDirectory(prefix="evalledger-load-") as scratch:
        names = tar.getnames()
        if names != [MANIFEST, ARCHIVE]:
            raise EvalledgerError(f"{path}: not an evalledger dump (it holds {', '.join(names[:4]) or 'nothing'})")
        try:
            manifest = json.load(tar.extractfile(MANIFEST))
        except ValueError as exc:
            raise EvalledgerError(f"{path}: {MANIFEST} is not JSON: {exc}") from None
        if manifest.get("format") != FORMAT or manifest.get("format_version") != FORMAT_VERSION:
            raise EvalledgerError(f"{path}: format {manifest.get('format')!r} version {manifest.get('format_version')!r}"
                                  f" is not {FORMAT} version {FORMAT_VERSION}")
        archive = Path(scratch) / ARCHIVE
        with tar.extractfile(ARCHIVE) as source, open(archive, "wb") as target:
            shutil.copyfileobj(source, target, 1 << 20)
        if _sha256(archive) != manifest.get("archive_sha256"):
            raise EvalledgerError(f"{path}: {ARCHIVE} does not match the checksum its manifest recorded: the file "
                                  "is damaged or was changed")
        yield manifest, archive


def _refuse_unless_empty(conn: psycopg.Connection, url: str) -> None:
    if conn.execute(queries.get("in_recovery")).fetchone()[0]:
        raise EvalledgerError(f"{db.describe(url)} is a read-only standby: load into a primary")
    found = conn.execute(QUERIES["load_occupied"]).fetchone()[0]
    if found:
        raise EvalledgerError(f"{db.describe(url)} is not empty ({found}): load into an empty database (for the "
                              "embedded server, `evalledger db reset --yes` first; elsewhere, CREATE DATABASE)")


def _roles_prelude(conn, manifest: dict, loader: str, superuser: bool, major: int, summary: LoadSummary) -> str:
    """The statements that make the dump's roles and memberships on this server (those it lacks)."""
    names = [r["name"] for r in manifest["roles"]]
    existing = {name: rest for name, *rest in conn.execute(QUERIES["doctor_roles"], {"roles": names})}
    unsafe = [name for name, (sup, bypass, _) in existing.items() if sup or bypass]
    if unsafe:
        raise EvalledgerError(f"roles on this server are superuser or BYPASSRLS: {', '.join(unsafe)}; the ledger "
                              "would be open to them: load into a server where they are not")
    statements = []
    for role in manifest["roles"]:
        if role["name"] in existing:
            summary.kept_roles.append(role["name"])
            continue
        summary.created_roles.append(role["name"])
        password = manifest["passwords"].get(role["name"])
        statements.append(sql.SQL(QUERIES["load_create_role"]).format(
            role=sql.Identifier(role["name"]), login=sql.SQL("LOGIN" if role["login"] else "NOLOGIN"),
            inherit=sql.SQL("INHERIT" if role["inherit"] else "NOINHERIT"),
            limit=sql.Literal(role["connection_limit"]), until=sql.Literal(role["valid_until"] or "infinity"),
            password=sql.Literal(password)))
    if not manifest["passwords_carried"]:
        logins = [r["name"] for r in manifest["roles"] if r["login"] and r["name"] in summary.created_roles]
        if logins:
            summary.notes.append(f"the dump carries no passwords (made by a non-superuser, or with --no-role-passwords): "
                                 f"logins created without one: {', '.join(logins)}; set them with ALTER ROLE ... PASSWORD")
    present = {(r, m) for r, m in conn.execute(QUERIES["load_memberships_present"], {"roles": names})}
    grants = [g for g in manifest["memberships"] if (g["role"], g["member"]) not in present]
    if not superuser:  # as the migrations make a non-superuser installer
        wanted = sorted(set(INSTALLER_ROLES) | set(manifest["installer_roles"]))
        grants += [{"role": r, "member": loader, "admin": False, "inherit": True, "set": True} for r in wanted
                   if (r, loader) not in present]
    for grant in grants:
        if major >= 16:
            statements.append(sql.SQL(QUERIES["load_grant_membership_16"]).format(
                role=sql.Identifier(grant["role"]), member=sql.Identifier(grant["member"]),
                admin=sql.SQL("TRUE" if grant["admin"] else "FALSE"),
                inherit=sql.SQL("TRUE" if grant["inherit"] else "FALSE"), set=sql.SQL("TRUE" if grant["set"] else "FALSE")))
        else:
            statements.append(sql.SQL(QUERIES["load_grant_membership" + ("_admin" if grant["admin"] else "")]).format(
                role=sql.Identifier(grant["role"]), member=sql.Identifier(grant["member"])))
    extra = [f"{m} in {r}" for r, m in conn.execute(QUERIES["load_other_members"],
                                                    {"roles": names, "known": names + [loader]})]
    if extra:
        summary.notes.append(f"this server's roles give more logins the ledger's roles than the dump had: "
                             f"{', '.join(extra)}; revoke what they should not have")
    return "".join(s.as_string(conn) + ";\n" for s in statements)


def _check(conn, manifest: dict, major: int, superuser: bool, summary: LoadSummary) -> str:
    """The block that fails the load's transaction unless the loaded ledger is the dumped one."""
    cross_version = major != manifest["server_major"]
    expected = [row for row in manifest["fingerprint"]
                if not (cross_version and row[0].endswith("definition"))
                and not (not superuser and row[0] == "event trigger")]
    if not superuser:
        summary.notes.append("not a superuser: the guard event triggers cannot be installed here (as on a managed "
                             "server); `evalledger doctor` says what that leaves open")
    summary.checked = len(expected) + len(manifest["rows"])
    return sql.SQL(QUERIES["load_check"]).format(
        fingerprint=sql.SQL(QUERIES["ledger_fingerprint"]), skip_definitions=sql.SQL(str(cross_version).upper()),
        expected=sql.Literal(json.dumps(expected)), rows=sql.Literal(json.dumps(manifest["rows"]))).as_string(conn) + ";\n"


def _passes(archive: Path, installer: str | None, superuser: bool) -> list[tuple[list[str], bool]]:
    """The archive's entries in three passes: the installer's own objects (owned by whoever loads),
    everything else (with its owners), and the event triggers (a superuser's alone), last as in the
    dump; each with whether pg_restore keeps owners."""
    listing = run("pg_restore", "--list", str(archive), what="pg_restore --list (reading the dump)")
    entries = [line for line in listing.splitlines() if line and not line.startswith(";")]
    events = [e for e in entries if " EVENT TRIGGER " in e]
    installers = [e for e in entries if installer and e.endswith(" " + installer) and e not in events]
    rest = [e for e in entries if e not in events and e not in installers]
    return [(installers, False), (rest, True), (events if superuser else [], False)]


def _run_in_one_transaction(url: str, archive: Path, prelude: str, passes, check: str, major: int) -> None:
    """psql --single-transaction fed the roles, each pass as pg_restore writes it, then the check."""
    target, env = libpq_args(url)
    with tempfile.TemporaryDirectory(prefix="evalledger-load-") as scratch, \
            open(Path(scratch) / "psql.err", "w+") as errors:
        psql = subprocess.Popen(
            [str(wheel_bin("psql")), "--no-psqlrc", "--quiet", "--single-transaction", "--set", "ON_ERROR_STOP=1",
             "--dbname", target, "--file", "-"],
            env=env, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=errors)
        try:
            psql.stdin.write(prelude.encode())
            for number, (entries, owners) in enumerate(passes):
                if not entries:
                    continue
                listed = Path(scratch) / f"pass{number}.list"
                listed.write_text("\n".join(entries) + "\n")
                _restore_into(psql.stdin, archive, listed, owners, major)
            psql.stdin.write(check.encode())
            psql.stdin.close()
        except BrokenPipeError:  # psql stopped at an error: its message says which
            pass
        code = psql.wait()
        errors.seek(0)
        message = errors.read()
    if code != 0:
        raise EvalledgerError(f"the load was rolled back, nothing was written: {_first_error(message)}")


def _restore_into(stream, archive: Path, listed: Path, owners: bool, major: int) -> None:
    """pg_restore's SQL for the entries listed, into stream; an older server's unknown settings left out."""
    restore = subprocess.Popen(
        [str(wheel_bin("pg_restore")), "--use-list", str(listed), "--file", "-", *([] if owners else ["--no-owner"]),
         str(archive)], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    header = True
    while header:
        line = restore.stdout.readline()
        if not line:
            break
        header = line != b"SET row_security = off;\n"
        if major < 17 and line == b"SET transaction_timeout = 0;\n":
            continue
        stream.write(line)
    shutil.copyfileobj(restore.stdout, stream, 1 << 20)
    if restore.wait() != 0:
        raise EvalledgerError(f"pg_restore failed: {last_line(restore.stderr.read().decode())}")


def _first_error(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    found = next((i for i, line in enumerate(lines) if "ERROR:" in line), None)
    if found is None:
        return lines[-1] if lines else "psql failed"
    detail = [line for line in lines[found + 1:found + 3] if line.startswith(("DETAIL:", "HINT:"))]
    return " ".join([lines[found].split("ERROR:", 1)[1].strip(), *detail])


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()
