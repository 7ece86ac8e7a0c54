"""Fixtures the end-to-end modules share."""

import pytest

from tests.clusters import ledger_primary


@pytest.fixture(scope="package")
def primary():
    """The backup and dump tests' primary cluster (tests/clusters.py), made once for both modules."""
    yield from ledger_primary()
