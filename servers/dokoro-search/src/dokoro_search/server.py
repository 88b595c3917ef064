"""The search server: documents, hybrid search, markdown search and ambient git context.

``register(mcp)`` adds the search tools to any :class:`MCPServer` (the unified launcher uses it);
``create_server`` builds a standalone server on the dokoro server kit; ``main`` serves the
search tools alone over stdio (``dokoro-search``). Nothing heavy (numpy, model2vec, LanceDB) is
imported until a tool needs it.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from dokoro_server import AppState, DokoroSettings, add_tools, build_server, serve
from mcp.server.mcpserver import MCPServer

from dokoro_search.tools import ambient, markdown, search

if TYPE_CHECKING:
    from dokoro_store import Clock, Store

__all__ = ["NAME", "create_server", "main", "register"]

NAME = "dokoro-search"


def register(mcp: MCPServer[Any]) -> None:
    """Add every search tool to ``mcp``."""
    for module in (search, markdown, ambient):
        add_tools(mcp, module.TOOLS)


def create_server(
    settings: DokoroSettings | None = None,
    *,
    cwd: Path | None = None,
    clock: Clock | None = None,
    store: Store | None = None,
) -> MCPServer[AppState]:
    """The search server with its tools registered."""
    mcp = build_server(settings or DokoroSettings(), name=NAME, cwd=cwd, clock=clock, store=store)
    register(mcp)
    return mcp


def main() -> None:
    """Entry point of ``dokoro-search``: serve the search tools over stdio."""
    serve(NAME, register)
