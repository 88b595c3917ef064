"""Fixtures of the analytics tool tests: the analytics tools served by the kit's test server, over one
store on each backend in turn (SQLite, then PostgreSQL) with the dependency-free embedder.

``call``/``fail``/``make_client`` come from the kit's pytest plugin (:mod:`dokoro_server.testing`);
``connect(agent)`` is a client acting for another agent over the same store.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from datetime import UTC, datetime
from pathlib import Path

import pytest
from dokoro_analytics.server import register
from dokoro_server import Register
from dokoro_server.testing import MakeClient
from dokoro_store import FrozenClock, Store
from dokoro_store.retrieval import RetrievalConfig
from mcp import Client

# A Wednesday evening in UTC: ISO week 2026-W24.
START = datetime(2026, 6, 10, 22, 23, 15, tzinfo=UTC)

Connect = Callable[[str], AbstractAsyncContextManager[Client]]


@pytest.fixture
def registers() -> list[Register]:
    return [register]


@pytest.fixture
def clock() -> FrozenClock:
    return FrozenClock(START)


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


@pytest.fixture
def connect(make_client: MakeClient) -> Connect:
    """``async with connect("alice") as client``: a client of a analytics server acting for that agent."""

    @asynccontextmanager
    async def open_client(agent_id: str) -> AsyncIterator[Client]:
        async with make_client(agent_id=agent_id, auto_feedback=False) as connected:
            yield connected

    return open_client


@pytest.fixture
async def client(connect: Connect) -> AsyncIterator[Client]:
    async with connect("alice") as connected:
        yield connected
