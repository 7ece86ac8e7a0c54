"""The database's administration: the embedded server and migrations (db up/down/reset/migrate/
status), backups, dumps and replicas, doctor, and what the owner registers: targets, legal holds,
retention."""

from __future__ import annotations

import functools
import sys
from pathlib import Path

import click

from evalledger.core import db, output
from evalledger.core.errors import DatabaseRefusal, EvalledgerError
from evalledger.core.options import ROW_ID, When, database_option, echo_listing, format_options
from evalledger.core.queries import Queries

QUERIES = Queries(__package__)


# -- db ------------------------------------------------------------------------------------------


@click.group("db")
def db_group():
    """Start, stop, migrate, back up and restore the database."""


def _embedded_only(command):
    """--database-url on db up/down: accepted, as everywhere, but only if it names the embedded server."""

    @click.option("--database-url", metavar="URL",
                  help="Accepted for symmetry only: this command manages the embedded server, so any other URL is refused.")
    @functools.wraps(command)
    def wrapper(*args, database_url=None, **kwargs):
        from evalledger.core.embedded import EmbeddedServer

        # Given before the subcommand, the root group has set it already.
        url = database_url if database_url is not None else db._explicit_url
        if url is not None and url != EmbeddedServer().dsn():
            raise EvalledgerError(f"db {command.__name__.removeprefix('db_')} manages only the embedded server; "
                                  "--database-url names another PostgreSQL: leave it out")
        return command(*args, **kwargs)

    return wrapper


@db_group.command("up")
@click.option("--adopt", is_flag=True,
              help="As root: serve this EVALLEDGER_HOME the cluster, and ledger, that a deleted home at the same "
                   "path left (refused without it).")
@_embedded_only
def db_up(adopt):
    """Start the embedded PostgreSQL and print its DSN."""
    from evalledger.core.embedded import EmbeddedServer

    server = EmbeddedServer()
    click.echo(server.start(adopt=adopt))


@db_group.command("down")
@_embedded_only
def db_down():
    """Stop the embedded PostgreSQL."""
    from evalledger.core.embedded import EmbeddedServer

    stopped = EmbeddedServer().stop()
    click.echo("stopped" if stopped else "not running")


@db_group.command("reset")
@click.option("--yes", is_flag=True, help="Really delete it: without --yes nothing is deleted.")
@database_option
def db_reset(yes):
    """Delete the embedded PostgreSQL of $EVALLEDGER_HOME: stop it and remove its cluster and all its data.

    It never touches another PostgreSQL: with DATABASE_URL or --database-url set it refuses. As
    root the cluster lives outside EVALLEDGER_HOME (/var/lib/evalledger/<id>): this removes it too.
    """
    import os

    from evalledger.core.embedded import EmbeddedServer

    if db._explicit_url or os.environ.get("DATABASE_URL"):
        raise EvalledgerError("db reset deletes only the embedded database; DATABASE_URL (or --database-url) names "
                              "another PostgreSQL, which it never touches: unset it to reset the embedded one")
    server = EmbeddedServer()
    if not yes:
        raise EvalledgerError(f"db reset deletes the embedded database at {server.base} and everything in it: "
                              "add --yes")
    removed = server.remove()
    click.echo(f"removed the embedded database at {server.base}" if removed else
               f"no embedded database at {server.base}: nothing to remove")


@db_group.command("migrate")
@database_option
def db_migrate():
    """Apply pending migrations (safe to run twice, or twice at once)."""
    from evalledger.core.migrate import migrate

    applied = migrate(db.database_url())
    for migration_id in applied:
        click.echo(f"applied {migration_id}")
    if not applied:
        click.echo("up to date")


@db_group.command("status")
@click.option("--json", "as_json", is_flag=True, help="Print the migrations as JSON (schema: core/schemas/migrations.v1).")
@database_option
def db_status(as_json):
    """List applied and pending migrations."""
    from evalledger.core.migrate import status

    state = status(db.database_url())
    if as_json:
        rows = [(m, "applied") for m in state.applied] + [(m, "pending") for m in state.pending]
        click.echo(output.listing("json", "migrations", ["migration", "state"], rows), nl=False)
        return
    for migration_id in state.applied:
        click.echo(f"applied  {migration_id}")
    for migration_id in state.pending:
        click.echo(f"pending  {migration_id}")


# -- backups, restores, dumps and replicas (ops/backup.py, ops/dump.py; docs/backup.md) ------------


def _refuse_other_server(command: str, what: str) -> None:
    import os

    if db._explicit_url or os.environ.get("DATABASE_URL"):
        raise EvalledgerError(f"db {command} {what} only the embedded server; DATABASE_URL (or --database-url) names "
                              "another PostgreSQL: unset it")


def _mb(size: int) -> str:
    return f"{size / 2**20:.1f} MB"


@db_group.command("backup")
@click.argument("folder", type=click.Path(file_okay=False, path_type=Path))
@database_option
def db_backup(folder):
    """Take a base backup of the whole server into FOLDER (new or empty), checked against its manifest.

    A copy of every database and role, with the WAL that makes it consistent and a SHA-256 manifest;
    `db restore FOLDER` brings it back. The embedded server's, or another's with --database-url (its
    user needs REPLICATION and a replication line in pg_hba.conf).
    """
    from .backup import base_backup

    found = base_backup(db.database_url(), folder)
    click.echo(f"backed up {db.describe(db.database_url())} into {found.folder}: {_mb(found.bytes)}, verified "
               f"against its SHA-256 manifest, consistent as of {output.cell(found.made_at)} UTC")


@db_group.command("restore")
@click.argument("source", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--until", type=When(), metavar="WHEN",
              help="Recover an archive (`db archive`) to this moment: ISO 8601, in UTC unless it names a zone, or a "
                   "duration back from now (30m). Commits after it are not replayed.")
@click.option("--yes", is_flag=True, help="Replace the embedded server's cluster (kept beside it, not deleted).")
def db_restore(source, until, yes):
    """Restore SOURCE, a base backup (`db backup`) or an archive (`db archive`), into the embedded server.

    The backup is verified first. A cluster already in $EVALLEDGER_HOME is replaced only with --yes,
    and kept beside the new one (data.replaced-<time>) until `db reset`. An archive restores its
    newest base backup made before --until and replays its WAL up to that moment (without --until, to
    the end of the archive). The restored server archives nowhere until `db archive` is run again.
    """
    from datetime import datetime, timezone

    from .backup import ARCHIVE_INFO, restore
    from evalledger.core.embedded import EmbeddedServer

    _refuse_other_server("restore", "restores into")
    if until is not None and until > datetime.now(timezone.utc):
        raise EvalledgerError(f"--until {until.isoformat()} is in the future")
    base, replaced = restore(source, until=until, yes=yes)
    server = EmbeddedServer()
    moment = f", recovered to {until.astimezone(timezone.utc).isoformat()} (UTC)" if until else \
        (", recovered to the end of its archived WAL" if (source / ARCHIVE_INFO).is_file() else "")
    click.echo(f"restored {base} into the embedded server of {server.home}{moment}")
    if replaced:
        click.echo(f"the cluster it replaced is kept at {replaced}")
    click.echo("check it with `evalledger doctor`")


@db_group.command("dump")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--no-role-passwords", is_flag=True, help="Leave the logins' password hashes out of the dump.")
@database_option
def db_dump(file, no_role_passwords):
    """Write the ledger to FILE (new; mode 600), a logical dump that `db load` loads into any PostgreSQL 14+.

    It carries the database (rows, owners, grants, row-level security, triggers, event triggers) and
    what pg_dump leaves out: the ledger's roles, their memberships and, when a superuser dumps, their
    password hashes (keep the file as you keep the database).
    """
    from .dump import dump

    found = dump(db.database_url(), file, passwords=not no_role_passwords)
    click.echo(f"dumped {db.describe(db.database_url())} into {found.path}: {found.tables} tables, {found.rows} rows, "
               f"{len(found.roles)} roles ({found.passwords} with a password), {_mb(found.bytes)}")


@db_group.command("load")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@database_option
def db_load(file):
    """Load FILE (`db dump`) into an empty database, in one transaction, checked before it commits.

    Roles the server lacks are created first. The load commits only if every owner, grant, policy,
    trigger state, event trigger and row count is what was dumped; otherwise nothing is written.
    """
    from .dump import load

    found = load(db.database_url(), file)
    click.echo(f"loaded {file} into {db.describe(db.database_url())}: {found.tables} tables, {found.rows} rows; "
               f"checked {found.checked} facts against the dump")
    click.echo(f"roles created: {', '.join(found.created_roles) or 'none'}; already here: "
               f"{', '.join(found.kept_roles) or 'none'}")
    for note in found.notes:
        click.echo(f"note: {note}")


@db_group.command("archive")
@click.argument("folder", type=click.Path(file_okay=False, path_type=Path))
@click.option("--keep", type=click.IntRange(min=1), metavar="N",
              help="Keep only the newest N base backups, and the WAL from the oldest of them on.")
def db_archive(folder, keep):
    """Archive the embedded server's WAL into FOLDER/wal and take a base backup into FOLDER/base.

    From then on the server copies every WAL segment there (at least every 5 minutes while anything
    is written), so `db restore FOLDER --until WHEN` recovers to any moment since the first base
    backup. Run it again (daily, from cron) for a fresh base backup: replay starts from the newest.
    """
    _refuse_other_server("archive", "archives")
    from .backup import archive

    backup, removed, restarted = archive(folder, keep)
    if restarted:
        click.echo("restarted the embedded server to turn archiving on")
    click.echo(f"archiving WAL into {folder.absolute() / 'wal'}; base backup {backup.folder.name} "
               f"({_mb(backup.bytes)}, verified)")
    for old in removed:
        click.echo(f"removed base backup {old.name} and the WAL only it needed")


@db_group.command("replica")
@click.option("--from", "primary", required=True, metavar="URL", help="The primary to replicate (its user needs "
              "REPLICATION); the embedded one is `evalledger db up`'s URL.")
@click.argument("folder", type=click.Path(file_okay=False, path_type=Path))
def db_replica(primary, folder):
    """Make FOLDER a read-only hot standby of the primary at --from, and start it; print its URL.

    It is an embedded server of its own (EVALLEDGER_HOME=FOLDER: `db up`, `db down`, `doctor` and
    `db reset` manage it) on its own socket, streaming through a replication slot on the primary.
    Point readers at it (DATABASE_READ_URL or --read-url); it refuses every write and names the primary.
    """
    from .backup import replica

    url = replica(primary, folder)
    click.echo(url)


# -- doctor --------------------------------------------------------------------------------------


@click.command("doctor")
@click.option("--json", "as_json", is_flag=True, help="Print the findings as JSON (schema: core/schemas/doctor.v1).")
@database_option
def doctor_command(as_json):
    """Check the database: reachable, migrated, this evalledger against the ledger's last migration, whether your
    sessions may write, roles and your memberships in them, guards, event triggers.

    On the embedded server it also lists clusters that outlived their EVALLEDGER_HOME.

    Exit 0 when every check passes (warnings allowed), 1 when one fails, 3 when the database
    cannot be reached.
    """
    from .doctor import diagnose

    import os

    findings = diagnose(db.database_url())
    if not (db._explicit_url or os.environ.get("DATABASE_URL")):
        from .doctor import clusters_left_behind

        findings += clusters_left_behind()  # the machine's embedded clusters, not another server's
    if as_json:
        click.echo(output.to_json({"schema_version": 1, "kind": "doctor", "findings": [
            {"level": f.level, "check": f.check, "detail": f.detail} for f in findings]}), nl=False)
    for finding in findings if not as_json else ():
        click.echo(f"{output.verdict(finding.level, f'{finding.level:4}')}  {finding.check}: {finding.detail}")
    sys.exit(1 if any(f.level == "fail" for f in findings) else 0)


# -- targets -------------------------------------------------------------------------------------


@click.group("target")
def target_group():
    """Register and list what is under test (brains, bots, features)."""


@target_group.command("add")
@click.argument("target_id")
@click.option("--kind", type=click.Choice(["brain", "bot", "feature", "corpus"]), default="brain", show_default=True,
              help="What the target is.")
@click.option("--name", "display_name", required=True, help="Human-readable name (one line, at most 200 characters).")
@click.option("--family", "model_family", help="Model family of the target (flags same-family judges).")
@database_option
def target_add(target_id, kind, display_name, model_family):
    """Register TARGET_ID (e.g. AGT-903): a new brain is a row, not a migration.

    TARGET_ID is 1-16 letters, digits, '.', '_' or '-'. Registering the same target again is
    "already registered"; a target is never edited, so other fields for an existing id are refused.
    """

    from evalledger.core.reading import fetch, records

    display_name = " ".join(display_name.split())
    if not display_name or len(display_name) > 200:
        raise EvalledgerError(f"--name: must be 1 to 200 characters on one line, got {len(display_name)}")
    wanted = {"target_id": target_id, "kind": kind, "display_name": display_name, "model_family": model_family}
    try:
        with db.transaction("owner") as conn:
            added = conn.execute(QUERIES["add_target_once"], wanted).fetchone()
            columns, rows = fetch(conn, QUERIES["target_row"], {"target_id": target_id})
    except DatabaseRefusal as exc:
        if exc.constraint == "target_id_format" or exc.sqlstate == "22001":  # 22001: longer than the column
            raise EvalledgerError(f"TARGET_ID {target_id!r}: use 1-16 letters, digits, '.', '_' or '-', starting "
                                  "with a letter or digit") from None
        raise
    if added:
        click.echo(f"registered {target_id}")
        return
    found = records(columns, rows)[0]
    differs = [k for k in ("kind", "display_name", "model_family") if found[k] != wanted[k]]
    if differs:
        raise EvalledgerError(f"{target_id} is already registered with another {', '.join(differs)} "
                              f"({', '.join(f'{k} {found[k]!r}' for k in differs)}): targets are not edited")
    click.echo(f"already registered: {target_id}")


@target_group.command("list")
@format_options
@database_option
def target_list(fmt):
    """List registered targets (as an auditor)."""
    echo_listing("auditor", QUERIES["target_rows"], None, fmt=fmt, kind="targets",
                 empty="no targets registered (evalledger target add)")


@target_group.command("show")
@click.argument("target_id")
@format_options
@database_option
def target_show(target_id, fmt):
    """Show the registered target TARGET_ID."""
    from evalledger.core.reading import fetch

    with db.transaction("auditor") as conn:
        columns, rows = fetch(conn, QUERIES["target_row"], {"target_id": target_id})
    if not rows:
        raise EvalledgerError(f"no target {target_id!r} (evalledger target list)")
    click.echo(output.listing(fmt, "targets", columns, rows), nl=False)


# -- legal holds ---------------------------------------------------------------------------------


@click.group("hold")
def hold_group():
    """Legal holds: a brain, a run or a date range kept past the 7-year purge horizon."""


@hold_group.command("add")
@click.option("--brain", help="Hold every aging row of this brain (its runs and analyses, its takes-quality runs).")
@click.option("--run", help="Hold one brain-eval run (its id) and everything recorded with it.")
@click.option("--from", "held_from", type=When(), help="Start of a date range on the tier clock (ISO 8601), with --to.")
@click.option("--to", "held_to", type=When(), help="End of the date range (ISO 8601, inclusive), with --from.")
@click.option("--reason", required=True, help="Why the data is held (the matter, the request).")
@click.option("--quiet", is_flag=True, help="Print only the new hold's id (for scripts).")
@database_option
def hold_add(brain, run, held_from, held_to, reason, quiet):
    """Place a legal hold (as the owner): rows it covers are never purged until it is released.

    A hold covers exactly one of: a brain (--brain AGT-902), a run (--run RUN_ID), or the rows of
    every aging table recorded in a date range (--from TS --to TS, on the database's recording time).
    """
    from . import retention

    hold_id, placed_at = retention.add_hold(run=run, brain=brain, held_from=held_from, held_to=held_to,
                                            reason=reason)
    click.echo(hold_id if quiet else f"hold {hold_id} placed at {output.cell(placed_at)}")


@hold_group.command("release")
@click.argument("hold_id", type=ROW_ID)
@click.option("--reason", required=True, help="Why the hold ends (the matter closed, the request withdrawn).")
@database_option
def hold_release(hold_id, reason):
    """Release hold HOLD_ID (as the owner): a release row of its own, never an edit of the hold."""
    from . import retention

    released_at, released_by = retention.release_hold(hold_id, reason)
    click.echo(f"hold {hold_id} released at {output.cell(released_at)} by {released_by}")


@hold_group.command("list")
@click.option("--active", is_flag=True, help="Only holds not yet released.")
@format_options
@database_option
def hold_list(active, fmt):
    """List legal holds, newest first (as an auditor): what each keeps, why, who placed it, its release."""
    echo_listing("auditor", QUERIES["list_holds"], {"active": active}, fmt=fmt, kind="holds",
                 empty="no legal holds")


# -- retention -----------------------------------------------------------------------------------


@click.group("retention")
def retention_group():
    """Retention tiers: hot 24 months, cold to 7 years (auditors only), purge after, unless held."""


@retention_group.command("plan")
@format_options
@database_option
def retention_plan(fmt):
    """Show, per table that ages, the rows hot, cold, due for purge and held (as an auditor).

    held_by names each hold that keeps rows past the horizon, and how many it keeps.
    """
    from . import retention

    columns, rows = retention.plan()
    click.echo(output.listing(fmt, "retention_plan", columns, rows, max_width=120), nl=False)


@retention_group.command("apply")
@format_options
@database_option
def retention_apply(fmt):
    """Purge what is due, in one transaction (as evalledger_retention: the installer, or its members).

    Deletes, in foreign-key order, every row past the 7-year horizon that no hold keeps, drops
    captured-query partitions wholly past it, and logs each step in retention_purge_log.
    """
    from evalledger.ledger.cli import seal_after

    from . import retention

    # Sealed before (the rows about to go are in a block) and after (the purge's own deletes are).
    seal_after("owner")
    columns, rows = retention.apply()
    seal_after("owner")
    click.echo(output.listing(fmt, "retention_purge", columns, rows, empty="nothing is due for purge"), nl=False)


COMMANDS = [db_group, doctor_command, target_group, hold_group, retention_group]
