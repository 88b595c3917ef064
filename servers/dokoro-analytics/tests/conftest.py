"""Fixtures of the analytics tool tests: the analytics tools served by the kit's test server, over one
store on each backend in turn (SQLite, then PostgreSQL) with the dependency-free embedder.

``call``/``fail``/``make_client``/``connect(agent)`` come from the kit's pytest plugin
(:mod:`dokoro_server.testing`); the default ``client`` acts for ``alice``, with capture off.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from dokoro_analytics.server import register
from dokoro_server import DokoroSettings, Register
from dokoro_store import FrozenClock, Store
from dokoro_store.retrieval import RetrievalConfig


@pytest.fixture
def registers() -> list[Register]:
    return [register]


@pytest.fixture
def settings(settings: DokoroSettings) -> DokoroSettings:
    """The kit's settings acting for ``alice`` (``connect("bob")`` acts for another), capture off."""
    return settings.model_copy(update={"agent_id": "alice", "auto_feedback": False})


@pytest.fixture
def store(root: Path, clock: FrozenClock, database_url: str | None) -> Iterator[Store]:
    """A store on each backend in turn (SQLite, then PostgreSQL), with the dependency-free embedder."""
    config = RetrievalConfig(embedder="hashing", vector_engine="exact")
    with Store.open(root, database_url=database_url, clock=clock, retrieval=config) as opened:
        yield opened


@pytest.fixture
def server_store(store: Store) -> Store:
    """Every test server shares the store above."""
    return store
