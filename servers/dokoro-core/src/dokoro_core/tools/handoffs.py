"""Handoff tools: leave work for another agent; exactly one taker claims it."""

from __future__ import annotations

from typing import Annotated

from dokoro_server import AppState, ToolSpec, acting_agent, result, state
from dokoro_server.bounds import Key, Note, RowId
from dokoro_store.results.coordination import Handoff, HandoffInbox
from mcp.server.mcpserver import Context
from mcp_types import CallToolResult
from pydantic import Field

__all__ = ["TOOLS"]


def dokoro_handoff_write(
    ctx: Context[AppState],
    summary: Annotated[str, Field(min_length=1, max_length=20000, description="What is handed over, and its state.")],
    from_agent: Annotated[
        str | None, Field(max_length=200, description="You; default: DOKORO_AGENT_ID or your token's agent.")
    ] = None,
    open_items: Annotated[list[Note] | None, Field(max_length=100, description="What is left to do.")] = None,
    to_agent: Annotated[str | None, Field(max_length=200, description="For this agent only; default: anyone.")] = None,
    session_id: Annotated[str | None, Field(max_length=200, description="The session being handed over.")] = None,
) -> Annotated[CallToolResult, Handoff]:
    """Hand work over to another agent (or to whoever picks it up): a summary and the open items."""
    handoff = state(ctx).store.coord.handoffs.write(
        acting_agent(ctx, from_agent), summary, open_items=open_items, to_agent=to_agent, session_id=session_id
    )
    return result(f"handoff #{handoff.id} recorded by {handoff.from_agent}", handoff)


def dokoro_handoff_inbox(
    ctx: Context[AppState],
    agent_id: Annotated[
        Key | None, Field(description="Only handoffs for this agent or for anyone; default: every open one.")
    ] = None,
    limit: Annotated[int, Field(ge=1, le=100, description="How many handoffs.")] = 20,
) -> Annotated[CallToolResult, HandoffInbox]:
    """Open handoffs waiting to be picked up, newest first."""
    from dokoro_store import iso

    handoffs = state(ctx).store.coord.handoffs.inbox(agent_id, limit=limit)
    if not handoffs:
        return result("(no open handoffs)", HandoffInbox(handoffs=[]))
    lines = []
    for h in handoffs:
        to = f" -> {h.to_agent}" if h.to_agent else ""
        items = f" | open: {'; '.join(h.open_items)}" if h.open_items else ""
        lines.append(f"#{h.id} [{iso(h.created_at)}] from {h.from_agent}{to}: {h.summary}{items}")
    return result("\n".join(lines), HandoffInbox(handoffs=handoffs))


def dokoro_handoff_claim(
    ctx: Context[AppState],
    handoff_id: Annotated[RowId, Field(gt=0, description="The #id from dokoro_handoff_inbox.")],
    agent_id: Annotated[
        str | None, Field(max_length=200, description="You; default: DOKORO_AGENT_ID or your token's agent.")
    ] = None,
) -> Annotated[CallToolResult, Handoff]:
    """Take an open handoff. Atomic: if several agents try, exactly one gets it."""
    handoff = state(ctx).store.coord.handoffs.claim(handoff_id, acting_agent(ctx, agent_id))
    return result(f"handoff #{handoff.id} claimed by {handoff.claimed_by}", handoff)


TOOLS = [
    ToolSpec(dokoro_handoff_write, "Write a handoff"),
    ToolSpec(dokoro_handoff_inbox, "Open handoffs", read_only=True, idempotent=True),
    ToolSpec(dokoro_handoff_claim, "Claim a handoff"),
]
