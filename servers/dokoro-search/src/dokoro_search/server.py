"""The search server: documents, hybrid search, markdown search and ambient git context.

``register(mcp)`` adds the search tools to any :class:`MCPServer` (the unified launcher uses it);
``create_server`` builds a standalone server on the dokoro server kit; ``main`` serves the
search tools alone over stdio (``dokoro-search``). Nothing heavy (numpy, model2vec, LanceDB) is
imported until a tool needs it.

With ``DOKORO_ENABLE_TACHIBOT_BRIDGE=true`` the standalone server also serves the bridge tools.
It imports no other server: it loads the ``register`` of every installed ``dokoro.bridge`` entry
point (``dokoro-bridge`` declares one), so ``uvx --with dokoro-bridge dokoro-search`` is the
search server with the bridge. ``register`` itself adds the search tools only (the unified
launcher adds the bridge on its own).
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dokoro_server import AppState, DokoroSettings, Register, add_tools, build_server, serve
from mcp.server.mcpserver import MCPServer

from dokoro_search.tools import ambient, markdown, search

if TYPE_CHECKING:
    from dokoro_store import Clock, Store

__all__ = ["BRIDGE_ENTRY_POINTS", "NAME", "bridge_registers", "create_server", "main", "register"]

log = logging.getLogger("dokoro")

NAME = "dokoro-search"
BRIDGE_ENTRY_POINTS = "dokoro.bridge"


def register(mcp: MCPServer[Any]) -> None:
    """Add every search tool to ``mcp``."""
    for module in (search, markdown, ambient):
        add_tools(mcp, module.TOOLS)


def bridge_registers(settings: DokoroSettings) -> list[Register]:
    """The installed bridge tool packs when ``settings.enable_tachibot_bridge``, else none."""
    if not settings.enable_tachibot_bridge:
        return []
    from importlib.metadata import entry_points

    found = sorted(entry_points(group=BRIDGE_ENTRY_POINTS), key=lambda point: point.name)
    if not found:
        log.warning(
            "dokoro-search: DOKORO_ENABLE_TACHIBOT_BRIDGE is set but no bridge is installed; serving without it "
            "(install dokoro-bridge next to dokoro-search, e.g. `uvx --with dokoro-bridge dokoro-search`)"
        )
    return [point.load() for point in found]


def create_server(
    settings: DokoroSettings | None = None,
    *,
    cwd: Path | None = None,
    clock: Clock | None = None,
    store: Store | None = None,
) -> MCPServer[AppState]:
    """The search server with its tools registered (and the bridge's, when the settings enable it)."""
    settings = settings or DokoroSettings()
    mcp = build_server(settings, name=NAME, cwd=cwd, clock=clock, store=store)
    for add in (register, *bridge_registers(settings)):
        add(mcp)
    return mcp


def main() -> None:
    """Entry point of ``dokoro-search``: serve the search tools (and the bridge's, when enabled) over stdio."""
    settings = DokoroSettings()
    serve(NAME, register, *bridge_registers(settings), settings=settings)
