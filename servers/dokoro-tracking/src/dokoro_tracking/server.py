"""The tracking server: issues, features, the week's items, task timers, backups and health.

``register(mcp)`` adds the tracking tools to any :class:`MCPServer` (the unified launcher uses it);
``create_server`` builds a server with only these tools; ``main`` serves them over stdio. The task
timer tools come from the kit (:mod:`dokoro_server.task_tools`), shared with the analytics server.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from dokoro_server import AppState, DokoroSettings, add_tools, build_server, serve, task_tools
from mcp.server.mcpserver import MCPServer

from dokoro_tracking.tools import features, issues, upkeep, weekly

if TYPE_CHECKING:
    from dokoro_store import Clock, Store

__all__ = ["NAME", "create_server", "main", "register"]

NAME = "dokoro-tracking"


def register(mcp: MCPServer[Any]) -> None:
    """Add every tracking tool to ``mcp`` (the task tools once, whoever else registers them)."""
    add_tools(mcp, [*issues.TOOLS, *features.TOOLS, *weekly.TOOLS, *upkeep.TOOLS])
    task_tools.register(mcp)


def create_server(
    settings: DokoroSettings | None = None,
    *,
    cwd: Path | None = None,
    clock: Clock | None = None,
    store: Store | None = None,
) -> MCPServer[AppState]:
    """A server with the dokoro lifespan and the tracking tools only."""

    mcp = build_server(settings or DokoroSettings(), name=NAME, cwd=cwd, clock=clock, store=store)
    register(mcp)
    return mcp


def main() -> None:
    """Entry point of ``dokoro-tracking``: serve the tracking tools over stdio."""
    serve(NAME, register)
