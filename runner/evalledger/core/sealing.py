"""The seal a completing command leaves behind, without the runner importing the ledger.

The tamper-evidence journal (evalledger.ledger) sits above the runner. A suite's command that
completes a run (or a purge) wraps its work in `sealing(role)`; the command line that composes the
packages (evalledger/cli.py) registers the ledger's seal here, so the seal runs as it always did
while core and the suites never import the ledger.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable

_sealers: list[Callable[[str], None]] = []


def register(sealer: Callable[[str], None]) -> None:
    """Run sealer(role) after each completing command (once, however often it is registered)."""
    if sealer not in _sealers:
        _sealers.append(sealer)


def seal_after(role: str) -> None:
    """Seal right after what a command committed, as role, with every registered sealer."""
    for sealer in _sealers:
        sealer(role)


@contextlib.contextmanager
def sealing(role: str):
    """Run a completing command, then seal its entries, also when it ends with its verdict's exit code."""
    try:
        yield
    except SystemExit:
        seal_after(role)
        raise
    seal_after(role)
