"""Every shell example of the README and of docs/*.md runs, page by page, in order, in one fresh
database per page, as a reader would type it: `evalledger ...` in-process, `NAME=$(evalledger ...)`,
`$NAME`, `export`, `printf`, `>`, `2>` and `<`.

How a page marks a block that is not run, shows a command's output, or names a command its
examples run after is in tests/pages.py; tests/unit/test_docs.py checks the markers themselves.
"""

from __future__ import annotations

import re
import shlex
from collections import Counter
from pathlib import Path

import pytest
from psycopg import sql

from tests.cli import run_cli
from tests.pages import ROOT, blocks, commands, pages, run_after

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

    def __init__(self, env: dict, database_url: str, folder: Path):
        self.env, self.database_url, self.folder = env, database_url, folder
        self.vars: dict[str, str] = {}
        self.ran: list[tuple[str, object]] = []

    def expand(self, text: str) -> str:
        def value(m):
            name = m.group(1) or m.group(2)
            assert name in self.vars, f"{text}: ${name} is set by no example above it"
            return shlex.quote(self.vars[name])

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
        if words[0] == "export":
            name, _, value = words[1].partition("=")
            # "Another PostgreSQL" is, here, this page's fresh database.
            self.env[name] = self.database_url if name == "DATABASE_URL" else value
            self.ran.append((line, None))
            return None
        assert words[0] in ("evalledger", "printf"), f"{line}: only evalledger commands and printf run here"
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
        result = self.evalledger(["evalledger", *args], line, refused=refused, input=given)
        if out:
            out.write_text(result.out)
        if err:
            err.write_text(result.err)
        return result

    def evalledger(self, words: list[str], line: str, refused: bool = False, input: str | None = None):
        assert words[0] == "evalledger", line
        result = run_cli(*words[1:], env=self.env, input=input)
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
def reader(request, dsn, tmp_path, monkeypatch, admin):
    """A reader's shell in a fresh folder where the repository's runner/ is at hand, on the page's
    fresh database; the reviewer roles its examples create are dropped afterwards."""
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


@pytest.mark.parametrize("reader", pages(), ids=_rel, indirect=True)
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
