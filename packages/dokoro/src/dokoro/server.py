"""The unified server: every dokoro tool package registered on one MCP server.

It is a true superset of ``dokoro-core``: it starts from the same server (lifespan, outcome
capture) and calls each package's ``register(mcp)``. Adding a server package to the unified
launcher is one line in :data:`TOOL_PACKAGES`.
"""

from __future__ import annotations

import importlib
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from dokoro_core.settings import DokoroSettings
    from dokoro_store import Store
    from mcp.server.auth.provider import TokenVerifier
    from mcp.server.auth.settings import AuthSettings
    from mcp.server.mcpserver import MCPServer

__all__ = ["BRIDGE_PACKAGES", "TOOL_PACKAGES", "create_unified_server", "serve"]

log = logging.getLogger("dokoro")

NAME = "dokoro"

# Modules whose ``register(mcp)`` adds a server package's tools, in registration order.
# Tool names must be unique across them (a test checks that none shadows another).
TOOL_PACKAGES: tuple[str, ...] = (
    "dokoro_core.server",
    "dokoro_search.server",
    "dokoro_planning.server",
    # "dokoro_tracking.server",
    # "dokoro_analytics.server",
)

# Registered only when DOKORO_ENABLE_TACHIBOT_BRIDGE=true.
BRIDGE_PACKAGES: tuple[str, ...] = (
    # "dokoro_bridge.server",
)


def _register(mcp: MCPServer[Any], module_name: str) -> None:
    module = importlib.import_module(module_name)
    module.register(mcp)


def create_unified_server(
    settings: DokoroSettings,
    cwd: Path | None = None,
    *,
    store: Store | None = None,
    token_verifier: TokenVerifier | None = None,
    auth: AuthSettings | None = None,
) -> MCPServer[Any]:
    """One server named ``dokoro`` with the tools of every package in :data:`TOOL_PACKAGES`
    (plus :data:`BRIDGE_PACKAGES` when ``settings.enable_tachibot_bridge``).

    ``store`` is an open store shared by every session; ``token_verifier``/``auth`` turn on
    bearer-token authentication for the shared HTTP server.
    """
    from dokoro_core.server import build_server

    mcp = build_server(settings, name=NAME, cwd=cwd, store=store, token_verifier=token_verifier, auth=auth)
    for module_name in TOOL_PACKAGES:
        _register(mcp, module_name)
    if settings.enable_tachibot_bridge:
        if not BRIDGE_PACKAGES:
            log.warning(
                "dokoro: DOKORO_ENABLE_TACHIBOT_BRIDGE is set, but this build has no bridge tools yet; "
                "serving without them"
            )
        for module_name in BRIDGE_PACKAGES:
            _register(mcp, module_name)
    return mcp


def serve(path: Path | None = None) -> None:
    """Serve every tool over stdio; ``path`` overrides ``DOKORO_PATH``."""
    from dokoro_core.settings import DokoroSettings
    from dokoro_core.toolkit import open_store_or_exit

    settings = DokoroSettings(path=path) if path is not None else DokoroSettings()
    store = open_store_or_exit(settings, Path.cwd())
    try:
        create_unified_server(settings, store=store).run("stdio")
    finally:
        store.close()
