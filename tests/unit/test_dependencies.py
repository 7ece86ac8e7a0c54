"""Every package the code imports is declared: the runner's in `dependencies`, the tests' in
`dependencies` or the `test` extra. An undeclared import works here by luck (another package
pulled it in) and breaks a clean install."""

from __future__ import annotations

import ast
import functools
import importlib.metadata
import re
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["project"]
LOCAL = {"evalledger", "tests"}


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _declared(requirements: list[str]) -> set[str]:
    return {_normal(re.match(r"[A-Za-z0-9_.\-]+", r).group(0)) for r in requirements}


def _imported(folder: Path) -> dict[str, str]:
    """Top-level third-party modules imported under folder, each with one place it is imported."""
    found: dict[str, str] = {}
    for path in sorted(folder.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                if top not in sys.stdlib_module_names and top not in LOCAL and top != "__future__":
                    found.setdefault(top, f"{path.relative_to(ROOT)}:{node.lineno}")
    return found


@functools.cache
def _packages() -> dict[str, list[str]]:
    return importlib.metadata.packages_distributions()


def _distributions(module: str) -> set[str]:
    return {_normal(d) for d in _packages().get(module, [])}


@pytest.mark.parametrize("folder, allowed", [
    ("runner", _declared(PROJECT["dependencies"])),
    ("tests", _declared(PROJECT["dependencies"]) | _declared(PROJECT["optional-dependencies"]["test"])),
])
def test_every_imported_package_is_declared(folder, allowed):
    undeclared = []
    for module, where in _imported(ROOT / folder).items():
        dists = _distributions(module)
        if not dists & allowed:
            undeclared.append(f"{where}: {module} (from {', '.join(sorted(dists)) or 'no installed package'})")
    assert undeclared == []
