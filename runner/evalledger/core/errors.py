"""Errors a person can act on, and the exit codes the CLI gives them."""

# Exit codes: 0, 1 and 2 are verdicts (pass / fail or regression / inconclusive);
# every error is 3 so CI never mistakes a broken run for a verdict.
EXIT_OK = 0
EXIT_FAIL = 1
EXIT_INCONCLUSIVE = 2
EXIT_ERROR = 3


class EvalledgerError(Exception):
    """A user-facing error: the CLI prints it as one line on stderr and exits 3."""

    exit_code = EXIT_ERROR

    def format_message(self) -> str:
        """The one line a person reads."""
        return str(self)


class DatabaseRefusal(EvalledgerError):
    """A statement the database refused, as one line, keeping what a caller turns into a message of
    its own: the SQLSTATE and the constraint it names (psycopg's diag), never the text."""

    def __init__(self, message: str, sqlstate: str | None = None, constraint: str | None = None) -> None:
        super().__init__(message)
        self.sqlstate = sqlstate
        self.constraint = constraint
