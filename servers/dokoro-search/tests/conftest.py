"""Fixtures of the search tool tests: a frozen clock, a served store folder and in-memory clients."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from dokoro_core.server import register as register_core
from dokoro_search.server import register as register_search
from dokoro_server import DokoroSettings, build_server
from dokoro_store import FrozenClock, Store
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
def cwd(tmp_path: Path) -> Path:
    return tmp_path


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return tmp_path / "dokoro"


@pytest.fixture
def store_url(request: pytest.FixtureRequest) -> str | None:
    """SQLite by default; ``@pytest.mark.parametrize("store_url", ["sqlite", "postgresql"], indirect=True)``."""
    if getattr(request, "param", "sqlite") == "sqlite":
        return None
    return str(request.getfixturevalue("postgres_url"))


@pytest.fixture
def settings(root: Path, store_url: str | None) -> DokoroSettings:
    return DokoroSettings(path=root, database_url=store_url, agent_id="unknown")


@pytest.fixture
def make_client(
    settings: DokoroSettings, cwd: Path, clock: FrozenClock
) -> Callable[..., AbstractAsyncContextManager[Client]]:
    """Factory: a client of a server with the core and search tools (as in the unified launcher)."""

    @asynccontextmanager
    async def connect(**overrides: Any) -> AsyncIterator[Client]:
        mcp = build_server(settings.model_copy(update=overrides), name="dokoro-test", cwd=cwd, clock=clock)
        register_core(mcp)
        register_search(mcp)
        async with Client(mcp) as client:
            yield client

    return connect


@pytest.fixture
async def client(make_client: Callable[..., AbstractAsyncContextManager[Client]]) -> AsyncIterator[Client]:
    async with make_client() as connected:
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
        assert outcome.is_error, f"{name} should have failed but said: {_text(outcome)}"
        assert "Traceback" not in _text(outcome)
        return _text(outcome)

    return run


@pytest.fixture
def store(root: Path, clock: FrozenClock, store_url: str | None) -> Iterator[Store]:
    with Store.open(root, database_url=store_url, clock=clock) as opened:
        yield opened
