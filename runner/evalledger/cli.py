"""The evalledger command line: the root group, the error edge, and every suite's commands."""

from __future__ import annotations

import sys

import click
import psycopg

from .core import db
from .core.errors import EXIT_ERROR, EvalledgerError
from .core.options import database_option


class LedgerGroup(click.Group):
    """A group whose usage errors exit 3, like every other error, not click's 2.

    This is the one place where the library's exceptions become messages and exit codes.
    """

    def main(self, *args, **kwargs):
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
        except EvalledgerError as exc:
            click.echo(f"evalledger: error: {exc}", err=True)
            sys.exit(exc.exit_code)
        except psycopg.Error as exc:
            click.echo(f"evalledger: error: {db.explain(exc)}", err=True)
            sys.exit(EXIT_ERROR)
        except BrokenPipeError:
            sys.exit(0)


@click.group(cls=LedgerGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="evalledger")
def cli():
    """evalledger: a PostgreSQL ledger for LLM evaluations.

    Exit codes: 0 pass / ok, 1 fail or regression, 2 inconclusive, 3 any error.
    """


@cli.group("run")
def run_group():
    """Run an evaluation suite and record it in the ledger."""


@cli.command("demo")
@database_option
def demo_command():
    """Run the main job end to end and print what the database decided."""
    from . import demo

    demo.run()


def _register() -> None:
    from .core import cli as core_cli
    from .suites.brain_eval import cli as brain_eval_cli
    from .suites.capture import cli as capture_cli
    from .suites.takes_quality import cli as takes_quality_cli
    from .suites.work_quality import cli as work_quality_cli

    for module in (core_cli, brain_eval_cli, takes_quality_cli, capture_cli, work_quality_cli):
        for command in module.COMMANDS:
            cli.add_command(command)
        for command in getattr(module, "RUN_COMMANDS", ()):
            run_group.add_command(command)


_register()


def main() -> None:
    """Console-script entry point."""
    cli()


if __name__ == "__main__":  # pragma: no cover
    main()
