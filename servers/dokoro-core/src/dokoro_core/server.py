"""The core server: working and episodic memory over one store.

``register(mcp)`` adds the core tools, resources and prompts to any :class:`MCPServer` (the unified launcher uses it);
``create_server`` builds a server with only these tools; ``main`` serves them alone over stdio.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from dokoro_server import AppState, DokoroSettings, add_prompts, add_resources, add_tools, build_server, serve
from mcp.server.mcpserver import MCPServer

from dokoro_core import prompts, resources
from dokoro_core.tools import (
    archive,
    assets,
    blocks,
    claims,
    context,
    current,
    episodic,
    feedback,
    graph,
    handoffs,
    memories,
    memory_upkeep,
    notes,
    onboarding,
    plans,
    presence,
    proposals,
    questions,
    workspace,
)

if TYPE_CHECKING:
    from dokoro_store import Clock, Store

__all__ = ["NAME", "create_server", "main", "register"]

NAME = "dokoro-core"


def register(mcp: MCPServer[Any]) -> None:
    """Add every core tool, resource and prompt to ``mcp``."""
    for module in (
        workspace,
        current,
        questions,
        assets,
        episodic,
        memories,
        memory_upkeep,
        proposals,
        onboarding,
        graph,
        plans,
        archive,
        context,
        feedback,
        presence,
        claims,
        notes,
        blocks,
        handoffs,
    ):
        add_tools(mcp, module.TOOLS)
    add_resources(mcp, resources.RESOURCES, resources.TEMPLATES)
    add_prompts(mcp, prompts.PROMPTS)


def create_server(
    settings: DokoroSettings | None = None,
    *,
    cwd: Path | None = None,
    clock: Clock | None = None,
    store: Store | None = None,
) -> MCPServer[AppState]:
    """The core server with its tools registered."""
    mcp = build_server(settings or DokoroSettings(), name=NAME, cwd=cwd, clock=clock, store=store)
    register(mcp)
    return mcp


def main() -> None:
    """Entry point of ``dokoro-core``: serve the core tools over stdio."""
    serve(NAME, register)
