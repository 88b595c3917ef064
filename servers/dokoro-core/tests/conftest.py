"""Fixtures of the core tool tests: a frozen clock, a served store folder and in-memory clients."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from dokoro_core.server import create_server
from dokoro_server import DokoroSettings
from dokoro_store import FrozenClock, Store
from dokoro_store import frontmatter as fm
from mcp import Client
from mcp_types import CallToolResult

# A Wednesday evening, so slugs read 2026-06-10-22h23-wednesday.
START = datetime(2026, 6, 10, 22, 23, 15, tzinfo=UTC)

Call = Callable[..., Awaitable[CallToolResult]]
Fail = Callable[..., Awaitable[str]]
Snapshot = Callable[[], dict[str, bytes]]

# What changes on any tool call by design: the database, time tracking and lock sidecars.
_VOLATILE = (".dokoro", ".mcp/locks", ".mcp/session.json")


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def clock() -> FrozenClock:
    return FrozenClock(START)


@pytest.fixture
def cwd(tmp_path: Path) -> Path:
    """The folder the server was started from (relative asset paths resolve against it)."""
    return tmp_path


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """The store folder the server serves."""
    return tmp_path / "dokoro"


@pytest.fixture
def store_url(request: pytest.FixtureRequest) -> str | None:
    """The store's database: the folder's SQLite file, or a fresh PostgreSQL database when a test
    asks for ``@pytest.mark.parametrize("store_url", ["sqlite", "postgresql"], indirect=True)``."""
    if getattr(request, "param", "sqlite") == "sqlite":
        return None
    return str(request.getfixturevalue("postgres_url"))


@pytest.fixture
def make_client(
    root: Path, cwd: Path, clock: FrozenClock, store_url: str | None
) -> Callable[[], AbstractAsyncContextManager[Client]]:
    """Factory: a client of a fresh server over the same store, as another agent's process would be."""

    @asynccontextmanager
    async def connect() -> AsyncIterator[Client]:
        # agent_id "unknown" (the default): claims get the reference's time-based agent ids.
        settings = DokoroSettings(path=root, database_url=store_url, agent_id="unknown")
        async with Client(create_server(settings, cwd=cwd, clock=clock)) as client:
            yield client

    return connect


@pytest.fixture
async def client(make_client: Callable[[], AbstractAsyncContextManager[Client]]) -> AsyncIterator[Client]:
    async with make_client() as connected:
        yield connected


@pytest.fixture
def call(client: Client) -> Call:
    """``await call(tool, **arguments)``: a call that must succeed; returns the result."""

    async def run(name: str, /, **arguments: Any) -> CallToolResult:
        outcome = await client.call_tool(name, arguments)
        text = outcome.content[0].text if outcome.content else ""  # type: ignore[union-attr]
        assert not outcome.is_error, f"{name} failed: {text}"
        return outcome

    return run


@pytest.fixture
def fail(client: Client) -> Fail:
    """``await fail(tool, **arguments)``: a call that must be an MCP error result; returns its message."""

    async def run(name: str, /, **arguments: Any) -> str:
        outcome = await client.call_tool(name, arguments)
        text = outcome.content[0].text if outcome.content else ""  # type: ignore[union-attr]
        assert outcome.is_error, f"{name} should have failed but said: {text}"
        assert outcome.structured_content is None
        assert "Traceback" not in text
        return text

    return run


@pytest.fixture
def snapshot(root: Path) -> Snapshot:
    """Every workspace file's bytes, minus the ones that change on any call, to prove a call wrote nothing."""

    def take() -> dict[str, bytes]:
        if not root.exists():
            return {}
        files: dict[str, bytes] = {}
        for path in sorted(root.rglob("*")):
            relative = path.relative_to(root).as_posix()
            if relative == ".mcp" or any(relative.startswith(prefix) for prefix in _VOLATILE):
                continue
            files[relative + ("/" if path.is_dir() else "")] = b"" if path.is_dir() else path.read_bytes()
        return files

    return take


@pytest.fixture
def store(root: Path, clock: FrozenClock, store_url: str | None) -> Iterator[Store]:
    """The same store, opened directly, to look at what the tools wrote to the database."""
    with Store.open(root, database_url=store_url, clock=clock) as opened:
        yield opened


@pytest.fixture
def read_current(root: Path) -> Callable[[], tuple[dict[str, Any], str]]:
    """current.md as ``(front_matter, body)``."""

    def read() -> tuple[dict[str, Any], str]:
        return fm.parse((root / "current.md").read_text(encoding="utf-8"))

    return read


@pytest.fixture
def read_json(root: Path) -> Callable[[str], Any]:
    """A JSON file of the store folder, by relative path (``.mcp/session.json``)."""

    def read(relative: str) -> Any:
        return json.loads((root / relative).read_text(encoding="utf-8"))

    return read
