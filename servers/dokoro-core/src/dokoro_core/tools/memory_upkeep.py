"""Memory upkeep tools: what is stale or waits for review, and renewing or retiring a memory."""

from __future__ import annotations

from typing import Annotated

from dokoro_server import AppState, ToolSpec, acting_agent, result, state
from dokoro_server.bounds import IsoDate, Key, Note
from dokoro_store.results.memory_upkeep import MemoryReviewList, Renewed
from mcp.server.mcpserver import Context
from mcp_types import CallToolResult
from pydantic import Field

__all__ = ["TOOLS"]


def dokoro_memory_review(
    ctx: Context[AppState],
    limit: Annotated[int, Field(ge=1, le=1000, description="Stale memories listed at most (all are counted).")] = 50,
) -> Annotated[CallToolResult, MemoryReviewList]:
    """What waits for upkeep: stale memories (past valid_until or review_after, or depending on a memory that
    was retired) with why, memories proposed by agents that wait for a person's review, and the open upkeep
    proposals. Renew or retire your own stale memories with dokoro_memory_renew."""
    review = state(ctx).store.upkeep.review(limit=limit)
    lines = [review.health or "memory health: nothing waits for review"]
    if review.stale:
        shown = f"{len(review.stale)} of {review.stale_total}" if review.stale_total > len(review.stale) else ""
        lines += ["", f"## Stale memories ({shown or review.stale_total})"]
        for entry in review.stale:
            m = entry.memory
            owner = f", by {m.agent_id}" if m.agent_id else ""
            lines.append(f"- {m.id} [{m.type}{owner}] {m.title} — {entry.stale}")
        lines.append(
            "Renew: dokoro_memory_renew(id=..., review_after='YYYY-MM-DD' and/or valid_until=...), "
            "or retire: dokoro_memory_renew(id=..., retire=true, reason=...)."
        )
    if review.pending:
        lines += ["", f"## Proposed, waiting for a person ({len(review.pending)})"]
        lines += [f"- {m.id} [{m.type}] {m.title}" for m in review.pending]
        lines.append("A person approves or rejects them: `dokoro memory approve|reject ID`.")
    if review.proposals:
        lines += ["", "## Open upkeep proposals"]
        lines += [f"- {kind}: {count}" for kind, count in sorted(review.proposals.items())]
        lines.append("See them with `dokoro memory proposals list`.")
    return result("\n".join(lines), review)


def dokoro_memory_renew(
    ctx: Context[AppState],
    id: Annotated[Key, Field(description="The memory to renew or retire (one you wrote).")],
    review_after: Annotated[
        IsoDate | None, Field(description="New ISO date after which it should be re-checked (later than now).")
    ] = None,
    valid_until: Annotated[
        IsoDate | None, Field(description="New ISO date after which it no longer holds (later than now).")
    ] = None,
    retire: Annotated[
        bool, Field(description="Retire it instead (deprecated, history kept); its dependents become stale.")
    ] = False,
    reason: Annotated[Note | None, Field(description="Why it no longer holds (required with retire=true).")] = None,
) -> Annotated[CallToolResult, Renewed]:
    """Renew one of your stale memories: push review_after and/or valid_until forward, and confirm it still holds
    although a memory it depends on was retired (a call without dates does only that). Or retire it with
    retire=true and a reason: it is deprecated (kept, ranked last) and the memories depending on it become stale."""
    from dokoro_store import InvalidArgumentError  # not at import: tools/list loads no store

    if reason is not None and not retire:
        raise InvalidArgumentError("reason goes with retire=true (why the memory no longer holds); nothing changed")
    done = state(ctx).store.upkeep.renew(
        id,
        review_after=review_after,
        valid_until=valid_until,
        retire=retire,
        reason=reason,
        acting_agent=acting_agent(ctx),
    )
    memory = done.memory
    if done.action == "retired":
        lines = [f"retired {memory.id}: {memory.title} — deprecated: {memory.state_reason}"]
        if done.dependents_flagged:
            lines.append(
                f"{len(done.dependents_flagged)} memory(ies) depending on it are now stale until renewed: "
                + ", ".join(done.dependents_flagged)
            )
    else:
        dates = [
            f"{name} {value:%Y-%m-%dT%H:%M:%SZ}"
            for name, value in (("review_after", memory.review_after), ("valid_until", memory.valid_until))
            if value is not None
        ]
        lines = [f"renewed {memory.id}: {memory.title}" + (f" ({', '.join(dates)})" if dates else "")]
        if done.stale:
            lines.append(f"still {done.stale}")
    return result("\n".join(lines), done)


TOOLS = [
    ToolSpec(dokoro_memory_review, "Memories to review", read_only=True, idempotent=True),
    ToolSpec(dokoro_memory_renew, "Renew or retire a memory", destructive=True),
]
