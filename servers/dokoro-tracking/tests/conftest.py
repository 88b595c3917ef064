"""Fixtures of the tracking tool tests: the tracking tools served by the kit's test server, over one
store on each backend in turn (SQLite, then PostgreSQL) with the dependency-free embedder.

``call``/``fail``/``make_client``/``connect(agent)`` come from the testkit's fixtures
(:mod:`dokoro_testkit.fixtures`); the default ``client`` acts for ``alice``, with capture off.
"""

from __future__ import annotations

import pytest
from dokoro_server import DokoroSettings, Register
from dokoro_store import Store
from dokoro_store.retrieval import RetrievalConfig
from dokoro_tracking.server import register


@pytest.fixture
def registers() -> list[Register]:
    return [register]


@pytest.fixture
def settings(settings: DokoroSettings) -> DokoroSettings:
    """The kit's settings acting for ``alice`` (``connect("bob")`` acts for another), capture off."""
    return settings.model_copy(update={"agent_id": "alice", "auto_feedback": False})


@pytest.fixture
def store_url(database_url: str | None) -> str | None:
    """Each backend in turn (SQLite, then PostgreSQL): the root conftest's ``database_url``."""
    return database_url


@pytest.fixture
def store_retrieval() -> RetrievalConfig:
    """The dependency-free embedder and the exact vector scan."""
    return RetrievalConfig(embedder="hashing", vector_engine="exact")


@pytest.fixture
def server_store(store: Store) -> Store:
    """Every test server shares the kit's ``store``."""
    return store
