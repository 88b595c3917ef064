"""File claim tools: advisory leases on paths, so agents editing one tree do not collide.

Each result has two text blocks, as in the reference: a summary for the agent, then the same
report as a JSON string; plus the report as structured content.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

from dokoro_server import AppState, ToolSpec, acting_agent, state
from dokoro_server.bounds import Key, PathText
from dokoro_store.results.base import Result
from dokoro_store.results.coordination import ClaimList, ClaimOutcome, ReleaseOutcome
from mcp.server.mcpserver import Context
from mcp_types import CallToolResult, TextContent
from pydantic import Field

__all__ = ["TOOLS"]

PathList = Annotated[
    list[PathText],
    Field(min_length=1, max_length=50, description="Files or folders, relative to root (or absolute under it)."),
]
AgentArg = Annotated[
    str | None, Field(max_length=200, description="You; default: DOKORO_AGENT_ID or your token's agent.")
]
RootArg = Annotated[
    PathText | None, Field(description="The folder paths are relative to; default: the server's working directory.")
]


def _two_blocks(human: str, payload: dict[str, Any], data: Result) -> CallToolResult:
    return CallToolResult(
        content=[
            TextContent(type="text", text=human),
            TextContent(type="text", text=json.dumps(payload, ensure_ascii=False)),
        ],
        structured_content=data.model_dump(mode="json"),
    )


def _root(ctx: Context[AppState], root: str | None) -> Path:
    app = state(ctx)
    if not root or not root.strip():
        return app.cwd
    return app.cwd / Path(root.strip()).expanduser()


def _epoch_iso(epoch: int) -> str:
    from datetime import UTC, datetime

    from dokoro_store import iso

    return iso(datetime.fromtimestamp(epoch, UTC))


_DONE = {
    "claimed": "claimed",
    "renewed": "renewed",
    "taken_over": "taken over from {previous} (its lease expired or its presence is stale)",
    "taken_over_forced": "taken over from {previous} (FORCED)",
}


def dokoro_file_claim(
    ctx: Context[AppState],
    paths: PathList,
    agent_id: AgentArg = None,
    session_id: Annotated[
        str | None,
        Field(
            max_length=200,
            description="Session to tag the claims with (released when it is dumped with keepActive=false); "
            "default: the workspace session this server claimed.",
        ),
    ] = None,
    intent: Annotated[
        str | None, Field(max_length=2000, description="What you are about to do to these files.")
    ] = None,
    ttl_seconds: Annotated[int, Field(ge=1, le=3600, description="Lease length; claim again to renew.")] = 300,
    root: RootArg = None,
    force: Annotated[bool, Field(description="Take over paths another agent holds live (recorded as forced).")] = False,
) -> Annotated[CallToolResult, ClaimOutcome]:
    """Claim files before editing them, so other agents keep off. All-or-nothing: if any path is
    held live by another agent, NOTHING is claimed and you get who holds what (not an error).
    Claiming your own paths again renews the lease; release them with dokoro_file_release."""
    app = state(ctx)
    outcome = app.store.coord.claims.claim(
        paths,
        acting_agent(ctx, agent_id),
        root=_root(ctx, root),
        session_id=session_id or app.store.working.workspace.claimed_session,
        intent=intent,
        ttl_seconds=ttl_seconds,
        force=force,
    )
    report = outcome.report
    items = [item.model_dump(exclude_none=True) for item in report]
    if not outcome.claimed:
        lines = ["CONFLICT — NOTHING was claimed (all-or-nothing):"]
        for item in report:
            if item.holder is not None:
                h = item.holder
                why = f", intent: {h.intent}" if h.intent else ""
                lines.append(
                    f"  - {item.path} — held by {h.agent_id} (expires in {h.expires_in_seconds}s, "
                    f"presence {h.presence}{why})"
                )
            else:
                lines.append(f"  - {item.path} — free (would acquire)")
        lines.append(
            "Wait for the holder to release or the lease to expire, coordinate with it "
            "(dokoro_shared_note_append, dokoro_handoff_write), or claim with force=true to take over."
        )
        return _two_blocks("\n".join(lines), {"claimed": False, "report": items}, outcome)
    assert outcome.expires_at is not None
    lines = [
        f"claimed {len(report)} path(s) for {outcome.agent_id} for {outcome.expires_in_seconds}s "
        f"(until {_epoch_iso(outcome.expires_at)}):"
    ]
    for item in report:
        lines.append(f"  - {item.path} — {_DONE[item.status].format(previous=item.previous_holder)}")
    payload = {
        "claimed": True,
        "expires_at": outcome.expires_at,
        "expires_in_seconds": outcome.expires_in_seconds,
        "report": items,
    }
    return _two_blocks("\n".join(lines), payload, outcome)


def dokoro_file_release(
    ctx: Context[AppState],
    agent_id: AgentArg = None,
    paths: Annotated[
        list[PathText] | None, Field(min_length=1, max_length=50, description="The paths to release (or all=true).")
    ] = None,
    all: Annotated[bool, Field(description="Release every claim you hold (instead of paths).")] = False,
    root: RootArg = None,
) -> Annotated[CallToolResult, ReleaseOutcome]:
    """Release your file claims when done: the given paths, or all=true for every one you hold.
    Only your own claims are released; releasing twice is harmless."""
    released = state(ctx).store.coord.claims.release(
        acting_agent(ctx, agent_id), root=_root(ctx, root), paths=paths, all=all
    )
    report = released.report
    payload = {"report": [item.model_dump() for item in report]}
    if all:
        if not report:
            return _two_blocks(f"no open claims held by {released.agent_id}", payload, released)
        lines = [f"released {len(report)} claim(s) held by {released.agent_id}:"]
        lines += [f"  - {item.path}" for item in report]
        return _two_blocks("\n".join(lines), payload, released)
    words = {"released": "released", "not_held_by_you": "not held by you", "not_found": "no open claim"}
    lines = [f"  - {item.path} — {words[item.status]}" for item in report]
    done = sum(1 for item in report if item.status == "released")
    return _two_blocks(
        "\n".join([f"released {done} of {len(report)} path(s) for {released.agent_id}:", *lines]), payload, released
    )


def _cell(value: str | None) -> str:
    return (value or "").replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def dokoro_claim_list(
    ctx: Context[AppState],
    agent_id: Annotated[Key | None, Field(description="Only this agent's claims.")] = None,
    include_expired: Annotated[bool, Field(description="Also list expired claims nobody released.")] = False,
    root: Annotated[
        PathText | None, Field(description="Informational: paths are listed relative to the claim root.")
    ] = None,
) -> Annotated[CallToolResult, ClaimList]:
    """Who has claimed which files, soonest to expire first, with each holder's presence
    (live, stale or unknown)."""
    rows = state(ctx).store.coord.claims.list(agent_id, include_expired=include_expired)
    data = ClaimList(claims=rows)
    payload = {
        "claims": [
            {
                "path": c.path,
                "agent_id": c.agent_id,
                "intent": c.intent,
                "expires_in_seconds": c.expires_in_seconds,
                "heartbeat_seq": c.heartbeat_seq,
                "presence": c.presence,
            }
            for c in rows
        ]
    }
    if not rows:
        return _two_blocks("(no open claims)", payload, data)
    lines = ["| path | agent | intent | expires_in_s | presence |", "|---|---|---|---|---|"]
    lines += [
        f"| {_cell(c.path)} | {_cell(c.agent_id)} | {_cell(c.intent)} | {c.expires_in_seconds} | {c.presence} |"
        for c in rows
    ]
    return _two_blocks("\n".join(lines), payload, data)


TOOLS = [
    ToolSpec(dokoro_file_claim, "Claim files", destructive=True),  # force=true takes over another's claim
    ToolSpec(dokoro_file_release, "Release file claims", destructive=True, idempotent=True),  # removes claims
    ToolSpec(dokoro_claim_list, "List file claims", read_only=True, idempotent=True),
]
