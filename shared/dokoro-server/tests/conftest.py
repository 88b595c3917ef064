"""Fixtures of the kit's tests: a few tools of its own, served by the kit's test server."""

from __future__ import annotations

from typing import Annotated, Any

import pytest
from dokoro_server import Register, ToolSpec, add_tools, result, state
from mcp.server.mcpserver import Context, MCPServer
from mcp_types import CallToolResult
from pydantic import BaseModel, Field


class EchoOut(BaseModel):
    text: str


def kit_claim(ctx: Context, task: str) -> CallToolResult:
    """Claim the workspace."""
    claimed = state(ctx).store.working.workspace.claim(task)
    return result(f"claimed {claimed.session_id}")


def kit_tool_calls(ctx: Context) -> CallToolResult:
    """How many tool calls the claimed session has counted."""
    return result(str(state(ctx).store.working.workspace.status().tool_calls))


def kit_echo(
    ctx: Context, text: Annotated[str, Field(max_length=10, description="At most ten characters.")]
) -> Annotated[CallToolResult, EchoOut]:
    """Say it back."""
    return result(text, EchoOut(text=text))


TOOLS = [ToolSpec(kit_claim), ToolSpec(kit_tool_calls, read_only=True), ToolSpec(kit_echo, title="Echo")]


def register(mcp: MCPServer[Any]) -> None:
    add_tools(mcp, TOOLS)


@pytest.fixture
def registers() -> list[Register]:
    return [register]
