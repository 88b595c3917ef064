"""The planning server: feature plans, research capture, next steps, conflicts, duplicates and
regression history over one store.

``register(mcp)`` adds the planning tools to any :class:`MCPServer` (the unified launcher uses it);
``create_server`` builds a server with only these tools; ``main`` serves them over stdio.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from dokoro_core.settings import DokoroSettings
from dokoro_core.toolkit import add_tools, open_store_or_exit
from mcp.server.mcpserver import MCPServer

from dokoro_planning.tools import planning

if TYPE_CHECKING:
    from dokoro_core.toolkit import AppState
    from dokoro_store import Clock, Store

__all__ = ["NAME", "create_server", "main", "register"]

NAME = "dokoro-planning"


def register(mcp: MCPServer[Any]) -> None:
    """Add every planning tool to ``mcp``."""
    add_tools(mcp, planning.TOOLS)


def create_server(
    settings: DokoroSettings | None = None,
    *,
    cwd: Path | None = None,
    clock: Clock | None = None,
    store: Store | None = None,
) -> MCPServer[AppState]:
    """A server with the dokoro lifespan and the planning tools only."""
    from dokoro_core.server import build_server

    mcp = build_server(settings or DokoroSettings(), name=NAME, cwd=cwd, clock=clock, store=store)
    register(mcp)
    return mcp


def main() -> None:
    """Entry point of ``dokoro-planning``: serve the planning tools over stdio."""
    settings = DokoroSettings()
    store = open_store_or_exit(settings, Path.cwd())
    try:
        create_server(settings, store=store).run("stdio")
    finally:
        store.close()
