"""The search server: documents, hybrid search, markdown search and ambient git context.

``register(mcp)`` adds the search tools to any :class:`MCPServer` (the unified launcher uses it);
``create_server`` builds a standalone server on the dokoro-core lifespan; ``main`` serves the
search tools alone over stdio (``dokoro-search``). Nothing heavy (numpy, model2vec, LanceDB) is
imported until a tool needs it.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from dokoro_core.server import build_server
from dokoro_core.settings import DokoroSettings
from dokoro_core.toolkit import AppState, add_tools, open_store_or_exit
from mcp.server.mcpserver import MCPServer

from dokoro_search.tools import ambient, markdown, search

if TYPE_CHECKING:
    from dokoro_store import Clock, Store

__all__ = ["create_server", "main", "register"]


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
    mcp = build_server(settings or DokoroSettings(), name="dokoro-search", cwd=cwd, clock=clock, store=store)
    register(mcp)
    return mcp


def main() -> None:
    """Entry point of ``dokoro-search``: serve the search tools over stdio."""
    settings = DokoroSettings()
    store = open_store_or_exit(settings, Path.cwd())
    try:
        create_server(settings, store=store).run("stdio")
    finally:
        store.close()
