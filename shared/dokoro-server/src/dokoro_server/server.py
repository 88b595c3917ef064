"""Building and serving a dokoro MCP server: one lifespan, outcome capture, the caller's tools.

Every server's ``main()`` is ``serve(NAME, register)``; the unified launcher passes every
package's ``register``. ``build_server`` makes a server with no tools yet, for tests and for the
shared HTTP server.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mcp.server.mcpserver import MCPServer

from dokoro_server.app import AppState, StoreOpener
from dokoro_server.capture import capture_middleware
from dokoro_server.lifespan import app_lifespan
from dokoro_server.settings import DokoroSettings

if TYPE_CHECKING:
    from dokoro_store import Clock, Store
    from mcp.server.auth.provider import TokenVerifier
    from mcp.server.auth.settings import AuthSettings

__all__ = ["INSTRUCTIONS", "VERSION", "Register", "build_server", "serve"]

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
    """A server with the dokoro lifespan and outcome capture, and no tools yet.

    ``store`` is an already open store shared by every session, or a :class:`StoreOpener`
    (either way the caller closes it); without it each session opens the store the settings
    name, in the background. ``token_verifier`` and ``auth`` turn on bearer-token
    authentication (shared HTTP server); ``clock`` replaces the real UTC clock of the store
    (for tests).
    """
    return MCPServer(
        name,
        version=VERSION,
        instructions=instructions,
        lifespan=app_lifespan(settings, cwd, clock, store),
        log_level="WARNING",
        middleware=[capture_middleware()],
        token_verifier=token_verifier,
        auth=auth,
    )


def serve(name: str, *registers: Register, settings: DokoroSettings | None = None) -> None:
    """Serve the tools of ``registers`` over stdio as the server ``name`` (an entry point's body).

    The tools are listed before the store is open: it opens in the background once the client
    has its tool list (or at the first tool call), and a tool call waits for it. A store that
    cannot be opened is reported on stderr, answers every tool call with the reason and the
    fix, and ends the process with status 2.
    """
    settings = settings or DokoroSettings()
    opener = StoreOpener.for_settings(settings, Path.cwd())
    try:
        mcp = build_server(settings, name=name, store=opener)
        for register in registers:
            register(mcp)
        mcp.run("stdio")
    finally:
        opener.start()  # even when no tool was called: a broken store configuration is never silent
        opener.close()
    if opener.failed:
        raise SystemExit(2)
