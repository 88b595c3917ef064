"""Fixtures of the analytics tool tests: a frozen clock, a store on each backend, and in-memory
clients of the analytics server (one per agent)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from dokoro_analytics.server import create_server
from dokoro_server import DokoroSettings
from dokoro_store import FrozenClock, Store
from dokoro_store.retrieval import RetrievalConfig
from mcp import Client
from mcp_types import CallToolResult

# A Wednesday evening in UTC: ISO week 2026-W24.
START = datetime(2026, 6, 10, 22, 23, 15, tzinfo=UTC)

Call = Callable[..., Awaitable[CallToolResult]]
Fail = Callable[..., Awaitable[str]]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def clock() -> FrozenClock:
    return FrozenClock(START)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return tmp_path / "dokoro"


@pytest.fixture
def store(root: Path, clock: FrozenClock, database_url: str | None) -> Iterator[Store]:
    """A store on each backend in turn (SQLite, then PostgreSQL), with the dependency-free embedder."""
    config = RetrievalConfig(embedder="hashing", vector_engine="exact")
    with Store.open(root, database_url=database_url, clock=clock, retrieval=config) as opened:
        yield opened


Connect = Callable[[str], AbstractAsyncContextManager[Client]]


@pytest.fixture
def connect(store: Store, root: Path, tmp_path: Path) -> Connect:
    """``async with connect("alice") as client``: a client of an analytics server acting for that agent."""

    @asynccontextmanager
    async def open_client(agent_id: str) -> AsyncIterator[Client]:
        settings = DokoroSettings(path=root, agent_id=agent_id, auto_feedback=False)
        async with Client(create_server(settings, cwd=tmp_path, store=store)) as connected:
            yield connected

    return open_client


@pytest.fixture
async def client(connect: Connect) -> AsyncIterator[Client]:
    async with connect("alice") as connected:
        yield connected


def _text(outcome: CallToolResult) -> str:
    return outcome.content[0].text if outcome.content else ""  # type: ignore[union-attr]


@pytest.fixture
def call(client: Client) -> Call:
    async def run(name: str, /, **arguments: Any) -> CallToolResult:
        outcome = await client.call_tool(name, arguments)
        assert not outcome.is_error, f"{name} failed: {_text(outcome)}"
        return outcome

    return run


@pytest.fixture
def fail(client: Client) -> Fail:
    async def run(name: str, /, **arguments: Any) -> str:
        outcome = await client.call_tool(name, arguments)
        text = _text(outcome)
        assert outcome.is_error, f"{name} should have failed but said: {text}"
        assert "Traceback" not in text
        return text

    return run
