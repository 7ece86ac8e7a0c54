"""`make dist-check`: the wheel and the sdist that `make dist` built carry the whole database side,
and the wheel, installed into a fresh venv, says it is this checkout's evalledger.__version__.

Exit 0 when they do; 1 with one line per problem when not.
"""

from __future__ import annotations

import subprocess
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = ("migrations", "triggers", "sql")


def checkout_sql() -> set[str]:
    """Every migration and SQL file of the checkout, relative to the top (migrations/0001.x.sql, ...)."""
    return {str(p.relative_to(ROOT)) for folder in FOLDERS for p in (ROOT / folder).rglob("*.sql")}


def source_version() -> str:
    """evalledger.__version__ as the checkout's source says it."""
    namespace: dict = {}
    exec((ROOT / "runner" / "evalledger" / "__init__.py").read_text(), namespace)
    return namespace["__version__"]


def one(dist: Path, pattern: str) -> Path:
    found = sorted(dist.glob(pattern))
    if len(found) != 1:
        raise SystemExit(f"dist-check: expected one {pattern} in {dist}, found {[p.name for p in found]}")
    return found[0]


def main(dist: Path) -> int:
    version = source_version()
    wheel, sdist = one(dist, "evalledger-*.whl"), one(dist, "evalledger-*.tar.gz")
    problems = []
    wanted = checkout_sql()
    in_wheel = {name.removeprefix("evalledger/postgres/") for name in zipfile.ZipFile(wheel).namelist()}
    problems += [f"{wheel.name} lacks {name}" for name in sorted(wanted - in_wheel)]
    with tarfile.open(sdist) as tar:
        in_sdist = {name.partition("/")[2] for name in tar.getnames()}
    problems += [f"{sdist.name} lacks {name}" for name in sorted(wanted - in_sdist)]
    if f"evalledger-{version}-" not in wheel.name or sdist.name != f"evalledger-{version}.tar.gz":
        problems.append(f"built {wheel.name} and {sdist.name}, but evalledger.__version__ is {version}")

    with tempfile.TemporaryDirectory() as scratch:
        venv = Path(scratch) / "venv"
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        # The wheel alone (`make wheel-check` installs it with its dependencies from the index and
        # runs the demo); the dependencies are read from this venv's site-packages, which the fresh
        # venv lists after its own, so evalledger and its console script come from the wheel.
        subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", "--no-deps",
                        "--no-index", str(wheel)], check=True)
        site = next(venv.glob("lib/python*/site-packages"))
        here = next(p for p in map(Path, sys.path) if p.name == "site-packages" and p.is_dir())
        (site / "zz_dependencies.pth").write_text(f"{here}\n")
        # From outside the checkout, so nothing is imported from it.
        said = subprocess.run([str(venv / "bin" / "evalledger"), "--version"], cwd=scratch,
                              capture_output=True, text=True, check=True).stdout.strip()
        where, installed = subprocess.run(
            [str(venv / "bin" / "python"), "-c",
             "import evalledger, importlib.metadata as m; print(evalledger.__file__); print(m.version('evalledger'))"],
            cwd=scratch, capture_output=True, text=True, check=True).stdout.split()
    if said != f"evalledger, version {version}":
        problems.append(f"the installed wheel's `evalledger --version` says {said!r}, not version {version}")
    if installed != version:
        problems.append(f"the installed wheel's metadata says version {installed}, not {version}")
    if where.startswith(str(ROOT)):
        problems.append(f"evalledger was imported from the checkout ({where}), not from the wheel")

    for problem in problems:
        print(f"dist-check: {problem}", file=sys.stderr)
    if not problems:
        print(f"dist-check: {wheel.name} and {sdist.name} carry all {len(wanted)} SQL files; "
              f"the installed wheel says {said}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1] if len(sys.argv) > 1 else "dist")))
