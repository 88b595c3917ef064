"""The core server: working and episodic memory over one store.

``register(mcp)`` adds the core tools to any :class:`MCPServer` (the unified launcher uses it);
``build_server`` makes a server with the dokoro lifespan; ``main`` serves the core tools alone.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from mcp.server.mcpserver import MCPServer

from dokoro_core.settings import DokoroSettings
from dokoro_core.toolkit import AppState, add_tools, app_lifespan, capture_middleware, open_store_or_exit
from dokoro_core.tools import (
    archive,
    assets,
    blocks,
    claims,
    context,
    current,
    episodic,
    feedback,
    graph,
    handoffs,
    memories,
    notes,
    plans,
    presence,
    questions,
    workspace,
)

if TYPE_CHECKING:
    from dokoro_store import Clock, Store
    from mcp.server.auth.provider import TokenVerifier
    from mcp.server.auth.settings import AuthSettings

__all__ = ["INSTRUCTIONS", "build_server", "main", "register"]

VERSION = "0.1.0"
INSTRUCTIONS = (
    "dokoro is this project's persistent memory. At session start call dokoro_briefing (rules, workspace, "
    "blockers, recent sessions) and dokoro_session_recall; claim the workspace with dokoro_workspace_claim, "
    "log progress with dokoro_session_log, keep durable knowledge with dokoro_remember / dokoro_recall, and "
    "at the end write dokoro_session_summary_add and dokoro_workspace_dump."
)


def register(mcp: MCPServer[Any]) -> None:
    """Add every core tool to ``mcp``."""
    for module in (
        workspace,
        current,
        questions,
        assets,
        episodic,
        memories,
        graph,
        plans,
        archive,
        context,
        feedback,
        presence,
        claims,
        notes,
        blocks,
        handoffs,
    ):
        add_tools(mcp, module.TOOLS)


def build_server(
    settings: DokoroSettings,
    *,
    name: str = "dokoro-core",
    cwd: Path | None = None,
    clock: Clock | None = None,
    store: Store | None = None,
    token_verifier: TokenVerifier | None = None,
    auth: AuthSettings | None = None,
) -> MCPServer[AppState]:
    """A server with the dokoro lifespan and outcome capture, and no tools yet.

    ``store`` is an already open store shared by every session (the caller closes it);
    ``token_verifier`` and ``auth`` turn on bearer-token authentication (shared HTTP server);
    ``clock`` replaces the real UTC clock of the store (for tests).
    """
    mcp: MCPServer[AppState] = MCPServer(
        name,
        version=VERSION,
        instructions=INSTRUCTIONS,
        lifespan=app_lifespan(settings, cwd, clock, store),
        log_level="WARNING",
        middleware=[capture_middleware()],
        token_verifier=token_verifier,
        auth=auth,
    )
    return mcp


def create_server(
    settings: DokoroSettings | None = None,
    *,
    cwd: Path | None = None,
    clock: Clock | None = None,
    store: Store | None = None,
) -> MCPServer[AppState]:
    """The core server with its tools registered."""
    mcp = build_server(settings or DokoroSettings(), cwd=cwd, clock=clock, store=store)
    register(mcp)
    return mcp


def main() -> None:
    """Entry point of ``dokoro-core``: serve the core tools over stdio."""
    settings = DokoroSettings()
    store = open_store_or_exit(settings, Path.cwd())
    try:
        create_server(settings, store=store).run("stdio")
    finally:
        store.close()
