"""Every shell example of the README runs, in order, against a fresh database, as a reader would
type it: `evalledger ...` in-process, `NAME=$(evalledger ...)`, `$NAME`, `export`, `printf`, `>`, `2>`.

A synopsis (a block with `[optional]` flags or `<placeholders>`) shows a command's shape, not an
example, and is not run. Any other block that cannot run here is listed in NOT_RUN with the reason;
a test fails when the README and that list disagree, so no example is left out unnoticed. Output
the README shows (the demo's) is checked against what the command prints.
"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import psycopg
import pytest
from psycopg import sql

from tests.cli import run_cli

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"

# Blocks that are not run, by their first line, and why.
NOT_RUN = {
    "make demo    # migrate the embedded PostgreSQL, run and review a brain-eval harness run, judge takes, capture queries":
        "make builds .venv and runs the whole test suite; `evalledger demo` (what `make demo` runs) is run below",
    "evalledger run work-quality --kind bot --name review-pr --task \"find the planted bug\" \\":
        "needs a git repository, a bot and a Go history of the reader's own",
}
# `[--flag]`, `[VALUE]`, `a|b` inside brackets, or `<placeholder>`: the notation of a synopsis.
SYNOPSIS = re.compile(r"\s\[[^\]]+\]|<[a-z][\w-]*>")
# Login roles the walkthrough creates; dropped afterwards when this test made them.
ROLES = ("alice", "bob")
NO_KEYS = {k: "" for k in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY")}


def blocks(text: str) -> list[tuple[str, list[str]]]:
    """(info string, lines) of every fenced block, in order."""
    found, info, lines = [], None, []
    for line in text.splitlines():
        if line.startswith("```"):
            if info is None:
                info, lines = line[3:].strip(), []
            else:
                found.append((info, lines))
                info = None
        elif info is not None:
            lines.append(line)
    return found


def commands(lines: list[str]) -> list[str]:
    """Shell lines with backslash continuations joined."""
    joined, pending = [], ""
    for line in lines:
        if line.rstrip().endswith("\\"):
            pending += line.rstrip()[:-1] + " "
            continue
        joined.append(pending + line)
        pending = ""
    return [c for c in joined if c.strip()]


def shell_blocks() -> list[list[str]]:
    return [lines for info, lines in blocks(README.read_text()) if info == "sh"]


def synopsis(lines: list[str]) -> bool:
    return any(SYNOPSIS.search(line.split(" #")[0]) for line in lines)


def runnable() -> list[list[str]]:
    return [lines for lines in shell_blocks() if lines[0] not in NOT_RUN and not synopsis(lines)]


def test_every_shell_block_runs_or_says_why_not():
    firsts = [lines[0] for lines in shell_blocks()]
    assert set(NOT_RUN) <= set(firsts), set(NOT_RUN) - set(firsts)
    assert not any(synopsis(lines) for lines in shell_blocks() if lines[0] in NOT_RUN)
    assert len(runnable()) >= 7
    assert synopsis(["evalledger review show <run-id> [EVAL-Q07] --as alice [--json]"])
    assert not synopsis(['evalledger run takes-quality --limit 100 --seed 7   # exit 0 [pass]'])


class Shell:
    """Just enough of sh for the README: variables, $(...), export, printf, > and 2>, comments."""

    def __init__(self, env: dict, database_url: str, folder: Path):
        self.env, self.database_url, self.folder = env, database_url, folder
        self.vars: dict[str, str] = {}
        self.ran: list[tuple[str, object]] = []

    def expand(self, text: str) -> str:
        return re.sub(r"\$(\w+)|\$\{(\w+)\}", lambda m: shlex.quote(self.vars[m.group(1) or m.group(2)]), text)

    def run_line(self, line: str) -> None:
        assignment = re.fullmatch(r"(\w+)=\$\((.*)\)\s*(#.*)?", line.strip())
        if assignment:
            result = self.evalledger(shlex.split(self.expand(assignment.group(2))), line)
            value = result.out.strip()
            assert value and "\n" not in value, f"{line}: $(...) printed {result.out!r}"
            self.vars[assignment.group(1)] = value
            return
        words = shlex.split(self.expand(line), comments=True)
        if not words:
            return
        if words[0] == "export":
            name, _, value = words[1].partition("=")
            # "Another PostgreSQL" is, here, this test's fresh database.
            self.env[name] = self.database_url if name == "DATABASE_URL" else value
            return
        assert words[0] in ("evalledger", "printf"), f"{line}: only evalledger commands and printf run here"
        out = err = None
        args = []
        it = iter(words[1:])
        for word in it:
            if word == ">":
                out = self.folder / next(it)
            elif word == "2>":
                err = self.folder / next(it)
            else:
                args.append(word)
        if words[0] == "printf":  # printf FORMAT ARG... > FILE, with %s and \n as sh has them
            fmt = args[0].replace("\\n", "\n")
            assert out is not None and fmt.count("%s") == 1, line
            out.write_text("".join(fmt % arg for arg in args[1:]))
            return
        result = self.evalledger(["evalledger", *args], line)
        if out:
            out.write_text(result.out)
        if err:
            err.write_text(result.err)

    def evalledger(self, words: list[str], line: str):
        assert words[0] == "evalledger", line
        result = run_cli(*words[1:], env=self.env)
        # 0, 1 and 2 are verdicts; 3 is an error, which no example should end in.
        assert result.code in (0, 1, 2), f"{line}\nexit {result.code}\n{result.err}"
        assert "Traceback" not in result.err, f"{line}\n{result.err}"
        self.ran.append((line, result))
        return result


@pytest.fixture
def reader(dsn, tmp_path, monkeypatch, admin):
    """A reader's shell in a fresh folder where the repository's runner/ is at hand."""
    existing = {r for (r,) in admin.execute("SELECT rolname FROM pg_roles WHERE rolname = ANY(%s)", (list(ROLES),))}
    folder = tmp_path / "work"
    folder.mkdir()
    (folder / "runner").symlink_to(ROOT / "runner")
    monkeypatch.chdir(folder)
    env = {"DATABASE_URL": dsn, "EVALLEDGER_HOME": str(tmp_path / "home"), **NO_KEYS}
    yield Shell(env, dsn, folder)
    for role in set(ROLES) - existing:
        admin.execute(sql.SQL("DROP ROLE IF EXISTS {}").format(sql.Identifier(role)))


def test_the_readme_runs_top_to_bottom(reader):
    shown_demo = next(lines for info, lines in blocks(README.read_text())
                      if info == "" and lines and lines[0].startswith("brain-eval (a 30-question harness run"))
    demo = reader.evalledger(["evalledger", "demo"], "evalledger demo  (what make demo runs)")
    for line in shown_demo:
        if line.strip():
            assert line in demo.out.splitlines(), f"the README shows {line!r}; the demo printed:\n{demo.out}"

    for lines in runnable():
        for line in commands(lines):
            reader.run_line(line)

    by_line = {line: result for line, result in reader.ran}
    # What the walkthrough promises: alice is a login role and a reviewer; her score and the decision.
    alice = next(r for line, r in reader.ran if line.startswith('evalledger reviewer add alice'))
    assert alice.out.startswith(("role alice: created (LOGIN, member of evalledger_reviewer)\n",
                                 "role alice: exists"))
    scored = next(r for line, r in reader.ran if line.startswith("evalledger review score $RUN_ID EVAL-Q07"))
    assert scored.out == "EVAL-Q07: does not pass\n"
    # Files the examples write are what they say.
    receipt = json.loads((reader.folder / "baseline.json").read_text())
    assert receipt["schema_version"] == 1 and receipt["judges"] == "recorded"
    assert (reader.folder / "week.log").read_text().startswith("export: ")
    imported = next(r for line, r in reader.ran if line == "evalledger capture import log.ndjson")
    assert imported.out == "imported log.ndjson: 1 row: 1 written, 0 already present, 0 failed\n"
    assert len(by_line) >= 30
