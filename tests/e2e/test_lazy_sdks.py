"""A command imports only the SDKs of its panel's providers: the console script, a real PostgreSQL,
the provider stand-in, and Python's own import log (-X importtime)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest

from tests.cli import SCRIPT

TAKES = [{"slug": f"a/t{i}", "kind": "take", "holder": "ann", "weight": 0.5, "since": "2026-01",
          "source": "notes", "claim": f"Claim number {i}."} for i in range(3)]


def _imported(importtime_log: str) -> set[str]:
    """Top-level packages Python's import log shows as imported."""
    return {m.group(1).split(".")[0] for m in re.finditer(r"^import time:\s+\d+ \|\s+\d+ \|\s*(\S+)$",
                                                          importtime_log, re.MULTILINE)}


@pytest.mark.processes
def test_a_panel_without_an_anthropic_model_never_imports_anthropic(standin, dsn, tmp_path):
    takes = tmp_path / "takes.jsonl"
    takes.write_text("".join(json.dumps(t) + "\n" for t in TAKES))
    env = {**os.environ, **standin.env(), "DATABASE_URL": dsn, "EVALLEDGER_HOME": str(tmp_path / "home")}
    done = subprocess.run([sys.executable, "-X", "importtime", str(SCRIPT), "run", "takes-quality", "--source", "fs",
                           "--path", str(takes), "--seed", "1", "--models", "openai:gpt-4o,openai:gpt-4o-mini,google:gemini-1.5-pro"],
                          env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode in (0, 1, 2), done.stderr[-2000:]
    assert {r.model for r in standin.requests} == {"gpt-4o", "gpt-4o-mini", "gemini-1.5-pro"}
    imported = _imported(done.stderr)
    assert "openai" in imported and "evalledger" in imported  # the log is read right
    assert "anthropic" not in imported
    # Gemini called synchronously goes through the openai SDK: Google's own (its batch mode's) stays unloaded.
    assert "google" not in imported
