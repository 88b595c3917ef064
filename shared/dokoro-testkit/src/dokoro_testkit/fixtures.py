"""The pytest plugin of every dokoro server's tests, enabled by the workspace's root ``conftest.py``
(``pytest_plugins = ["dokoro_testkit.fixtures"]``; no entry point, so installing dokoro adds no
fixture to another project's tests).

A server's ``conftest.py`` keeps only what is its own, above all ``registers``: the ``register``
functions of the packages its test server serves. Everything else is here:

- ``clock``: a :class:`~dokoro_store.FrozenClock` at :data:`START` (a Wednesday evening);
- ``cwd``, ``root``: the folder the server runs in and the store folder it serves;
- ``store_url``: SQLite by default; a fresh PostgreSQL database with
  ``@pytest.mark.parametrize("store_url", ["sqlite", "postgresql"], indirect=True)``;
- ``settings``, ``server_store``: what each test server is built from;
- ``tool_cache``: the tool schemas of every test server of the process, built once;
- ``make_client(**setting_overrides)``, ``client``, ``call``, ``fail``: in-memory MCP clients, each of
  a fresh server over the same store, as another agent's process would be;
- ``connect(agent_id, **setting_overrides)``: such a client acting for a named agent
  (``async with connect("alice") as alice, connect("bob") as bob``), to test who may change what;
- ``store``: the same store opened directly, to look at what the tools wrote;
- ``snapshot``, ``read_current``, ``read_json``: the store folder's files.

The servers write their session time tracking in the background (as a real process does);
``call``, ``fail`` and the file readers write what is queued first, so a test reads the files a
call left behind.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from dokoro_server.app import StoreOpener
    from dokoro_server.registration import ToolCache
    from dokoro_server.server import Register
    from dokoro_server.settings import DokoroSettings
    from dokoro_store import FrozenClock, Store
    from dokoro_store.retrieval import RetrievalConfig
    from mcp import Client
    from mcp_types import CallToolResult

__all__ = ["START", "Call", "Connect", "Fail", "MakeClient", "Snapshot"]

# A Wednesday evening, so slugs read 2026-06-10-22h23-wednesday.
START = datetime(2026, 6, 10, 22, 23, 15, tzinfo=UTC)

Call = Callable[..., Awaitable["CallToolResult"]]
Fail = Callable[..., Awaitable[str]]
MakeClient = Callable[..., AbstractAsyncContextManager["Client"]]
Connect = Callable[..., AbstractAsyncContextManager["Client"]]
Snapshot = Callable[[], dict[str, bytes]]

# What changes on any tool call by design: the database, time tracking and lock sidecars.
_VOLATILE = (".dokoro", ".mcp/locks", ".mcp/session.json")


def _text(outcome: CallToolResult) -> str:
    first = outcome.content[0] if outcome.content else None
    return str(getattr(first, "text", ""))


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def clock() -> FrozenClock:
    from dokoro_store import FrozenClock

    return FrozenClock(START)


@pytest.fixture
def cwd(tmp_path: Path) -> Path:
    """The folder the server was started from (relative paths resolve against it)."""
    return tmp_path


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """The store folder the server serves."""
    return tmp_path / "dokoro"


@pytest.fixture
def store_url(request: pytest.FixtureRequest) -> str | None:
    """The store's database: the folder's SQLite file, or a fresh PostgreSQL database when a test
    asks for ``@pytest.mark.parametrize("store_url", ["sqlite", "postgresql"], indirect=True)``
    (``postgres_url`` comes from the workspace's root conftest)."""
    if getattr(request, "param", "sqlite") == "sqlite":
        return None
    return str(request.getfixturevalue("postgres_url"))


@pytest.fixture
def settings(root: Path, store_url: str | None) -> DokoroSettings:
    """The settings of every test server; ``make_client(**overrides)`` changes some of them.

    agent_id ``unknown`` (the default) gives claims the reference's time-based agent ids.
    """
    from dokoro_server.settings import DokoroSettings

    return DokoroSettings(path=root, database_url=store_url, agent_id="unknown")


@pytest.fixture
def registers() -> Sequence[Register]:
    """The ``register`` functions of the packages the test server serves: a server's conftest
    defines this fixture."""
    pytest.fail("define a `registers` fixture in your conftest: the register functions your tests serve")


@pytest.fixture
def server_store() -> Store | None:
    """An open store every test client shares; ``None`` (the default): each client opens the store
    the settings name, as a separate server process would."""
    return None


@pytest.fixture
def _live_openers() -> list[StoreOpener]:
    return []


@pytest.fixture
def flush_servers(_live_openers: list[StoreOpener]) -> Callable[[], None]:
    """Write what every live test server has queued in the background (session time tracking)."""

    def flush() -> None:
        for opener in _live_openers:
            if opener.ready:
                opener.store().working.workspace.flush_tool_uses()

    return flush


@pytest.fixture(scope="session")
def tool_cache(tmp_path_factory: pytest.TempPathFactory) -> ToolCache:
    """The tool schemas every test server of this process lists, as the entry points keep them
    between starts (:class:`~dokoro_server.registration.ToolCache`): the first server builds each
    tool, later ones list it from the cache and build a tool at its first call. Building every
    schema for every test's server was most of a tool test's time."""
    from dokoro_server.registration import ToolCache

    return ToolCache(tmp_path_factory.mktemp("tool-cache") / "tools.json")


@pytest.fixture
def make_client(
    settings: DokoroSettings,
    cwd: Path,
    clock: FrozenClock,
    registers: Sequence[Register],
    server_store: Store | None,
    _live_openers: list[StoreOpener],
    tool_cache: ToolCache,
) -> MakeClient:
    """Factory: ``async with make_client(**setting_overrides) as client``, a client of a fresh
    server over the same store, serving ``registers``."""
    import anyio
    from dokoro_server.app import StoreOpener
    from dokoro_server.server import build_server
    from mcp import Client

    @asynccontextmanager
    async def connect(**overrides: Any) -> AsyncIterator[Client]:
        configured = settings.model_copy(update=overrides) if overrides else settings
        if server_store is not None:
            opener = StoreOpener.opened(server_store)
        else:
            opener = StoreOpener.for_settings(configured, cwd, clock)
        mcp = build_server(configured, name="dokoro-test", cwd=cwd, clock=clock, store=opener)
        with tool_cache.active():
            for register in registers:
                register(mcp)
        _live_openers.append(opener)
        try:
            # As a server process started earlier would have: the store folder exists before the
            # first call (tests write files into it), and its schema is ready.
            await anyio.to_thread.run_sync(opener.wait)
            async with Client(mcp) as client:
                yield client
        finally:
            _live_openers.remove(opener)
            with anyio.CancelScope(shield=True):
                await anyio.to_thread.run_sync(opener.close)

    return connect


@pytest.fixture
def connect(make_client: MakeClient) -> Connect:
    """Factory: ``async with connect("alice") as client``, a client of a fresh server over the same
    store acting for agent ``alice`` (its ``DOKORO_AGENT_ID``), as that agent's own server process
    would; keyword arguments override further settings, as ``make_client``'s do."""

    @asynccontextmanager
    async def open_client(agent_id: str, /, **overrides: Any) -> AsyncIterator[Client]:
        async with make_client(agent_id=agent_id, **overrides) as connected:
            yield connected

    return open_client


@pytest.fixture
async def client(make_client: MakeClient) -> AsyncIterator[Client]:
    async with make_client() as connected:
        yield connected


@pytest.fixture
def call(client: Client, flush_servers: Callable[[], None]) -> Call:
    """``await call(tool, **arguments)``: a call that must succeed; returns the result."""

    async def run(name: str, /, **arguments: Any) -> CallToolResult:
        outcome = await client.call_tool(name, arguments)
        flush_servers()
        assert not outcome.is_error, f"{name} failed: {_text(outcome)}"
        return outcome

    return run


@pytest.fixture
def fail(client: Client, flush_servers: Callable[[], None]) -> Fail:
    """``await fail(tool, **arguments)``: a call that must be an MCP error result; returns its message."""

    async def run(name: str, /, **arguments: Any) -> str:
        outcome = await client.call_tool(name, arguments)
        flush_servers()
        text = _text(outcome)
        assert outcome.is_error, f"{name} should have failed but said: {text}"
        assert outcome.structured_content is None
        assert "Traceback" not in text
        return text

    return run


@pytest.fixture
def store_retrieval() -> RetrievalConfig | None:
    """The embedder and vector engine of :func:`store` (``None``: the store's defaults); a conftest
    overrides it, e.g. with the dependency-free ``hashing`` embedder."""
    return None


@pytest.fixture
def store(
    root: Path, clock: FrozenClock, store_url: str | None, store_retrieval: RetrievalConfig | None
) -> Iterator[Store]:
    """The same store, opened directly, to look at what the tools wrote to the database."""
    from dokoro_store import Store

    with Store.open(root, database_url=store_url, clock=clock, retrieval=store_retrieval) as opened:
        yield opened


@pytest.fixture
def snapshot(root: Path, flush_servers: Callable[[], None]) -> Snapshot:
    """Every workspace file's bytes, minus the ones that change on any call, to prove a call wrote nothing."""

    def take() -> dict[str, bytes]:
        flush_servers()
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
def read_current(root: Path, flush_servers: Callable[[], None]) -> Callable[[], tuple[dict[str, Any], str]]:
    """current.md as ``(front_matter, body)``."""
    from dokoro_store.walls import frontmatter

    def read() -> tuple[dict[str, Any], str]:
        flush_servers()
        return frontmatter.parse((root / "current.md").read_text(encoding="utf-8"))

    return read


@pytest.fixture
def read_json(root: Path, flush_servers: Callable[[], None]) -> Callable[[str], Any]:
    """A JSON file of the store folder, by relative path (``.mcp/session.json``)."""

    def read(relative: str) -> Any:
        flush_servers()
        return json.loads((root / relative).read_text(encoding="utf-8"))

    return read


@pytest.fixture(scope="session", autouse=True)
def _fresh_sqlite_stores_from_a_template(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """A store opened on a new SQLite file starts as a copy of one migrated once per test process
    (SQLite's online backup into the open database), rather than running every migration again:
    the same schema, byte for byte, at a fraction of the cost. Only an empty database is copied
    into (no table at all, so never a store of an older schema or of another program); anything
    else is upgraded by the store's own migrations, which the migration tests exercise."""
    import contextlib
    import sqlite3

    from dokoro_store import store as store_module
    from dokoro_store.db.engine import Database
    from dokoro_store.db.migrate import upgrade
    from sqlalchemy import text

    template_file = tmp_path_factory.mktemp("sqlite-template") / "dokoro.sqlite"
    template = Database.open_sqlite(template_file)
    try:
        upgrade(template)
    finally:
        template.dispose()

    def upgrade_from_template(db: Database, revision: str = "heads", *, current: frozenset[str] | None = None) -> None:
        if revision == "heads" and db.dialect == "sqlite" and not current:
            with db.engine.connect() as connection, db.ops.migration_lock(connection):
                empty = connection.execute(text("SELECT count(*) FROM sqlite_master")).scalar() == 0
                if empty:
                    connection.commit()  # the backup needs the destination outside a transaction
                    target = connection.connection.driver_connection
                    assert isinstance(target, sqlite3.Connection)
                    with contextlib.closing(sqlite3.connect(template_file)) as source:
                        source.backup(target)
                    return
        upgrade(db, revision, current=current)

    patch = pytest.MonkeyPatch()
    patch.setattr(store_module, "upgrade", upgrade_from_template)
    try:
        yield
    finally:
        patch.undo()
