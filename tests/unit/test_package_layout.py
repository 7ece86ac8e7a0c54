"""The package's house rules, checked on its source: SQL only in named-query files, the names a
module asks for exist, the judge layer imports in one direction, only CLI edges use click."""

from __future__ import annotations

import ast
import importlib
import importlib.util
import re
import sys
from pathlib import Path

import pytest

from evalledger.core import queries

PACKAGE = Path(importlib.import_module("evalledger").__file__).parent
MODULES = sorted(p for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts)
# A string that starts like an SQL statement.
_SQL_START = re.compile(r"^\s*(SELECT|INSERT INTO|UPDATE|DELETE FROM|WITH|COPY|SET|RESET|CREATE|DROP|ALTER|GRANT|TRUNCATE)\s")
# Modules that speak to a person: the only ones that may import click.
CLICK_EDGES = {"cli.py", "demo.py", "options.py"}


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
        tree = ast.parse(path.read_text("utf-8"))
        allowed = _composed(tree)
        docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                      if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                      and node.body and isinstance(node.body[0], ast.Expr)}
        for node in ast.walk(tree):
            if (isinstance(node, ast.Constant) and isinstance(node.value, str) and _SQL_START.match(node.value)
                    and id(node) not in allowed and id(node) not in docstrings):
                inline.append(f"{_rel(path)}:{node.lineno}: {node.value.strip()[:60]!r}")
    assert inline == [], "SQL belongs in the package's sql/queries.sql as a named query"


def _queries_files() -> list[Path]:
    return sorted(PACKAGE.rglob("sql/queries.sql"))


@pytest.mark.parametrize("path", _queries_files(), ids=lambda p: _rel(p))
def test_every_named_query_says_what_it_does(path):
    text = path.read_text("utf-8")
    parsed = queries.parse(text)
    assert parsed, f"{_rel(path)}: no -- name: blocks"
    names = re.findall(r"^-- name: (\w+)\s*$", text, re.MULTILINE)
    assert len(names) == len(set(names)), f"{_rel(path)}: a name is used twice"
    for name, body in parsed.items():
        first = body.splitlines()[0]
        assert first.startswith("-- ") and len(first) > 10, f"{_rel(path)}: query {name} has no comment line"
        assert any(not line.startswith("--") and line.strip() for line in body.splitlines()), name


def _package_of(path: Path) -> Path:
    return path.parent


@pytest.mark.parametrize("path", [p for p in MODULES if re.search(r"QUERIES\[|queries\.get\(|\bQ\[", p.read_text())
                                  and p != PACKAGE / "core" / "queries.py"],
                         ids=lambda p: _rel(p))
def test_every_query_a_module_asks_for_exists(path):
    text = path.read_text("utf-8")
    own = _package_of(path) / "sql" / "queries.sql"
    core = PACKAGE / "core" / "sql" / "queries.sql"
    asked_own = set(re.findall(r"\b(?:QUERIES|Q)\[\"(\w+)\"\]", text))
    asked_core = set(re.findall(r"queries\.get\(\"(\w+)\"\)", text))
    if asked_own:
        assert own.exists(), f"{_rel(path)} asks for named queries but {_rel(own)} does not exist"
        assert asked_own <= set(queries.parse(own.read_text("utf-8"))), asked_own - set(queries.parse(own.read_text()))
    assert asked_core <= set(queries.parse(core.read_text("utf-8")))


def test_the_capture_batch_insert_lists_exactly_the_row_columns():
    from evalledger.suites.capture.rows import COLUMNS
    from evalledger.suites.capture.writer import QUERIES

    statement = QUERIES["insert_candidates"]
    listed = re.search(r"eval_candidates \(([^)]*)\)", statement).group(1)
    selected = re.search(r"SELECT (.*?)\s+FROM json_populate_recordset", statement, re.DOTALL).group(1)
    for columns in (listed, selected):
        assert tuple(c.strip() for c in columns.split(",")) == COLUMNS


def test_only_cli_edges_import_click():
    users = []
    for path in MODULES:
        if path.name in CLICK_EDGES:
            continue
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import) else
                     [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            if any(n == "click" or n.startswith("click.") for n in names):
                users.append(_rel(path))
    assert users == [], "library modules raise EvalledgerError; only cli.py and the demos speak to people"


# -- the judge layer: specs <- pricing <- providers <- panel, repair alone -------------------------------

JUDGE_ORDER = ("repair", "specs", "pricing", "providers", "panel")
SDKS = ("openai", "anthropic", "httpx2")


def _judge_imports(name: str) -> set[str]:
    """The judges modules one judges module imports (at any depth of its code)."""
    tree = ast.parse((PACKAGE / "judges" / f"{name}.py").read_text("utf-8"))
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


def test_specs_and_pricing_load_no_provider_sdk():
    """specs, pricing and repair stay cheap to import: no SDK (seconds of start-up) behind them."""
    saved = dict(sys.modules)
    try:
        for name in list(sys.modules):
            if name.split(".")[0] in SDKS or name.startswith("evalledger.judges"):
                del sys.modules[name]
        for name in ("specs", "pricing", "repair"):
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

    assert public.__all__ == ["capture_candidate", "close", "configure", "flush"]
    assert all(getattr(public, name) is getattr(api, name) for name in public.__all__)
