"""The planning server: feature plans, research capture, next steps, conflicts, duplicates and
regression history over one store.

``register(mcp)`` adds the planning tools and the plan-feature prompt to any :class:`MCPServer`
(the unified launcher uses it); ``create_server`` builds a server with only these; ``main`` serves
them over stdio.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from dokoro_server import AppState, DokoroSettings, add_prompts, add_tools, build_server, serve
from mcp.server.mcpserver import MCPServer

from dokoro_planning import prompts
from dokoro_planning.tools import planning

if TYPE_CHECKING:
    from dokoro_store import Clock, Store

__all__ = ["NAME", "create_server", "main", "register"]

NAME = "dokoro-planning"


def register(mcp: MCPServer[Any]) -> None:
    """Add every planning tool and prompt to ``mcp``."""
    add_tools(mcp, planning.TOOLS)
    add_prompts(mcp, prompts.PROMPTS)


def create_server(
    settings: DokoroSettings | None = None,
    *,
    cwd: Path | None = None,
    clock: Clock | None = None,
    store: Store | None = None,
) -> MCPServer[AppState]:
    """A server with the dokoro lifespan and the planning tools only."""

    mcp = build_server(settings or DokoroSettings(), name=NAME, cwd=cwd, clock=clock, store=store)
    register(mcp)
    return mcp


def main() -> None:
    """Entry point of ``dokoro-planning``: serve the planning tools over stdio."""
    serve(NAME, register)
