"""The fault campaign's seed: drawn once per test session (or given as EVALLEDGER_FAULT_SEED),
shared by pytest-xdist's workers, printed at the end of any session that ran the campaign, and
turned into one random.Random per test, so that a test draws the same faults from a seed
whatever else runs in the session and in whatever order.

Registered as a plugin by tests/conftest.py: under xdist only the root conftest's plugins run in
the controlling process, which draws the seed before it starts the workers (they inherit it)."""

from __future__ import annotations

import os
import random

import pytest

VARIABLE = "EVALLEDGER_FAULT_SEED"
_drawn = False


def campaign_seed() -> int:
    return int(os.environ[VARIABLE])


def pytest_configure(config):
    global _drawn
    given = os.environ.get(VARIABLE, "").strip()
    if not given:
        os.environ[VARIABLE] = str(random.SystemRandom().randrange(1, 10**9))
        _drawn = not os.environ.get("PYTEST_XDIST_WORKER")
    elif not given.isdigit():
        raise pytest.UsageError(f"{VARIABLE}={given!r}: not a seed (a whole number, as a campaign printed it)")


def pytest_terminal_summary(terminalreporter):
    ran = any(getattr(report, "nodeid", "").startswith("tests/faults/")
              for reports in terminalreporter.stats.values() for report in reports)
    if ran:
        how = "drawn at random" if _drawn else f"given by {VARIABLE}"
        terminalreporter.write_line(f"fault campaign: seed {campaign_seed()} ({how}); to run the same faults again: "
                                    f"{VARIABLE}={campaign_seed()} make faults")


@pytest.fixture
def faults(request) -> random.Random:
    """This test's draws of the campaign: the same seed draws the same faults."""
    seed = campaign_seed()
    print(f"fault campaign seed {seed} ({VARIABLE}={seed} replays it)")
    return random.Random(f"{seed}:{request.node.name}")
