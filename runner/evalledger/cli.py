"""The evalledger command line: the root group, the error edge, and every suite's commands."""

from __future__ import annotations

import inspect
import re
import sys

import click
import psycopg

from . import __version__
from .core import db
from .core.errors import EXIT_ERROR, EvalledgerError
from .core.options import database_option
from .core.output import paint


class LedgerGroup(click.Group):
    """A group whose usage errors exit 3, like every other error, not click's 2.

    This is the one place where the library's exceptions become messages and exit codes.
    """

    def main(self, args=None, *rest, **kwargs):
        args = list(sys.argv[1:] if args is None else args)
        try:
            _check_text(args)
            return super().main(args, *rest, **{**kwargs, "standalone_mode": False})
        except click.exceptions.Abort:
            _fail("aborted")
        except click.exceptions.NoArgsIsHelpError as exc:
            # A group named without a subcommand: its overview, as `evalledger` alone prints it.
            click.echo(exc.ctx.get_help())
            sys.exit(0)
        except click.UsageError as exc:
            where = exc.ctx.command_path.partition(" ")[2] if exc.ctx else ""
            _fail(f"{where + ': ' if where else ''}{exc.format_message()}")
        except click.ClickException as exc:
            exc.show()
            sys.exit(exc.exit_code)
        except EvalledgerError as exc:
            _fail(str(_read_only(exc) or exc), exc.exit_code)
        except psycopg.Error as exc:
            _fail(str(_read_only(exc) or db.explain(exc)))
        except BrokenPipeError:
            sys.exit(0)


    def make_context(self, info_name, args, parent=None, **extra):
        ctx = super().make_context(info_name, list(args), parent=parent, **extra)
        # Help needs no home: `evalledger X --help` answers even when EVALLEDGER_HOME is wrong.
        ctx.meta["asks_for_help"] = any(arg in ("-h", "--help") for arg in args)
        return ctx


def _read_only(exc: Exception) -> EvalledgerError | None:
    """A write refused as read-only (SQLSTATE 25006): the error that says why (a standby, or sessions
    that start read-only) and what to do."""
    if getattr(exc, "sqlstate", None) != "25006":
        return None
    return db.read_only_refusal(db.database_url(start=False))


def _fail(message: str, code: int = EXIT_ERROR) -> None:
    """One line on stderr, 'evalledger: error: ' once (a message may already carry the prefix)."""
    for prefix in ("evalledger: error: ", "evalledger: "):
        message = message.removeprefix(prefix)
    click.echo(f"evalledger: {paint('error', 'red')}: {' '.join(message.split()) or 'failed'}", err=True)
    sys.exit(code)


def _check_text(args: list[str]) -> None:
    """Refuse an argument that is not UTF-8 text, naming it, before anything reads it.

    Python hands such bytes over as lone surrogates, which every later encode (to the database, to
    a file) would turn into a traceback.
    """
    for number, arg in enumerate(args, 1):
        try:
            arg.encode("utf-8")
        except UnicodeEncodeError:
            raw = arg.encode("utf-8", "surrogateescape")
            if arg.startswith("--") and "=" in arg:
                name, _, value = arg.partition("=")
                raw = value.encode("utf-8", "surrogateescape")
            elif number > 1 and args[number - 2].startswith("-"):
                name = args[number - 2]
            else:
                name = f"argument {number}"
            raise EvalledgerError(f"{name}: {str(raw)[1:]} is not UTF-8 text") from None


def _check_home() -> None:
    """EVALLEDGER_HOME must be a folder (or not exist yet): a file there is one line, not a traceback."""
    from .core.embedded import evalledger_home

    home = evalledger_home()
    for place in (home, *home.parents):
        if place.exists():
            if not place.is_dir():
                raise EvalledgerError(f"EVALLEDGER_HOME={home}: {place} is a file, not a folder")
            return


@click.group(cls=LedgerGroup, invoke_without_command=True,
             context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="evalledger", help="Print the version and exit.")
@click.option("--database-url", metavar="URL",
              help="PostgreSQL 14+ to use instead of the embedded server (default: $DATABASE_URL); "
                   "also accepted after any command.")
@click.pass_context
def cli(ctx, database_url):
    """evalledger: a PostgreSQL ledger for LLM evaluations.

    Exit codes: 0 pass / ok, 1 fail or regression, 2 inconclusive, 3 any error.
    """
    if ctx.invoked_subcommand is None:
        click.echo(ctx.get_help())
        return
    if not ctx.meta.get("asks_for_help"):
        _check_home()
    if database_url is not None:
        db.use_database_url(database_url)


@cli.group("run")
def run_group():
    """Run an evaluation suite and record it in the ledger."""


@cli.command("demo")
@database_option
def demo_command():
    """Run the main job end to end and print what the database decided."""
    from . import demo

    demo.run()


def _first_sentence(help_text: str) -> str:
    """The first sentence of a command's help, whole: click's own short help cuts it at a width,
    or at the stop of an 'e.g.' (so `target` read "Register TARGET_ID (e.g.")."""
    paragraph = " ".join(inspect.cleandoc(help_text).split("\n\n")[0].split())
    guarded = re.sub(r"\b(e\.g|i\.e|etc)\.", lambda m: m.group(1).replace(".", "\0") + "\0", paragraph)
    sentence = re.split(r"(?<=[.!?])\s", guarded, maxsplit=1)[0]
    return sentence.replace("\0", ".")


def _whole_short_help(group: click.Group) -> None:
    for command in group.commands.values():
        if command.help and not command.short_help:
            command.short_help = _first_sentence(command.help)
        if isinstance(command, click.Group):
            _whole_short_help(command)


def _register() -> None:
    from .bi import cli as bi_cli
    from .core import sealing
    from .judges import cli as judges_cli
    from .ledger import cli as ledger_cli
    from .ops import cli as ops_cli
    from .suites.brain_eval import cli as brain_eval_cli
    from .suites.capture import cli as capture_cli
    from .suites.replay import cli as replay_cli
    from .suites.takes_quality import cli as takes_quality_cli
    from .suites.work_quality import cli as work_quality_cli
    from .web import cli as web_cli

    # The runner (core, judges, suites) never imports the ledger: a completing command's seal is the
    # ledger's, composed in here.
    sealing.register(ledger_cli.seal_after)
    for module in (ops_cli, brain_eval_cli, takes_quality_cli, capture_cli, work_quality_cli, replay_cli, web_cli,
                   ledger_cli, bi_cli, judges_cli):
        for command in module.COMMANDS:
            cli.add_command(command)
        for command in getattr(module, "RUN_COMMANDS", ()):
            run_group.add_command(command)
    _whole_short_help(cli)


_register()


def main() -> None:
    """Console-script entry point."""
    cli()


if __name__ == "__main__":  # pragma: no cover
    main()
