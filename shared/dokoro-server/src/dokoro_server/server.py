"""Building and serving a dokoro MCP server: one lifespan, outcome capture, the caller's tools.

Every server's ``main()`` is ``serve(NAME, register)``; the unified launcher passes every
package's ``register``. ``build_server`` makes a server with no tools yet, for tests and for the
shared HTTP server.
"""

from __future__ import annotations

import contextlib
import logging
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from mcp.server.mcpserver import MCPServer
from mcp.server.subscriptions import InMemorySubscriptionBus

from dokoro_server.app import AppState, StoreOpener, store_root
from dokoro_server.capture import capture_middleware
from dokoro_server.lifespan import app_lifespan, store_middleware
from dokoro_server.registration import DokoroServer, ToolCache
from dokoro_server.resources import ResourceUpdates
from dokoro_server.settings import DokoroSettings

if TYPE_CHECKING:
    from dokoro_store import Clock, Store
    from mcp.server.auth.provider import TokenVerifier
    from mcp.server.auth.settings import AuthSettings

    from dokoro_server.entry import Prepared

__all__ = ["INSTRUCTIONS", "VERSION", "Register", "build_server", "serve"]

log = logging.getLogger("dokoro")

VERSION = "0.1.0"
INSTRUCTIONS = (
    "dokoro is this project's persistent memory. At session start call dokoro_briefing (rules, workspace, "
    "blockers, recent sessions) and dokoro_session_recall; claim the workspace with dokoro_workspace_claim, "
    "log progress with dokoro_session_log, keep durable knowledge with dokoro_remember / dokoro_recall, and "
    "at the end write dokoro_session_summary_add and dokoro_workspace_dump."
)

# A server package's ``register(mcp)``: adds its tools to a given server.
Register = Callable[[MCPServer[Any]], None]


def build_server(
    settings: DokoroSettings,
    *,
    name: str,
    cwd: Path | None = None,
    clock: Clock | None = None,
    store: Store | StoreOpener | None = None,
    token_verifier: TokenVerifier | None = None,
    auth: AuthSettings | None = None,
    instructions: str = INSTRUCTIONS,
) -> MCPServer[AppState]:
    """A server with the dokoro lifespan, outcome capture and resource updates, and no tools yet.

    ``store`` is an already open store shared by every session, or a :class:`StoreOpener`
    (either way the caller closes it); without it each session opens the store the settings
    name, in the background. ``token_verifier`` and ``auth`` turn on bearer-token
    authentication (shared HTTP server); ``clock`` replaces the real UTC clock of the store
    (for tests).
    """
    bus = InMemorySubscriptionBus()
    updates = ResourceUpdates(bus)
    with _plain_logging():
        mcp = DokoroServer(
            name,
            version=VERSION,
            instructions=instructions,
            lifespan=app_lifespan(settings, cwd, clock, store),
            log_level=settings.log_level,
            middleware=[store_middleware(), capture_middleware(), updates.middleware()],
            token_verifier=token_verifier,
            auth=auth,
            subscriptions=bus,
        )
    updates.bind(mcp)
    return mcp


@contextlib.contextmanager
def _plain_logging() -> Iterator[None]:
    """Let the SDK configure a plain stderr log handler rather than rich's.

    The SDK logs through rich whenever it can import it, and the ``dokoro`` CLI installs rich:
    importing it would cost every server start tens of milliseconds for a log handler. While
    the server is built, the SDK's ``configure_logging`` is the standard library's equivalent;
    a process that has loaded rich already (the CLI) keeps the SDK's.
    (``tests/test_architecture.py`` fails if rich is imported before ``tools/list`` is answered.)
    """
    if "rich" in sys.modules:
        yield
        return
    from mcp.server.mcpserver import server as sdk

    original = sdk.configure_logging  # type: ignore[attr-defined]
    sdk.configure_logging = _configure_logging  # type: ignore[attr-defined]
    try:
        yield
    finally:
        sdk.configure_logging = original  # type: ignore[attr-defined]


def _exit_now(status: int) -> None:
    """End the server's process now, without the interpreter's teardown.

    Unloading the modules of a server that has used its store (SQLAlchemy, numpy, the models) took
    130 ms, and a thread still opening the store would hold the exit for seconds (its imports, its
    migration: an unfinished one is rolled back by the database and redone by the next process).
    Buffered output and the log are flushed first.
    """
    import os

    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(status)


def _configure_logging(level: Literal["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"] = "INFO") -> None:
    logging.basicConfig(level=level, format="%(message)s", handlers=[logging.StreamHandler()])


def serve(
    name: str,
    *registers: Register,
    settings: DokoroSettings | None = None,
    argv: Sequence[str] | None = None,
    explicit: bool = False,
    prepared: Prepared | None = None,
) -> None:
    """Serve the tools of ``registers`` over stdio as the server ``name`` (an entry point's body).

    ``prepared`` is what the entry point's :func:`~dokoro_server.entry.prepare` settled before it
    imported the MCP SDK (the command line checked, the settings read); without it, this prepares
    now. The store starts opening in a background thread first thing here, before the tools are
    registered; a tool call waits for the store only while it is still opening. A store that
    cannot be opened is reported on stderr, answers every tool call with the reason and the fix,
    and ends the process with status 2. Once the client closes stdin the process ends at once
    (:func:`_exit_now`): the tool outcomes still queued are written, a store still opening is
    abandoned, and the work written behind the writes stays marked for the next process. A
    request line that cannot be read gets a JSON-RPC error reply (:mod:`dokoro_server.stdio`).
    The tools' schemas are kept between starts in ``.dokoro/cache/`` of the store folder
    (:class:`~dokoro_server.registration.ToolCache`).

    ``argv`` (default: the process's arguments) may only be ``--help`` or ``--version``, which
    print and exit before anything is opened or created; on a terminal the server prints its help
    instead of waiting for a client, unless ``explicit`` (``dokoro serve``: asked for by name).
    Ctrl-C ends it quietly (status 130).
    """
    from dokoro_server import heap
    from dokoro_server.entry import prepare

    if prepared is None:
        prepared = prepare(name, argv, settings=settings, explicit=explicit)
    settings, opener = prepared.settings, prepared.opener
    # The SDK and the tool modules are imported: the store opens while the server registers its
    # tools, answers the handshake and waits for the client (dokoro_server.entry says why not sooner).
    # tests/test_architecture.py reads this line: what is imported after it is the store's opening.
    log.debug("dokoro: opening the store in the background (at start, once the MCP SDK is loaded)")
    opener.start()
    status = 0
    mcp = build_server(settings, name=name, cwd=prepared.cwd, store=opener)
    cache = ToolCache(store_root(settings, prepared.cwd) / ".dokoro" / "cache" / f"tools-{name}.json")
    with cache.active():
        for register in registers:
            register(mcp)
    cache.save()
    heap.settle("tools-registered")  # the SDK, the tool modules and their schemas live as long as the process
    import anyio

    from dokoro_server.stdio import run_stdio

    try:
        anyio.run(run_stdio, mcp)
    except KeyboardInterrupt:
        status = 130
    # The client has gone and the lifespan has written the tool outcomes still queued. The store is
    # not closed: every committed write is in the database already, what a background step had
    # under way is rolled back by the database and redone by the next process (the writes leave
    # their marks, as after a kill), and a store still opening is abandoned. Closing would cost the
    # exit a checkpoint of SQLite's log and the joins of those steps.
    _exit_now(2 if opener.failed else status)
