"""Every shell example of the README and of docs/*.md runs, page by page, in order, in one fresh
database per page (or on the embedded server of a fresh home, for a page that says its examples
assume it), as a reader would type it: `evalledger ...` in-process, `python -m ...` as a process,
`NAME=value evalledger ...`, `NAME=$(evalledger ...)`, `$NAME` and `"$NAME"`, `export`, `printf`,
`>`, `2>` and `<`.

How a page marks a block that is not run, shows a command's output, or names a command its
examples run after is in tests/pages.py; tests/unit/test_docs.py checks the markers themselves.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

import pytest
from psycopg import sql

from tests.cli import Result, run_cli
from tests.pages import ROOT, blocks, commands, on_embedded, pages, run_after

NO_KEYS = {k: "" for k in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY")}
REFUSED = re.compile(r"\s#\s*refused\b")
REVIEWER_ADDED = re.compile(r"\bevalledger reviewer add (\S+)")


def _rel(page: Path) -> str:
    return page.relative_to(ROOT).as_posix()


def reviewer_roles(page: Path) -> set[str]:
    """The login roles a page's examples create (roles are cluster-wide: dropped afterwards)."""
    return {m for b in blocks(page) if b.runs for line in b.lines for m in REVIEWER_ADDED.findall(line)}


def shown(lines: list[str], printed: str) -> str | None:
    """None when every non-blank line shown is a line printed, in order (`…` = any text); else
    the first line that is not."""
    printed_lines = iter(printed.splitlines())
    for line in (line for line in lines if line.strip()):
        pattern = re.compile(".*".join(re.escape(part) for part in line.split("…")))
        if not any(pattern.fullmatch(candidate) for candidate in printed_lines):
            return line
    return None


class Shell:
    """Just enough of sh for the pages: variables, $(...), export, printf, >, 2>, <, comments."""

    def __init__(self, env: dict, database_url: str | None, folder: Path):
        self.env, self.database_url, self.folder = env, database_url, folder
        self.vars: dict[str, str] = {}
        self.ran: list[tuple[str, object]] = []

    def expand(self, text: str) -> str:
        def value(m):
            name = m.group(1) or m.group(2)
            assert name in self.vars, f"{text}: ${name} is set by no example above it"
            return shlex.quote(self.vars[name])

        # "$NAME" is one word, as sh has it: its quotes give way to the quoting of its value.
        text = re.sub(r'"\$(\w+)"|"\$\{(\w+)\}"', value, text)
        return re.sub(r"\$(\w+)|\$\{(\w+)\}", value, text)

    def run_line(self, line: str):
        """Run one command line; its result (None for an assignment or a builtin)."""
        refused = bool(REFUSED.search(line))
        substituted = re.fullmatch(r"(\w+)=\$\((.*)\)\s*(#.*)?", line.strip())
        if substituted:
            result = self.evalledger(shlex.split(self.expand(substituted.group(2))), line)
            value = result.out.strip()
            assert value and "\n" not in value, f"{line}: $(...) printed {result.out!r}"
            self.vars[substituted.group(1)] = value
            return result
        words = shlex.split(self.expand(line), comments=True)
        if not words:
            return None
        if re.fullmatch(r"\w+=.*", words[0]) and len(words) == 1:
            name, _, value = words[0].partition("=")
            self.vars[name] = value
            self.ran.append((line, None))
            return None
        given_env = {}  # NAME=value before a command: its environment, for that command only
        while len(words) > 1 and re.fullmatch(r"\w+=.*", words[0]):
            name, _, value = words.pop(0).partition("=")
            given_env[name] = value
        if words[0] == "export":
            name, _, value = words[1].partition("=")
            # "Another PostgreSQL" is, here, this page's fresh database.
            if name == "DATABASE_URL":
                assert self.database_url, f"{line}: a page on the embedded server has no other database"
                value = self.database_url
            self.env[name] = value
            self.ran.append((line, None))
            return None
        assert words[0] in ("evalledger", "printf", "python"), \
            f"{line}: only evalledger commands, printf and python -m run here"
        out = err = given = None
        args = []
        it = iter(words[1:])
        for word in it:
            if word == ">":
                out = self.folder / next(it)
            elif word == "2>":
                err = self.folder / next(it)
            elif word == "<":
                given = (self.folder / next(it)).read_text()
            else:
                args.append(word)
        if words[0] == "printf":  # printf FORMAT ARG... > FILE, with %s and \n as sh has them
            fmt = args[0].replace("\\n", "\n")
            assert out is not None and fmt.count("%s") == 1, line
            out.write_text("".join(fmt % arg for arg in args[1:]))
            self.ran.append((line, None))
            return None
        if words[0] == "python":
            result = self.python(args, line, refused=refused, input=given, env=given_env)
        else:
            result = self.evalledger(["evalledger", *args], line, refused=refused, input=given, env=given_env)
        if out:
            out.write_text(result.out)
        if err:
            err.write_text(result.err)
        return result

    def evalledger(self, words: list[str], line: str, refused: bool = False, input: str | None = None,
                   env: dict | None = None):
        assert words[0] == "evalledger", line
        return self._judged(run_cli(*words[1:], env={**self.env, **(env or {})}, input=input), line, refused)

    def python(self, args: list[str], line: str, refused: bool = False, input: str | None = None,
               env: dict | None = None):
        """`python -m MODULE ...` as the reader runs it: a process of its own, this Python, in the folder."""
        assert args[:1] == ["-m"], f"{line}: python runs a module here (python -m ...)"
        done = subprocess.run([sys.executable, *args], cwd=self.folder, input=input, capture_output=True, text=True,
                              env={**os.environ, **self.env, **(env or {})}, timeout=300)
        return self._judged(Result(done.returncode, done.stdout, done.stderr), line, refused)

    def _judged(self, result: Result, line: str, refused: bool) -> Result:
        assert "Traceback" not in result.err, f"{line}\n{result.err}"
        if refused:
            # A refusal is exit 3 and one line that says why.
            assert result.code == 3, f"{line}\nexpected a refusal, got exit {result.code}\n{result.out}"
            assert result.err.startswith("evalledger: error: ") and result.err.count("\n") == 1, result.err
        else:
            # 0, 1 and 2 are verdicts; 3 is an error, which no example should end in.
            assert result.code in (0, 1, 2), f"{line}\nexit {result.code}\n{result.err}"
        self.ran.append((line, result))
        return result

    def output_of(self, command: str):
        """What command printed: the last command run, when it is that one, else a run of it now."""
        if self.ran and self.ran[-1][0].split(" #")[0].strip() == command and self.ran[-1][1] is not None:
            return self.ran[-1][1]
        result = self.run_line(command)
        assert result is not None, command
        return result


@pytest.fixture
def reader(request, tmp_path, monkeypatch):
    """A reader's shell in a fresh folder where the repository's runner/ is at hand, on the page's
    fresh database; the reviewer roles its examples create are dropped afterwards. A page on the
    embedded server gets a fresh home and no DATABASE_URL instead, and every embedded server its
    examples start is removed afterwards."""
    if on_embedded(request.param):
        yield from _on_embedded(monkeypatch)
        return
    dsn, admin = request.getfixturevalue("dsn"), request.getfixturevalue("admin")
    roles = sorted(reviewer_roles(request.param))
    existing = {r for (r,) in admin.execute("SELECT rolname FROM pg_roles WHERE rolname = ANY(%s)", (roles,))}
    folder = tmp_path / "work"
    folder.mkdir()
    (folder / "runner").symlink_to(ROOT / "runner")
    monkeypatch.chdir(folder)
    env = {"DATABASE_URL": dsn, "EVALLEDGER_HOME": str(tmp_path / "home"), **NO_KEYS}
    yield Shell(env, dsn, folder)
    for role in set(roles) - existing:
        admin.execute(sql.SQL("DROP ROLE IF EXISTS {}").format(sql.Identifier(role)))


def _on_embedded(monkeypatch):
    """A reader with no DATABASE_URL, in a folder the embedded server's system user can reach (as
    root it runs as a user of its own, and `db archive` writes from it into the reader's folder)."""
    from evalledger.core.embedded import EmbeddedServer

    folder = Path(tempfile.mkdtemp(prefix="evalledger-examples-"))
    os.chmod(folder, 0o711)
    (folder / "runner").symlink_to(ROOT / "runner")
    monkeypatch.chdir(folder)
    env = {"DATABASE_URL": "", "DATABASE_READ_URL": "", "EVALLEDGER_HOME": str(folder / "home"), **NO_KEYS}
    try:
        yield Shell(env, None, folder)
    finally:
        # Every home an example made (EVALLEDGER_HOME=..., a replica's folder) holds a lock file;
        # replicas go before the primary they stream from.
        homes = [Path(top) for top, _, files in os.walk(folder) if "pg.lock" in files]
        for home in sorted(homes, key=lambda h: h == folder / "home"):
            EmbeddedServer(home).remove()
        shutil.rmtree(folder, ignore_errors=True)


def _page_params():
    """Each page; one on the embedded server makes clusters of its own, as the backup tests do."""
    return [pytest.param(page, marks=[pytest.mark.slow] if on_embedded(page) else [], id=_rel(page))
            for page in pages()]


@pytest.mark.parametrize("reader", _page_params(), indirect=True)
def test_the_examples_of_a_page_run_in_order(reader, request):
    page = request.node.callspec.params["reader"]
    first = run_after(page)
    if first:
        reader.run_line(first)
    for block in blocks(page):
        if block.output_of:
            result = reader.output_of(block.output_of)
            missing = shown(block.lines, result.out)
            assert missing is None, (f"{block.where}: the page shows {missing!r}; "
                                     f"`{block.output_of}` printed:\n{result.out}")
        elif block.runs:
            for line in commands(block.lines):
                reader.run_line(line)
    # Every command of every block not marked `not run` ran: a line the shell could not read
    # failed above, and one it passed over would be missing here.
    expected = Counter(line for block in blocks(page) if block.runs for line in commands(block.lines)
                       if not line.lstrip().startswith("#"))
    assert expected - Counter(line for line, _ in reader.ran) == Counter()


def test_output_shown_must_be_output_printed():
    """Not vacuous: `shown` refuses a line the command never printed, and finds abridged ones."""
    assert shown(["  decision  fail"], "x\n  decision  fail\n") is None
    assert shown(["your turn: run … waits"], "your turn: run 1234 waits\n") is None
    assert shown(["  decision  pass"], "  decision  fail\n") == "  decision  pass"
    assert shown(["b", "a"], "a\nb\n") == "a"


def test_the_shell_reads_quoted_variables_and_a_commands_own_environment(tmp_path):
    """Not vacuous: "$NAME" stays one word whatever its value holds, and NAME=value before a
    command reaches that command alone."""
    shell = Shell({"EVALLEDGER_HOME": str(tmp_path / "home")}, None, tmp_path)
    shell.vars["URL"] = "postgresql://postgres@/evalledger?host=/x y&port=5432"
    assert shlex.split(shell.expand('--from "$URL" there')) == ["--from", shell.vars["URL"], "there"]
    assert shlex.split(shell.expand("--from ${URL}")) == ["--from", shell.vars["URL"]]
    asked = []
    shell.evalledger = lambda words, line, refused=False, input=None, env=None: asked.append((words, env))
    shell.run_line("EVALLEDGER_HOME=elsewhere evalledger doctor")
    assert asked == [(["evalledger", "doctor"], {"EVALLEDGER_HOME": "elsewhere"})]
    assert shell.env["EVALLEDGER_HOME"] == str(tmp_path / "home")
