"""The unified server: every dokoro tool package registered on one MCP server.

It is a true superset of ``dokoro-core``: it starts from the same server (lifespan, outcome
capture) and calls each package's ``register(mcp)``. Adding a server package to the unified
launcher is one line in :data:`TOOL_PACKAGES`.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from dokoro_server import DokoroSettings, Register
    from dokoro_store import Store
    from mcp.server.auth.provider import TokenVerifier
    from mcp.server.auth.settings import AuthSettings
    from mcp.server.mcpserver import MCPServer

__all__ = ["BRIDGE_PACKAGES", "NAME", "TOOL_PACKAGES", "UNIFIED_TOOLS", "create_unified_server", "registers", "serve"]

NAME = "dokoro"

# Modules whose ``register(mcp)`` adds a server package's tools, in registration order.
# Tool names must be unique across them (a test checks that none shadows another).
TOOL_PACKAGES: tuple[str, ...] = (
    "dokoro_core.server",
    "dokoro_search.server",
    "dokoro_planning.server",
    "dokoro_tracking.server",
    "dokoro_analytics.server",
)

# Tools only the unified server has (reference §2.12), registered after the packages.
UNIFIED_TOOLS: tuple[str, ...] = ("dokoro.connection",)

# Registered only when DOKORO_ENABLE_TACHIBOT_BRIDGE=true.
BRIDGE_PACKAGES: tuple[str, ...] = ("dokoro_bridge.server",)


def registers(settings: DokoroSettings) -> list[Register]:
    """The ``register`` of every package the unified server serves, in order (the bridge only
    when ``settings.enable_tachibot_bridge``)."""
    modules = [*TOOL_PACKAGES, *UNIFIED_TOOLS]
    if settings.enable_tachibot_bridge:
        modules += BRIDGE_PACKAGES
    return [importlib.import_module(name).register for name in modules]


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
    from dokoro_server import build_server

    mcp = build_server(settings, name=NAME, cwd=cwd, store=store, token_verifier=token_verifier, auth=auth)
    for register in registers(settings):
        register(mcp)
    return mcp


def serve(path: Path | None = None, *, explicit: bool = False) -> None:
    """Serve every tool over stdio; ``path`` overrides ``DOKORO_PATH``. ``explicit``: asked for by
    ``dokoro serve`` (on a terminal it serves, saying so, rather than printing the help)."""
    from dokoro_server import DokoroSettings
    from dokoro_server.entry import prepare

    settings = DokoroSettings(path=path) if path is not None else DokoroSettings()
    if explicit:  # before the banner that says Ctrl-C stops: a Ctrl-C right after it stops too
        _stop_on_first_interrupt()
    # The command line and the settings settled before the packages (and the MCP SDK) are imported.
    prepared = prepare(NAME, (), settings=settings, explicit=explicit)
    from dokoro_server import serve as serve_tools

    serve_tools(NAME, *registers(settings), prepared=prepared)


def _stop_on_first_interrupt() -> None:
    """The first Ctrl-C ends ``dokoro serve`` (its banner says so).

    Python's own KeyboardInterrupt cancels the event loop, which then waits for the thread that
    reads stdin, blocked until a line or end-of-file comes: the first Ctrl-C did nothing visible.
    Ending the process at once is what closing stdin does too (:func:`dokoro_server.serve`): what
    a tool wrote is committed; what it left to write behind stays marked for the next process.
    """
    import contextlib
    import os
    import signal
    import sys

    def stop(_signal: int, _frame: object) -> None:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(OSError, ValueError):
                stream.flush()
        os.write(2, b"\ndokoro: stopped\n")
        os._exit(130)

    signal.signal(signal.SIGINT, stop)
