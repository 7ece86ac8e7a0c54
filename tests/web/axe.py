"""axe-core, npm's accessibility engine, for the browser tests: a pinned copy installed with npm
into tests/web/.axe (`python -m tests.web.axe`, which .ci/run runs; a test installs it too when it
is missing), and run in the page through the driver, so the page itself never fetches it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

AXE_VERSION = "4.14.1"
AXE_HOME = Path(__file__).parent / ".axe"
AXE_FILE = AXE_HOME / "node_modules" / "axe-core" / "axe.min.js"

_RUN = """
const done = arguments[arguments.length - 1];
axe.run(document, {resultTypes: ["violations"]}).then(result => done(result.violations.map(v => ({
    id: v.id, impact: v.impact, help: v.help,
    nodes: v.nodes.map(n => n.target.join(" ") + ": " + n.failureSummary.split("\\n").slice(1).join(" "))}))));
"""


def install() -> Path:
    """The pinned axe-core under tests/web/.axe (npm install, once)."""
    if AXE_FILE.exists() and f'"version": "{AXE_VERSION}"' in (AXE_FILE.parent / "package.json").read_text():
        return AXE_FILE
    if shutil.which("npm") is None:
        raise RuntimeError(f"axe-core {AXE_VERSION} is not installed and npm is missing (apt-get install npm)")
    AXE_HOME.mkdir(exist_ok=True)
    subprocess.run(["npm", "install", "--prefix", str(AXE_HOME), "--no-save", "--no-audit", "--no-fund",
                    "--loglevel=error", f"axe-core@{AXE_VERSION}"], check=True)
    return AXE_FILE


def source() -> str:
    """axe.min.js: $EVALLEDGER_AXE when set, else the pinned copy (installed when missing)."""
    given = os.environ.get("EVALLEDGER_AXE")
    return Path(given).read_text("utf-8") if given else install().read_text("utf-8")


def violations(driver, script: str) -> list[dict]:
    """axe-core's violations on the driver's current page, every rule it runs by default."""
    driver.execute_script(script)
    driver.set_script_timeout(60)
    return driver.execute_async_script(_RUN)


if __name__ == "__main__":
    print(f"axe-core {AXE_VERSION}: {install()}", file=sys.stderr)
