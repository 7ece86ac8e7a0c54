"""The evalledger command line."""

from __future__ import annotations

import sys

import click
import psycopg

from . import db
from .errors import EXIT_ERROR
from .options import database_option  # noqa: F401  (commands in other modules import it from here)


class LedgerGroup(click.Group):
    """A group whose usage errors exit 3, like every other error, not click's 2."""

    def main(self, *args, **kwargs):
        kwargs.setdefault("standalone_mode", True)
        try:
            return super().main(*args, **{**kwargs, "standalone_mode": False})
        except click.exceptions.Abort:
            click.echo("evalledger: aborted", err=True)
            sys.exit(EXIT_ERROR)
        except click.UsageError as exc:
            where = exc.ctx.command_path.partition(" ")[2] if exc.ctx else ""
            click.echo(f"evalledger: error: {where + ': ' if where else ''}{exc.format_message()}", err=True)
            sys.exit(EXIT_ERROR)
        except click.ClickException as exc:
            exc.show()
            sys.exit(exc.exit_code)
        except psycopg.Error as exc:
            db.explain(exc).show()
            sys.exit(EXIT_ERROR)
        except BrokenPipeError:
            sys.exit(0)


@click.group(cls=LedgerGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="evalledger")
def cli():
    """evalledger: a PostgreSQL ledger for LLM evaluations.

    Exit codes: 0 pass / ok, 1 fail or regression, 2 inconclusive, 3 any error.
    """


# -- db ------------------------------------------------------------------------------------------


@cli.group("db")
def db_group():
    """Start, stop and migrate the database."""


@db_group.command("up")
def db_up():
    """Start the embedded PostgreSQL and print its DSN."""
    from .embedded import EmbeddedServer

    server = EmbeddedServer()
    click.echo(server.start())


@db_group.command("down")
def db_down():
    """Stop the embedded PostgreSQL."""
    from .embedded import EmbeddedServer

    stopped = EmbeddedServer().stop()
    click.echo("stopped" if stopped else "not running")


@db_group.command("migrate")
@database_option
def db_migrate():
    """Apply pending migrations (safe to run twice, or twice at once)."""
    from .migrate import migrate

    applied = migrate(db.database_url())
    for migration_id in applied:
        click.echo(f"applied {migration_id}")
    if not applied:
        click.echo("up to date")


@db_group.command("status")
@database_option
def db_status():
    """List applied and pending migrations."""
    from .migrate import status

    state = status(db.database_url())
    for migration_id in state.applied:
        click.echo(f"applied  {migration_id}")
    for migration_id in state.pending:
        click.echo(f"pending  {migration_id}")


# -- demo and doctor ---------------------------------------------------------------------------


@cli.command("demo")
@database_option
def demo_command():
    """Run the main job end to end and print what the database decided."""
    from . import demo

    demo.run()


@cli.command("doctor")
@database_option
def doctor_command():
    """Check the database: reachable, migrated, roles, guards, event triggers.

    Exit 0 when every check passes (warnings allowed), 1 when one fails, 3 when the database
    cannot be reached.
    """
    from .doctor import diagnose

    findings = diagnose(db.database_url())
    for finding in findings:
        click.echo(f"{finding.level:4}  {finding.check}: {finding.detail}")
    sys.exit(1 if any(f.level == "fail" for f in findings) else 0)


from . import ledger_cli  # noqa: E402  (its commands use the shared options above)

for _command in ledger_cli.COMMANDS:
    cli.add_command(_command)


# -- capture and export (runner/evalledger/capture_cli.py) -----------------------------------

from .capture_cli import capture_group, export_command  # noqa: E402

cli.add_command(capture_group)
cli.add_command(export_command)

from .takes_cli import corpus_group, regress_command, replay_command, run_group, trend_command  # noqa: E402

cli.add_command(run_group)
cli.add_command(replay_command)
cli.add_command(trend_command)
cli.add_command(regress_command)
cli.add_command(corpus_group)


def main() -> None:
    """Console-script entry point."""
    cli()


if __name__ == "__main__":  # pragma: no cover
    main()
