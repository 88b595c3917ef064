"""Presence tools: say you are here, and see which agents are working on this store."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from dokoro_server import ToolSpec, acting_agent, result, state
from mcp.server.mcpserver import Context
from mcp_types import CallToolResult
from pydantic import BaseModel, Field

__all__ = ["TOOLS"]


class PresenceOut(BaseModel):
    agent_id: str
    session_id: str | None
    status: str
    current_focus: str | None
    last_heartbeat: str
    seconds_ago: int
    heartbeat_seq: int


class PresenceListOut(BaseModel):
    ttl_seconds: int
    agents: list[PresenceOut]


def _epoch_iso(epoch: int) -> str:
    from datetime import UTC, datetime

    from dokoro_store.clock import iso

    return iso(datetime.fromtimestamp(epoch, UTC))


def _out(presence: Any) -> PresenceOut:
    return PresenceOut(
        agent_id=presence.agent_id,
        session_id=presence.session_id,
        status=presence.status,
        current_focus=presence.current_focus,
        last_heartbeat=_epoch_iso(presence.last_heartbeat),
        seconds_ago=presence.seconds_ago,
        heartbeat_seq=presence.heartbeat_seq,
    )


def dokoro_presence_ping(
    ctx: Context,
    agent_id: Annotated[
        str | None, Field(max_length=200, description="You; default: DOKORO_AGENT_ID or your token's agent.")
    ] = None,
    session_id: Annotated[str | None, Field(max_length=200, description="Your current session id.")] = None,
    status: Annotated[Literal["active", "idle", "away"], Field(description="What you are doing.")] = "active",
    current_focus: Annotated[
        str | None, Field(max_length=2000, description="What you are working on, in a line.")
    ] = None,
) -> Annotated[CallToolResult, PresenceOut]:
    """Heartbeat: tell other agents you are here and what you are on. Ping every few minutes while
    working; after 15 minutes without a ping you count as gone and your file claims can be taken over."""
    presence = state(ctx).store.coord.presence.ping(
        acting_agent(ctx, agent_id), session_id=session_id, status=status, current_focus=current_focus
    )
    return result(f"presence updated for {presence.agent_id}", _out(presence))


def dokoro_presence_list(
    ctx: Context,
    ttl_seconds: Annotated[int, Field(ge=1, le=86400, description="Count agents seen within this many seconds.")] = 900,
) -> Annotated[CallToolResult, PresenceListOut]:
    """Which agents are working on this store right now, most recently seen first."""
    agents = state(ctx).store.coord.presence.list(ttl_seconds)
    out = PresenceListOut(ttl_seconds=ttl_seconds, agents=[_out(agent) for agent in agents])
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
