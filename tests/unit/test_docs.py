"""What the README and docs/ name is what the repository has: the CLI reference is the commands'
own help, every import path and module named imports, every file path and link leads somewhere,
and every shell example either runs (tests/e2e/test_examples.py) or says why not."""

from __future__ import annotations

import difflib
import importlib
import importlib.util
import re
from pathlib import Path

import click
import pytest

from evalledger.cli import cli
from tests.pages import OTHER_SHELLS, ROOT, blocks, markers, on_embedded, pages, run_after

CLI_PAGE = ROOT / "docs" / "cli.md"
PACKAGE = ROOT / "runner" / "evalledger"


def _rel(page: Path) -> str:
    return page.relative_to(ROOT).as_posix()


def _text(page: Path) -> str:
    return page.read_text("utf-8")


def _walk(command=cli, path=("evalledger",)):
    yield path, command
    if isinstance(command, click.Group):
        for name, sub in sorted(command.commands.items()):
            yield from _walk(sub, (*path, name))


# -- the CLI reference ------------------------------------------------------------------------------


def _regenerated(tmp_path: Path) -> str:
    """docs/cli.md as `make docs` (cog -r docs/cli.md) would write it now."""
    from cogapp import Cog

    out = tmp_path / "cli.md"
    status = Cog().main(["cog", "-o", str(out), str(CLI_PAGE)])
    assert status == 0, f"cog failed on {_rel(CLI_PAGE)} (exit {status})"
    return out.read_text("utf-8")


def test_the_cli_reference_is_the_commands_own_help(tmp_path):
    current, fresh = _text(CLI_PAGE), _regenerated(tmp_path)
    if current != fresh:
        diff = "".join(list(difflib.unified_diff(current.splitlines(True), fresh.splitlines(True),
                                                 "docs/cli.md", "regenerated", n=1))[:40])
        pytest.fail("docs/cli.md is stale (a command or its help changed): run `make docs` "
                    f"(which runs `cog -r docs/cli.md`) and commit docs/cli.md\n{diff}", pytrace=False)


def test_the_cli_reference_has_every_command_and_subcommand():
    text = _text(CLI_PAGE)
    headings = set(re.findall(r"^### (evalledger.*)$", text, re.MULTILINE))
    tree = {" ".join(path) for path, _ in _walk()}
    # Not vacuous: the tree reaches nested commands of every suite.
    assert {"evalledger run takes-quality", "evalledger review score", "evalledger db migrate"} <= tree
    assert headings == tree
    for path, command in _walk():
        anchor = "-".join(path)
        assert f"](#{anchor})" in text or path == ("evalledger",), f"the index does not link {anchor}"


# -- the examples' markers --------------------------------------------------------------------------


@pytest.mark.parametrize("page", pages(), ids=_rel)
def test_every_shell_example_runs_or_says_why_not(page):
    found = blocks(page)
    for block in found:
        assert block.info not in OTHER_SHELLS, (
            f"{block.where}: a shell example is fenced `sh` (so the tests run it), not `{block.info}`")
        if block.marker and block.marker.startswith("<!-- not run:"):
            assert block.info == "sh", f"{block.where}: `not run` marks a `sh` block only"
            assert block.not_run and len(block.not_run) > 10, f"{block.where}: say why it is not run"
        if block.output_of:
            assert block.info == "", f"{block.where}: `output of` marks a plain block (its output)"
            assert block.output_of.startswith("evalledger "), f"{block.where}: output of an evalledger command"
    attached = {block.marker for block in found if block.marker}
    for line, text in markers(page):
        if not text.startswith(("<!-- examples run after:", "<!-- examples run on:")):
            assert text in attached, f"{_rel(page)}:{line}: a marker belongs on the line right above a block"
    run_after(page)  # at most one per page
    on_embedded(page)  # at most one per page, and only the one there is


def test_the_pages_have_examples_that_run():
    runnable = {_rel(page): sum(block.runs for block in blocks(page)) for page in pages()}
    # Not vacuous: each reference page and the README run examples of their own.
    for page in ("README.md", "docs/brain-eval.md", "docs/takes-quality.md", "docs/work-quality.md",
                 "docs/capture.md", "docs/database.md", "docs/cli.md", "docs/backup.md"):
        assert runnable.get(page, 0) >= 1, f"{page}: no example runs"
    # The backups, restores and replicas run on an embedded server of their own, as a reader's do.
    assert on_embedded(ROOT / "docs" / "backup.md")


def test_no_two_pages_create_the_same_reviewer_role():
    """Roles are cluster-wide: pages whose examples run side by side must not share one."""
    from tests.e2e.test_examples import reviewer_roles

    seen: dict[str, str] = {}
    for page in pages():
        for role in reviewer_roles(page):
            assert role not in seen, f"{_rel(page)} and {seen[role]} both create the reviewer role {role}"
            seen[role] = _rel(page)
    assert seen  # not vacuous: the pages do create reviewers


# -- names: import paths, modules, file paths, links ------------------------------------------------

_FROM_IMPORT = re.compile(r"\bfrom[ \t]+(evalledger(?:\.\w+)*)[ \t]+import[ \t]+(?:\(([^)]*)\)|([\w \t,]+))")
_IMPORT = re.compile(r"^\s*import\s+(evalledger(?:\.\w+)*)", re.MULTILINE)
# evalledger.x.y in prose or code, not inside a path (runner/evalledger/...) or a file name (~/.evalledger).
_DOTTED = re.compile(r"(?<![\w/.-])evalledger(?:\.\w+)+")
_PYTHON_M = re.compile(r"\bpython -m ([\w.]+)")
_TOP = {p.stem for p in PACKAGE.iterdir() if p.suffix == ".py" or (p / "__init__.py").exists()}


def _all_text() -> str:
    return "\n".join(_text(page) for page in pages())


def python_names() -> list[str]:
    """Every `evalledger...` import path and dotted name the pages name that is Python (its first
    part is a module or package of evalledger; the others name SQL objects in the schema)."""
    text = _all_text()
    names = set()
    for module, bracketed, imported in _FROM_IMPORT.findall(text):
        names.update(f"{module}.{name.split(' as ')[0].strip()}" for name in (bracketed or imported).split(",")
                     if name.strip())
    names.update(_IMPORT.findall(text))
    names.update(n for n in _DOTTED.findall(text) if n.split(".")[1] in _TOP)
    return sorted(names)


def sql_names() -> list[str]:
    """Every `evalledger.name` the pages name that is not Python: a relation or function of the schema."""
    return sorted({n for n in _DOTTED.findall(_all_text()) if n.split(".")[1] not in _TOP})


def _resolve(name: str):
    """The object name names: its longest importable module, then attributes."""
    parts = name.split(".")
    for cut in range(len(parts), 0, -1):
        module = ".".join(parts[:cut])
        try:
            spec = importlib.util.find_spec(module)
        except ModuleNotFoundError:  # a parent that is a module, not a package
            spec = None
        if spec is not None:
            found = importlib.import_module(module)
            for attribute in parts[cut:]:
                found = getattr(found, attribute)
            return found
    raise ModuleNotFoundError(name)


def test_the_pages_name_the_stable_import_paths():
    names = python_names()
    # Not vacuous: the collection finds what the capture page tells applications to import.
    assert {"evalledger.capture.capture_candidate", "evalledger.scrub.scrub_pii"} <= set(names)
    assert "evalledger.eval_candidates" in sql_names()


@pytest.mark.parametrize("name", python_names())
def test_every_import_path_the_pages_name_imports(name):
    assert _resolve(name) is not None


def test_the_scrubber_keeps_its_import_path():
    """evalledger.scrub is the capture suite's scrubber (evalledger.capture's own test is in
    test_package_layout.py)."""
    from evalledger.scrub import scrub_pii
    from evalledger.suites.capture.scrub import scrub_pii as suite_scrub

    assert scrub_pii is suite_scrub
    assert scrub_pii("mail jane@example.com") == "mail [REDACTED]"


@pytest.mark.parametrize("module", sorted(set(_PYTHON_M.findall(_all_text()))))
def test_every_python_dash_m_module_exists(module):
    assert importlib.util.find_spec(module) is not None, f"python -m {module}: no such module"


# A path in backticks that starts at a folder of the repository, or of the package (core/...).
_PATH = re.compile(r"`((?:runner|migrations|triggers|sql|tests|bench|docs|\.ci|core|judges|suites|web)/[^`\s]*)`")
_PACKAGE_FOLDERS = ("core", "judges", "suites", "web")


def named_paths() -> list[tuple[str, str]]:
    found = set()
    for page in pages():
        for match in _PATH.finditer(_text(page)):
            found.add((_rel(page), match.group(1)))
    return sorted(found)


@pytest.mark.parametrize("page,path", named_paths())
def test_every_file_path_the_pages_name_exists(page, path):
    base = PACKAGE if path.split("/")[0] in _PACKAGE_FOLDERS else ROOT
    pattern = re.sub(r"<[^>]+>", "*", path).rstrip("/")  # <suite>: any
    assert list(base.glob(pattern)), f"{page} names `{path}`, which is not in the repository"


def _anchors(page: Path) -> set[str]:
    """GitHub's anchors for the headings of page."""
    anchors, seen = set(), {}
    fenced = False
    for line in _text(page).splitlines():
        if line.startswith("```"):
            fenced = not fenced
        if fenced or not line.startswith("#"):
            continue
        title = line.lstrip("#").strip().lower()
        slug = re.sub(r"[^\w\- ]", "", title).replace(" ", "-")
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        anchors.add(slug if count == 0 else f"{slug}-{count}")
    return anchors


def links() -> list[tuple[str, str]]:
    found = set()
    for page in pages():
        prose = re.sub(r"<!--.*?-->", "", _text(page), flags=re.DOTALL)  # not the generator's code
        for target in re.findall(r"\]\(([^)\s]+)\)", prose):
            if not re.match(r"[a-z]+:", target):
                found.add((_rel(page), target))
    return sorted(found)


@pytest.mark.parametrize("page,target", links())
def test_every_link_leads_somewhere(page, target):
    path, _, anchor = target.partition("#")
    linked = (ROOT / page).parent / path if path else ROOT / page
    assert linked.exists(), f"{page} links {target}: no such file"
    if anchor and linked.suffix == ".md":
        assert anchor in _anchors(linked), f"{page} links {target}: no such heading in {path or page}"
