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


def read_user_text(path, what: str = "file") -> str:
    """A file the user named, or an EvalledgerError that names it and says what went wrong."""
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise EvalledgerError(f"{path}: no such {what}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise EvalledgerError(f"{path}: cannot read: {exc}") from None


def load_user_json(path, what: str = "file"):
    """A JSON file the user named; a syntax error names the file and line."""
    import json

    try:
        return json.loads(read_user_text(path, what))
    except json.JSONDecodeError as exc:
        raise EvalledgerError(f"{path}:{exc.lineno}: not JSON: {exc.msg}") from None
