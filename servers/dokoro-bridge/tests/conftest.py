"""Fixtures of the bridge tool tests: a frozen clock, a store with the bundled static embedder,
and an in-memory client of a server with the core and bridge tools (as the unified server has)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from dokoro_bridge import server as bridge
from dokoro_core import server as core
from dokoro_server import DokoroSettings, build_server
from dokoro_store import FrozenClock, Store
from dokoro_store.retrieval import RetrievalConfig
from mcp import Client
from mcp_types import CallToolResult

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
def store(root: Path, clock: FrozenClock) -> Iterator[Store]:
    config = RetrievalConfig(embedder="static", vector_engine="exact")
    with Store.open(root, clock=clock, retrieval=config) as opened:
        yield opened


@pytest.fixture
async def client(store: Store, root: Path, tmp_path: Path) -> AsyncIterator[Client]:
    settings = DokoroSettings(path=root, agent_id="tachibot", auto_feedback=False)
    mcp = build_server(settings, name="dokoro-test", cwd=tmp_path, store=store)
    core.register(mcp)
    bridge.register(mcp)
    async with Client(mcp) as connected:
        yield connected


def text_of(outcome: CallToolResult) -> str:
    return outcome.content[0].text if outcome.content else ""  # type: ignore[union-attr]


@pytest.fixture
def call(client: Client) -> Call:
    async def run(name: str, /, **arguments: Any) -> CallToolResult:
        outcome = await client.call_tool(name, arguments)
        assert not outcome.is_error, f"{name} failed: {text_of(outcome)}"
        return outcome

    return run


@pytest.fixture
def fail(client: Client) -> Fail:
    async def run(name: str, /, **arguments: Any) -> str:
        outcome = await client.call_tool(name, arguments)
        assert outcome.is_error, f"{name} should have failed but said: {text_of(outcome)}"
        assert "Traceback" not in text_of(outcome)
        return text_of(outcome)

    return run
