"""The proposals ledger over MCP: the memories' upkeep the store proposes, listed, approved or rejected."""

from __future__ import annotations

from typing import Annotated, Literal

from dokoro_server import AppState, ToolSpec, acting_agent, result, state
from dokoro_server.bounds import Key, Note, Text, Title
from dokoro_store import InvalidArgumentError
from dokoro_store.results.proposals import ProposalsAnswer
from mcp.server.mcpserver import Context
from mcp_types import CallToolResult
from pydantic import Field

__all__ = ["TOOLS"]

Action = Literal["list", "approve", "reject"]
Status = Literal["proposed", "approved", "rejected", "all"]
Kind = Literal["merge", "summarise", "prune", "guardrail", "onboard"]


def dokoro_memory_proposals(
    ctx: Context[AppState],
    action: Annotated[Action, Field(description="list the proposals, or approve/reject one (by id).")] = "list",
    id: Annotated[Key | None, Field(description="The proposal to approve or reject (from action=list).")] = None,
    reason: Annotated[Note | None, Field(description="Why you reject it (kept with the proposal).")] = None,
    status: Annotated[Status, Field(description="Which proposals action=list shows.")] = "proposed",
    kind: Annotated[Kind | None, Field(description="Only proposals of this kind (action=list).")] = None,
    limit: Annotated[int, Field(ge=1, le=200, description="At most this many (action=list).")] = 20,
    text: Annotated[
        Text | None,
        Field(
            description="action=approve of a summarise or onboard proposal: your distilled text, written instead "
            "of its draft (what the episodes taught, what the project's files say, in a few lines)."
        ),
    ] = None,
    title: Annotated[
        Title | None,
        Field(description="action=approve with text: the summary's one-line title (default: the draft's)."),
    ] = None,
) -> Annotated[CallToolResult, ProposalsAnswer]:
    """Upkeep of the memories, proposed and never applied silently: merge near-duplicates (the newer one
    supersedes the older), summarise a run of aging episodes into one memory, prune (archive) an old memory
    never recalled, promote a recurring correction to a guardrail; onboard proposals hold what dokoro_onboard
    read in the project's files. action=list looks for new proposals first
    (bounded; the same one is never filed twice) and shows those you may decide — about your own memories,
    or ones no agent wrote — each with its evidence. approve applies it and records the decision; a summary or
    an onboard proposal shows a draft: pass text (and title) to write your distilled version instead.
    reject records it (nothing changes, and it is never proposed again)."""
    proposals = state(ctx).store.proposals
    agent = acting_agent(ctx)
    if action == "list":
        found = proposals.listing(status, kind=kind, limit=limit, acting_agent=agent)
        lines = [f"{found.filed} new proposal(s) filed by this pass."] if found.filed else []
        if not found.proposals:
            lines.append(f"No {'' if status == 'all' else status + ' '}proposals you may decide.")
        for p in found.proposals:
            first, *rest = p.lines()
            lines.append(f"- {p.id} [{p.status}] {first}")
            lines += [f"  {line}" for line in rest]
        if status == "proposed" and found.proposals:
            lines.append("Decide with action=approve or action=reject and the id.")
        return result("\n".join(lines), ProposalsAnswer(listing=found))
    if action != "approve" and (text is not None or title is not None):
        raise InvalidArgumentError(
            "text and title go with action=approve (a summary's distilled text); nothing changed"
        )
    if id is None or not id.strip():
        raise InvalidArgumentError(f"action={action} needs the proposal's id; action=list shows them")
    if action == "approve":
        done = proposals.approve(id, acting_agent=agent, text=text, title=title)
    else:
        done = proposals.reject(id, reason=reason, acting_agent=agent)
    p = done.proposal
    lines = [f"{p.status} {p.id} ({p.kind}): {p.outcome}"]
    lines += [f"- new {m.type} {m.id}: {m.title}" for m in done.created]
    lines += [f"- {m.id} is now {m.state}: {m.title}" for m in done.changed]
    return result("\n".join(lines), ProposalsAnswer(decision=done))


TOOLS = [
    ToolSpec(dokoro_memory_proposals, "Memory upkeep proposals", destructive=True),
]
