"""The tachibot bridge: a tool pack that the search server and the unified server add when
``DOKORO_ENABLE_TACHIBOT_BRIDGE=true``, and a server of its own (``dokoro-bridge``).

``register(mcp)`` adds the three ``bridge_*`` tools to any :class:`MCPServer`. The unified
launcher names this module in its ``BRIDGE_PACKAGES``; the search server, which imports no other
server, finds ``register`` through the ``dokoro.bridge`` entry point this package declares.
``dokoro-bridge`` serves them only with the flag too (started without it, it says so and exits 2).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from dokoro_server import AppState, DokoroSettings, add_tools, build_server, serve
from mcp.server.mcpserver import MCPServer

from dokoro_bridge.tools import bridge

if TYPE_CHECKING:
    from dokoro_store import Clock, Store

__all__ = ["NAME", "create_server", "main", "register"]

NAME = "dokoro-bridge"


def register(mcp: MCPServer[Any]) -> None:
    """Add the bridge tools to ``mcp``."""
    add_tools(mcp, bridge.TOOLS)


def create_server(
    settings: DokoroSettings | None = None,
    *,
    cwd: Path | None = None,
    clock: Clock | None = None,
    store: Store | None = None,
) -> MCPServer[AppState]:
    """A server with the dokoro lifespan and the bridge tools only."""
    mcp = build_server(settings or DokoroSettings(), name=NAME, cwd=cwd, clock=clock, store=store)
    register(mcp)
    return mcp


def main() -> None:
    """Entry point of ``dokoro-bridge``: serve the bridge tools over stdio, only with the flag
    ``DOKORO_ENABLE_TACHIBOT_BRIDGE=true`` (as every other server); without it, say so and exit 2."""
    import sys

    settings = DokoroSettings()
    if not settings.enable_tachibot_bridge and not sys.argv[1:]:  # --help and --version work without it
        sys.stderr.write(
            "dokoro-bridge: the bridge tools are served only with DOKORO_ENABLE_TACHIBOT_BRIDGE=true; "
            "set it in this server's env in the MCP client's configuration\n"
        )
        raise SystemExit(2)
    serve(NAME, register, settings=settings)
