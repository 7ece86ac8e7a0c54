"""The fault campaign's shared pieces: counts in SQL that every fault must leave true, and the
ledger verified after it."""

from __future__ import annotations

from tests.cli import run_cli
from tests.outages import mounted  # noqa: F401 (a fixture)


def one(admin, query: str, *params):
    return admin.execute(query, params).fetchone()[0]


def assert_verified(env: dict) -> None:
    """`ledger verify` finds nothing: no row changed, none missing, every block whole."""
    verified = run_cli("ledger", "verify", env=env)
    assert verified.code == 0, verified.out + verified.err
