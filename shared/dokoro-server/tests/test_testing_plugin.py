"""The testkit's ``connect(agent)``: each agent gets its own server over the same store."""

from __future__ import annotations

from typing import Any

import pytest
from dokoro_server import Register, ToolSpec, acting_agent, add_tools, result
from mcp.server.mcpserver import Context, MCPServer
from mcp_types import CallToolResult

pytestmark = pytest.mark.anyio


def kit_whoami(ctx: Context) -> CallToolResult:
    """Who this call acts for."""
    return result(acting_agent(ctx))


def register_whoami(mcp: MCPServer[Any]) -> None:
    add_tools(mcp, [ToolSpec(kit_whoami, read_only=True)])


@pytest.fixture
def registers(registers: list[Register]) -> list[Register]:
    return [*registers, register_whoami]


def _text(outcome: CallToolResult) -> str:
    assert not outcome.is_error
    return str(getattr(outcome.content[0], "text", ""))


async def test_connect_gives_each_agent_its_own_server_over_the_same_store(connect, store) -> None:
    async with connect("alice") as alice, connect("bob", auto_feedback=False) as bob:
        assert _text(await alice.call_tool("kit_whoami", {})) == "alice"
        assert _text(await bob.call_tool("kit_whoami", {})) == "bob"

        await alice.call_tool("kit_claim", {"task": "write the plugin test"})
        taken = await bob.call_tool("kit_claim", {"task": "take it over"})

    # Both servers serve one store: alice's claim holds the workspace lock bob's claim meets.
    assert taken.is_error and "Workspace is locked by" in str(getattr(taken.content[0], "text", ""))
    assert store.working.workspace.status().task == "write the plugin test"
