"""``test_connection`` (reference §2.12, unified server only): is the server up, and on which store."""

from __future__ import annotations

from typing import Annotated, Any

from dokoro_server import VERSION, AppState, ToolSpec, acting_agent, add_tools, card, result, state
from dokoro_store.results.connection import ConnectionCheck
from mcp.server.mcpserver import Context, MCPServer
from mcp_types import CallToolResult

__all__ = ["TOOLS", "register"]


def test_connection(ctx: Context[AppState]) -> Annotated[CallToolResult, ConnectionCheck]:
    """Check that the dokoro server answers, and see which store folder and database it uses."""
    store = state(ctx).store
    check = ConnectionCheck(
        server="dokoro",
        version=VERSION,
        path=str(store.paths.root),
        backend=store.db.dialect,
        agent_id=acting_agent(ctx),
    )
    details = {"Dokoro Path": check.path, "Database": check.backend, "Agent": check.agent_id, "Version": check.version}
    return result(card("Server is working!", "", details), check)


TOOLS = [ToolSpec(test_connection, "Check the server answers", read_only=True, idempotent=True)]


def register(mcp: MCPServer[Any]) -> None:
    """Add ``test_connection`` to ``mcp``."""
    add_tools(mcp, TOOLS)
