"""The README and the pages of docs/ as the tests read them: their fenced blocks and the markers
that say how a block is checked.

A fenced block whose info string is `sh` is an example: the tests run it (tests/e2e/test_examples.py).
Two HTML comments, invisible on the rendered page, say otherwise or more, each on the line right
above the block's opening fence:

    <!-- not run: REASON -->      the `sh` block below needs something of the reader's own (a
                                  repository, a network, API keys, a server left running); REASON
                                  says what, and the page's text should say it too
    <!-- output of: COMMAND -->   the plain block below is what COMMAND prints, abridged: the tests
                                  run COMMAND at that point of the page, and every line shown must
                                  be a line it printed, in order (`…` stands for any text)

A third, on a line of its own anywhere on a page, names a command that runs before the page's
first example, in the page's fresh database (the page's text says so too):

    <!-- examples run after: COMMAND -->

A fourth, also on a line of its own, says the page's examples assume no DATABASE_URL: they run on
the embedded server of a fresh EVALLEDGER_HOME, as a reader's would (backups, restores and
replicas copy a whole server, not a database), and every embedded server they start is removed
afterwards (the page's text says they assume the embedded server):

    <!-- examples run on: the embedded server -->

Inside an example, a command whose comment begins `# refused` shows a refusal: it must exit 3 with
one line on stderr. Every other command must exit 0, 1 or 2 (a verdict), never 3.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

NOT_RUN = re.compile(r"^<!-- not run: (?P<reason>.*?) -->$")
OUTPUT_OF = re.compile(r"^<!-- output of: (?P<command>.*?) -->$")
RUN_AFTER = re.compile(r"^<!-- examples run after: (?P<command>.*?) -->$")
ON_EMBEDDED = "<!-- examples run on: the embedded server -->"
MARKER = re.compile(r"^<!-- (not run|output of|examples run after|examples run on):")
# Info strings that would make a shell example nobody runs: examples are `sh`.
OTHER_SHELLS = {"bash", "shell", "console", "zsh", "shell-session", "sh-session", "terminal"}


@dataclass
class Block:
    """One fenced block of a page."""

    page: Path
    line: int  # of the opening fence, counting from 1
    info: str
    lines: list[str]
    marker: str | None  # the marker comment on the line above the fence, if any

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"

    @property
    def not_run(self) -> str | None:
        found = NOT_RUN.match(self.marker or "")
        return found and found["reason"].strip()

    @property
    def output_of(self) -> str | None:
        found = OUTPUT_OF.match(self.marker or "")
        return found and found["command"].strip()

    @property
    def runs(self) -> bool:
        return self.info == "sh" and self.not_run is None


def pages() -> list[Path]:
    """Every page whose examples run: the README and docs/*.md."""
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def blocks(page: Path) -> list[Block]:
    """Every fenced block of page, in order."""
    found: list[Block] = []
    opened: Block | None = None
    previous = ""
    for number, line in enumerate(page.read_text("utf-8").splitlines(), 1):
        if opened is None and line.startswith("```"):
            marker = previous if MARKER.match(previous) else None
            opened = Block(page, number, line[3:].strip(), [], marker)
        elif opened is not None and line.rstrip() == "```":
            found.append(opened)
            opened = None
        elif opened is not None:
            opened.lines.append(line)
        previous = line.strip()
    assert opened is None, f"{page.relative_to(ROOT)}:{opened.line}: a fenced block is never closed"
    return found


def markers(page: Path) -> list[tuple[int, str]]:
    """(line, text) of every marker comment on page."""
    return [(number, line.strip()) for number, line in enumerate(page.read_text("utf-8").splitlines(), 1)
            if MARKER.match(line.strip())]


def run_after(page: Path) -> str | None:
    """The command the page's examples run after, if it names one."""
    found = [RUN_AFTER.match(text) for _, text in markers(page)]
    commands = [m["command"].strip() for m in found if m]
    assert len(commands) <= 1, f"{page.relative_to(ROOT)}: more than one `examples run after`"
    return commands[0] if commands else None


def on_embedded(page: Path) -> bool:
    """Whether the page's examples run on the embedded server of a fresh home (no DATABASE_URL)."""
    found = [text for _, text in markers(page) if text.startswith("<!-- examples run on:")]
    assert found in ([], [ON_EMBEDDED]), f"{page.relative_to(ROOT)}: write `{ON_EMBEDDED}`, once"
    return bool(found)


def commands(lines: list[str]) -> list[str]:
    """Shell lines with backslash continuations joined, blank lines left out."""
    joined, pending = [], ""
    for line in lines:
        if line.rstrip().endswith("\\"):
            pending += line.rstrip()[:-1] + " "
            continue
        joined.append(pending + line)
        pending = ""
    return [c for c in joined if c.strip()]
