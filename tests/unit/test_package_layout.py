"""The package's house rules, checked on its source: SQL only in named-query files, the names a
module asks for exist, the packages import in one direction (the runner never imports the other
products), the judge layer imports in one direction, only CLI edges use click."""

from __future__ import annotations

import ast
import functools
import importlib
import importlib.util
import re
import sys
from pathlib import Path

import pytest

from evalledger.core import queries
from evalledger.core.paths import database_root

PACKAGE = Path(importlib.import_module("evalledger").__file__).parent
DATABASE = database_root()
MODULES = sorted(p for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts)
# A string that starts like an SQL statement.
_SQL_START = re.compile(r"^\s*(SELECT|INSERT INTO|UPDATE|DELETE FROM|WITH|COPY|SET|RESET|CREATE|DROP|ALTER|GRANT|TRUNCATE)\s")
# Modules that speak to a person (and a suite's cli/ package): the only ones that may import click.
CLICK_EDGES = {"cli.py", "demo.py", "options.py"}


@functools.lru_cache(maxsize=None)
def _parse(text: str) -> ast.Module:
    return ast.parse(text)


def _parsed(path: Path) -> ast.Module:
    """The module's syntax tree, parsed once per text for every test here (they only read it)."""
    return _parse(path.read_text("utf-8"))


def _rel(path: Path) -> str:
    return path.relative_to(PACKAGE).as_posix()


def _composed(tree: ast.AST) -> set[int]:
    """ids of the string constants passed straight to psycopg.sql.SQL (composition, allowed)."""
    ids = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "SQL":
            ids.update(id(arg) for arg in node.args if isinstance(arg, ast.Constant))
    return ids


def test_no_sql_statement_is_written_inline_in_python():
    inline = []
    for path in MODULES:
        tree = _parsed(path)
        allowed = _composed(tree)
        docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                      if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                      and node.body and isinstance(node.body[0], ast.Expr)}
        for node in ast.walk(tree):
            if (isinstance(node, ast.Constant) and isinstance(node.value, str) and _SQL_START.match(node.value)
                    and id(node) not in allowed and id(node) not in docstrings):
                inline.append(f"{_rel(path)}:{node.lineno}: {node.value.strip()[:60]!r}")
    assert inline == [], "SQL belongs in the suite's sql/<suite>/queries.sql as a named query"


def _queries_files() -> list[Path]:
    return sorted(DATABASE.glob("sql/*/queries.sql"))


def _db_rel(path: Path) -> str:
    return path.relative_to(DATABASE).as_posix()


@pytest.mark.parametrize("path", _queries_files(), ids=_db_rel)
def test_every_named_query_says_what_it_does(path):
    text = path.read_text("utf-8")
    parsed = queries.parse(text)
    assert parsed, f"{_db_rel(path)}: no -- name: blocks"
    names = re.findall(r"^-- name: (\w+)\s*$", text, re.MULTILINE)
    assert len(names) == len(set(names)), f"{_db_rel(path)}: a name is used twice"
    for name, body in parsed.items():
        first = body.splitlines()[0]
        assert first.startswith("-- ") and len(first) > 10, f"{_db_rel(path)}: query {name} has no comment line"
        assert any(not line.startswith("--") and line.strip() for line in body.splitlines()), name


def _own_queries(path: Path) -> Path:
    """The queries file of the suite (or core, or web) a module is in: sql/<suite>/queries.sql."""
    parts = path.relative_to(PACKAGE).parts
    return DATABASE / "sql" / (parts[1] if parts[0] == "suites" else parts[0]) / "queries.sql"


@pytest.mark.parametrize("path", [p for p in MODULES if re.search(r"QUERIES\[|queries\.get\(|\bQ\[", p.read_text())
                                  and p != PACKAGE / "core" / "queries.py"],
                         ids=lambda p: _rel(p))
def test_every_query_a_module_asks_for_exists(path):
    text = path.read_text("utf-8")
    own = _own_queries(path)
    core = DATABASE / "sql" / "core" / "queries.sql"
    asked_own = set(re.findall(r"\b(?:QUERIES|Q)\[\"(\w+)\"\]", text))
    asked_core = set(re.findall(r"queries\.get\(\"(\w+)\"\)", text))
    if asked_own:
        assert own.exists(), f"{_rel(path)} asks for named queries but {_db_rel(own)} does not exist"
        assert asked_own <= set(queries.parse(own.read_text("utf-8"))), asked_own - set(queries.parse(own.read_text()))
    assert asked_core <= set(queries.parse(core.read_text("utf-8")))


def test_the_capture_batch_insert_lists_exactly_the_row_columns():
    from evalledger.suites.capture.rows import COLUMNS
    from evalledger.suites.capture.writer import QUERIES

    statement = QUERIES["insert_candidates"]
    listed = re.search(r"eval_candidates \(([^)]*)\)", statement).group(1)
    selected = re.search(r"SELECT (.*?)\s+FROM json_populate_recordset", statement, re.DOTALL).group(1)
    for columns in (listed, selected):
        assert tuple(c.strip().removeprefix("r.") for c in columns.split(",")) == COLUMNS


def test_only_cli_edges_import_click():
    users = []
    for path in MODULES:
        if path.name in CLICK_EDGES or path.parent.name == "cli":
            continue
        for node in ast.walk(_parsed(path)):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import) else
                     [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            if any(n == "click" or n.startswith("click.") for n in names):
                users.append(_rel(path))
    assert users == [], "library modules raise EvalledgerError; only cli.py and the demos speak to people"


# -- the judge layer: specs <- pricing <- money <- context <- limits <- sdks <- providers <- options, panel; repair alone --

JUDGE_ORDER = ("repair", "specs", "pricing", "money", "context", "limits", "sdks", "providers", "batch", "options",
               "panel", "cli")
SDKS = ("openai", "anthropic", "google", "httpx2")


def _judge_imports(name: str) -> set[str]:
    """The judges modules one judges module imports (at any depth of its code)."""
    tree = _parsed(PACKAGE / "judges" / f"{name}.py")
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level == 1 and module:
                found.add(module.split(".")[0])
            elif node.level == 1:
                found.update(a.name for a in node.names)
            elif module.startswith("evalledger.judges."):
                found.add(module.split(".")[2])
            elif module == "evalledger.judges":
                found.update(a.name for a in node.names)
        elif isinstance(node, ast.Import):
            found.update(a.name.split(".")[2] for a in node.names if a.name.startswith("evalledger.judges."))
    return found & set(JUDGE_ORDER)


def test_the_judge_layer_imports_in_one_direction():
    assert {p.stem for p in (PACKAGE / "judges").glob("*.py")} - {"__init__"} == set(JUDGE_ORDER)
    for rank, name in enumerate(JUDGE_ORDER):
        later = _judge_imports(name) & set(JUDGE_ORDER[rank:])
        assert later == set(), f"judges/{name}.py imports {sorted(later)}, which come after it"


def test_the_judge_layer_loads_no_provider_sdk():
    """Every judges module stays cheap to import: the SDKs (seconds of start-up) load only when a
    run first calls their provider (sdks.py)."""
    saved = dict(sys.modules)
    try:
        for name in list(sys.modules):
            if name.split(".")[0] in SDKS or name.startswith("evalledger.judges"):
                del sys.modules[name]
        for name in JUDGE_ORDER:
            importlib.import_module(f"evalledger.judges.{name}")
        loaded = sorted(n for n in sys.modules if n.split(".")[0] in SDKS)
        assert loaded == []
        # Not vacuous: each SDK is installed, so an import of it would have shown above.
        assert all(importlib.util.find_spec(sdk) is not None for sdk in SDKS)
    finally:
        sys.modules.clear()
        sys.modules.update(saved)


def test_the_application_capture_api_keeps_its_import_path():
    import evalledger.capture as public
    from evalledger.suites.capture import api

    assert public.__all__ == ["capture_candidate", "close", "configure", "counts", "flush"]
    assert all(getattr(public, name) is getattr(api, name) for name in public.__all__)


# -- the house: the database side at the top, one home per suite on each side --------------------------

_TRIGGER_FUNCTION = re.compile(r"\bRETURNS\s+(event_)?trigger\b", re.IGNORECASE)
CHECKOUT = PACKAGE.parent.parent
DATABASE_FOLDERS_WITH_SUITES = ("triggers", "sql")


def _database_files(folder: str) -> list[Path]:
    return sorted(DATABASE.glob(f"{folder}/*/*.sql"))


@pytest.mark.parametrize("path", _database_files("triggers"), ids=_db_rel)
def test_a_file_in_triggers_defines_a_function_that_runs_as_a_trigger(path):
    assert _TRIGGER_FUNCTION.search(path.read_text("utf-8")), (
        f"{_db_rel(path)} defines no trigger function: a function that does not run as a trigger goes in sql/")


@pytest.mark.parametrize("path", _database_files("sql"), ids=_db_rel)
def test_a_file_in_sql_defines_no_trigger_function(path):
    assert not _TRIGGER_FUNCTION.search(path.read_text("utf-8")), (
        f"{_db_rel(path)} defines a trigger function: a function that runs as a trigger goes in triggers/")


def test_each_suite_has_one_home_on_each_side():
    suites = {p.name for p in (PACKAGE / "suites").iterdir() if (p / "__init__.py").exists()}
    # A package beside the suites (core, web, ledger) may keep its named queries in sql/<package>/.
    packages = {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").exists()} - {"suites"}
    for folder in ("triggers", "sql"):
        homes = {p.name for p in (DATABASE / folder).iterdir() if p.is_dir()}
        assert homes - suites - packages == set(), f"{folder}/ has a folder no suite or package owns"
    assert {p.name for p in (DATABASE / "sql").iterdir() if p.is_dir()} >= suites | {"core"}


# What a current file may create: one of these, named exactly as the file (docs/development.md).
_CREATED = re.compile(r"^CREATE (?:OR REPLACE )?(?:TABLE|VIEW|FUNCTION|PROCEDURE|TYPE) (?:evalledger(?:_guard)?\.)?(\w+)",
                      re.MULTILINE | re.IGNORECASE)
# Files that create no object of their own (tests/db/test_current_schema.py holds the database to
# the same lists): the roles and schemas, the privileges PUBLIC loses, the rows a ledger starts with.
_NO_OBJECT = {"roles", "evalledger", "evalledger_guard", "large_objects", "brain_eval_targets", "brain_eval_rubric_v1",
              "takes_quality_rubric_v1_0", "takes_quality_rubric_v1_1", "work_quality_rubric_v1", "replay_rubric_v1"}


@pytest.mark.parametrize("path", [p for p in _database_files("triggers") + _database_files("sql")
                                  if p.name != "queries.sql"], ids=_db_rel)
def test_a_current_file_creates_the_one_object_it_is_named_after(path):
    created = _CREATED.findall(path.read_text("utf-8"))
    if path.stem in _NO_OBJECT:
        assert created == [], f"{_db_rel(path)} creates {created}: a file is named after what it creates"
    else:
        assert created == [path.stem], f"{_db_rel(path)} creates {created}, not one {path.stem}"


def test_schema_sql_includes_every_current_file_once():
    schema = DATABASE / "sql" / "schema.sql"
    included = [(schema.parent / target).resolve() for target in re.findall(r"^\\ir\s+(\S+)\s*$", schema.read_text(), re.MULTILINE)]
    files = [p.resolve() for p in _database_files("triggers") + _database_files("sql") if p.name != "queries.sql"]
    assert len(included) == len(set(included)), "sql/schema.sql includes a file twice"
    assert sorted(map(str, included)) == sorted(map(str, files)), "sql/schema.sql builds every current file"
    names = [p.stem for p in files]
    assert len(names) == len(set(names)), "two current files of one name: an object's name is its file's"


def test_the_wheel_lists_every_package_and_every_sql_folder():
    import tomllib

    config = tomllib.loads((CHECKOUT / "pyproject.toml").read_text("utf-8"))["tool"]["setuptools"]
    python = {".".join(p.relative_to(PACKAGE.parent).parts) for p in PACKAGE.rglob("__init__.py")}
    python = {name.removesuffix(".__init__.py") for name in python}
    database = {"evalledger.postgres." + ".".join(p.relative_to(DATABASE).parts)
                for folder in DATABASE_FOLDERS_WITH_SUITES for p in (DATABASE / folder).iterdir() if p.is_dir()}
    database |= {"evalledger.postgres.migrations", "evalledger.postgres.sql"}  # sql/ holds schema.sql
    database |= {"evalledger.postgres.migrations." + p.name for p in (DATABASE / "migrations").iterdir()
                 if p.is_dir() and not p.name.startswith(("_", "."))}
    data = {".".join(p.relative_to(PACKAGE.parent).parts) for p in PACKAGE.rglob("*")
            if p.is_dir() and not (p / "__init__.py").exists() and not any(part.startswith((".", "__")) for part in
                                                                          p.relative_to(PACKAGE).parts)}
    assert set(config["packages"]) == python | database | data


def test_the_checkout_reads_as_the_design_card_draws_it():
    if not (CHECKOUT / "pyproject.toml").exists():
        pytest.skip("run from an installed wheel, not a checkout")
    top = {p.name for p in CHECKOUT.iterdir() if not p.name.startswith(".")}
    assert {"pyproject.toml", "runner", "sql", "migrations", "triggers", "tests", "Makefile", "README.md"} <= top
    assert DATABASE == CHECKOUT, "a checkout's SQL is read from its top level, not from a copy"
    assert not list(PACKAGE.rglob("*.sql")) or all("fixtures" in p.parts for p in PACKAGE.rglob("*.sql"))


def _module_name(path: Path) -> str:
    return ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts).removesuffix(".__init__")


def _imported_modules(path: Path, known: set[str]) -> set[str]:
    """The package's modules that a module imports, at any depth of its code (lazy imports count)."""
    name = _module_name(path)
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    found = set()
    for node in ast.walk(_parsed(path)):
        if isinstance(node, ast.ImportFrom):
            base = ".".join(package[:len(package) - node.level + 1] + [node.module or ""]).rstrip(".") \
                if node.level else node.module
            found.update(f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
    return (found & known) - {name}


def test_no_module_imports_itself_back_through_others():
    graph = {_module_name(p): p for p in MODULES}
    edges = {name: _imported_modules(path, set(graph)) for name, path in graph.items()}
    cycles = []
    for start in edges:
        seen, frontier = set(), [(start, (start,))]
        while frontier:
            node, trail = frontier.pop()
            for nxt in edges[node]:
                if nxt == start:
                    cycles.append(" -> ".join((*trail, start)))
                elif nxt not in seen:
                    seen.add(nxt)
                    frontier.append((nxt, (*trail, nxt)))
    assert cycles == []


# -- the packages: the runner at the bottom, the other products above it, cli.py composing them ---------

# What each package may import besides itself (and evalledger's own __version__). The runner is
# core <- judges <- suites; the other products stand on it and never under it. The root modules
# (cli.py, demo.py, and the applications' evalledger.capture and evalledger.scrub) compose them all.
MAY_IMPORT = {
    "core": set(),
    "judges": {"core"},
    "suites": {"core", "judges"},
    "ledger": {"core"},
    # doctor reads what the capture client counted beside its spool, and how old the judges' prices are
    "ops": {"core", "ledger", "suites", "judges"},
    "bi": {"core", "suites", "ledger"},  # readers check the ledger still extends what they saw (ledger.remember)
    "web": {"core", "suites", "bi", "ledger"},
}
RUNNER = ("core", "judges", "suites")
ROOT_MODULES = {"evalledger", "evalledger.cli", "evalledger.demo", "evalledger.capture", "evalledger.scrub"}


def _home(module: str) -> str:
    """The package a module belongs to (a suite's is `suites`), or the module itself at the root."""
    return module if module in ROOT_MODULES else module.split(".")[1]


def _package_edges() -> dict[str, set[str]]:
    """Per module, the packages (or root modules) it imports, lazy imports included."""
    graph = {_module_name(p): p for p in MODULES}
    return {name: {_home(m) for m in _imported_modules(path, set(graph))} - {_home(name)} for name, path in graph.items()}


def test_every_package_has_its_place_in_the_import_direction():
    packages = {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").exists()}
    assert packages == set(MAY_IMPORT)
    assert {_module_name(p) for p in MODULES if p.parent == PACKAGE} == ROOT_MODULES


def test_the_runner_never_imports_another_product():
    # The table itself: core at the bottom, and no product reachable from the runner.
    assert MAY_IMPORT["core"] == set()
    for package in RUNNER:
        assert MAY_IMPORT[package] <= set(RUNNER[:RUNNER.index(package)]), package


def test_every_module_imports_in_the_direction_of_its_package():
    wrong = [f"{module} imports {sorted(found - MAY_IMPORT[_home(module)] - {'evalledger'})}"
             for module, found in sorted(_package_edges().items())
             if module not in ROOT_MODULES and found - MAY_IMPORT[_home(module)] - {"evalledger"}]
    assert wrong == []


def test_the_import_direction_sees_lazy_and_relative_imports():
    """Not vacuous: an import inside a function, and a relative one, are edges it checks."""
    edges = _package_edges()
    assert "ledger" in edges["evalledger.ops.cli"]  # `from evalledger.ledger.cli import seal_after`, in a command
    assert "suites" in edges["evalledger.bi.drill"]
    assert _imported_modules(PACKAGE / "ops" / "doctor.py", {_module_name(p) for p in MODULES}) >= {
        "evalledger.ops.retention", "evalledger.ledger.journal"}


def test_a_suite_imports_no_other_suite():
    graph = {_module_name(p): p for p in MODULES}
    crossing = []
    for name, path in graph.items():
        if _home(name) != "suites" or name == "evalledger.suites":
            continue
        suite = name.split(".")[2]
        others = {m.split(".")[2] for m in _imported_modules(path, set(graph))
                  if m.startswith("evalledger.suites.") and m.split(".")[2] != suite}
        crossing += [f"{name} imports the {other} suite" for other in sorted(others)]
    assert crossing == []


# The steps of setting up a judge panel, which judges.panel.Panel takes together: a suite's run
# passes its own parts (prompts, schema, what a result stores) to a Panel and calls none of these,
# nor the judges' context module (the prompt's size against each model's window).
PANEL_STEPS = {"parse_panel", "resolve_modes", "describe_modes", "run_panel", "check_prices", "recorded_call",
               "estimate", "DEFAULT_MAX_PROMPT_CHARS"}


def _panel_steps_named(path: Path) -> list[str]:
    found = []
    for node in ast.walk(_parsed(path)):
        if isinstance(node, ast.ImportFrom):
            names = [node.module or ""] + [a.name for a in node.names]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        else:
            names = [node.attr] if isinstance(node, ast.Attribute) else [node.id] if isinstance(node, ast.Name) else []
        found += [f"{_rel(path)}:{node.lineno}: {name}" for name in names
                  if name.split(".")[-1] in PANEL_STEPS or name in ("context", "evalledger.judges.context")]
    return found


def test_no_suite_builds_a_judge_panel_by_hand():
    by_hand = [hit for path in MODULES if _rel(path).startswith("suites/") for hit in _panel_steps_named(path)]
    assert by_hand == [], "a suite's run builds a judges.panel.Panel and passes in only its own parts"
    for path in (PACKAGE / "suites" / "takes_quality" / "run.py", PACKAGE / "suites" / "work_quality" / "run.py",
                 PACKAGE / "suites" / "brain_eval" / "cli" / "runs.py"):
        assert "Panel(" in path.read_text("utf-8"), f"{_rel(path)} builds no Panel"
