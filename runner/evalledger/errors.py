"""Errors a person can act on, and the exit codes the CLI gives them."""

import click

# Exit codes: 0, 1 and 2 are verdicts (pass / fail or regression / inconclusive);
# every error is 3 so CI never mistakes a broken run for a verdict.
EXIT_OK = 0
EXIT_FAIL = 1
EXIT_INCONCLUSIVE = 2
EXIT_ERROR = 3


class EvalledgerError(click.ClickException):
    """A user-facing error: one line on stderr, exit 3."""

    exit_code = EXIT_ERROR

    def show(self, file=None) -> None:
        click.echo(f"evalledger: error: {self.format_message()}", err=True, file=file)
