"""Presence tools: say you are here, and see which agents are working on this store."""

from __future__ import annotations

from typing import Annotated, Literal

from dokoro_server import AppState, ToolSpec, acting_agent, result, state
from dokoro_store.results.coordination import Presence, PresenceList
from mcp.server.mcpserver import Context
from mcp_types import CallToolResult
from pydantic import Field

__all__ = ["TOOLS"]


def dokoro_presence_ping(
    ctx: Context[AppState],
    agent_id: Annotated[
        str | None, Field(max_length=200, description="You; default: DOKORO_AGENT_ID or your token's agent.")
    ] = None,
    session_id: Annotated[str | None, Field(max_length=200, description="Your current session id.")] = None,
    status: Annotated[Literal["active", "idle", "away"], Field(description="What you are doing.")] = "active",
    current_focus: Annotated[
        str | None, Field(max_length=2000, description="What you are working on, in a line.")
    ] = None,
) -> Annotated[CallToolResult, Presence]:
    """Heartbeat: tell other agents you are here and what you are on. Ping every few minutes while
    working; after 15 minutes without a ping you count as gone and your file claims can be taken over."""
    presence = state(ctx).store.coord.presence.ping(
        acting_agent(ctx, agent_id), session_id=session_id, status=status, current_focus=current_focus
    )
    return result(f"presence updated for {presence.agent_id}", presence)


def dokoro_presence_list(
    ctx: Context[AppState],
    ttl_seconds: Annotated[int, Field(ge=1, le=86400, description="Count agents seen within this many seconds.")] = 900,
) -> Annotated[CallToolResult, PresenceList]:
    """Which agents are working on this store right now, most recently seen first."""
    agents = state(ctx).store.coord.presence.list(ttl_seconds)
    out = PresenceList(ttl_seconds=ttl_seconds, agents=agents)
    if not agents:
        return result("(no agents active)", out)
    lines = [
        f"{a.agent_id} [{a.status}] — {a.current_focus or 'no focus set'} (last seen {a.seconds_ago}s ago)"
        for a in agents
    ]
    return result("\n".join(lines), out)


TOOLS = [
    ToolSpec(dokoro_presence_ping, "Presence heartbeat"),
    ToolSpec(dokoro_presence_list, "Agents present", read_only=True, idempotent=True),
]
