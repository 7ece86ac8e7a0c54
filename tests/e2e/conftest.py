"""Fixtures the end-to-end modules share."""

import pytest

from tests.clusters import ledger_primary


@pytest.fixture(scope="package")
def primary():
    """The backup and dump tests' primary cluster (tests/clusters.py), made once per session for
    both modules (under xdist they are two groups, each on a worker that makes a primary of its own)."""
    yield from ledger_primary()
