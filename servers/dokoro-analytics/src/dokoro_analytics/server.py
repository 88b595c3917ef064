"""The analytics server: where features stand, pending work, velocity, the timeline, test
checklists and the weekly compression, plus the task timer tools it shares with tracking.

``register(mcp)`` adds the analytics tools to any :class:`MCPServer` (the unified launcher uses
it); ``create_server`` builds a server with only these tools; ``main`` serves them over stdio.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from dokoro_server import AppState, DokoroSettings, add_tools, build_server, serve, task_tools
from mcp.server.mcpserver import MCPServer

from dokoro_analytics.tools import compress, insights

if TYPE_CHECKING:
    from dokoro_store import Clock, Store

__all__ = ["NAME", "create_server", "main", "register"]

NAME = "dokoro-analytics"


def register(mcp: MCPServer[Any]) -> None:
    """Add every analytics tool to ``mcp`` (the task tools once, whoever else registers them)."""
    task_tools.register(mcp)
    add_tools(mcp, [*insights.TOOLS, *compress.TOOLS])


def create_server(
    settings: DokoroSettings | None = None,
    *,
    cwd: Path | None = None,
    clock: Clock | None = None,
    store: Store | None = None,
) -> MCPServer[AppState]:
    """A server with the dokoro lifespan and the analytics tools only."""

    mcp = build_server(settings or DokoroSettings(), name=NAME, cwd=cwd, clock=clock, store=store)
    register(mcp)
    return mcp


def main() -> None:
    """Entry point of ``dokoro-analytics``: serve the analytics tools over stdio."""
    serve(NAME, register)
