"""Pytest fixtures for the provider stand-in; register with pytest_plugins = ["tests.standin.fixtures"]."""

from __future__ import annotations

from typing import Iterator

import pytest

from .server import StandIn


@pytest.fixture(scope="session")
def standin_server() -> Iterator[StandIn]:
    """One stand-in server for the whole session (starting threads per test is waste)."""
    with StandIn() as server:
        yield server


@pytest.fixture
def standin(standin_server: StandIn) -> Iterator[StandIn]:
    """The session's stand-in, reset before and after the test."""
    standin_server.reset()
    yield standin_server
    standin_server.reset()
