"""Shared notes tools: an append-only scratchpad every agent of the store reads."""

from __future__ import annotations

from typing import Annotated, Literal

from dokoro_server import AppState, ToolSpec, acting_agent, result, state
from dokoro_server.bounds import IsoDate, Key, Mapping
from dokoro_store.results.coordination import Note, NoteList
from mcp.server.mcpserver import Context
from mcp_types import CallToolResult
from pydantic import Field

__all__ = ["TOOLS"]

NoteType = Literal["scratch", "decision", "blocker", "handoff"]


def dokoro_shared_note_append(
    ctx: Context[AppState],
    content: Annotated[str, Field(min_length=1, max_length=20000, description="The note.")],
    agent_id: Annotated[
        str | None, Field(max_length=200, description="You; default: DOKORO_AGENT_ID or your token's agent.")
    ] = None,
    note_type: Annotated[NoteType, Field(description="What kind of note.")] = "scratch",
    metadata: Annotated[Mapping | None, Field(description="Anything structured worth keeping.")] = None,
) -> Annotated[CallToolResult, Note]:
    """Leave a note every agent of this store can read: a finding, a decision, a blocker, a handoff
    hint. Notes are append-only."""
    note = state(ctx).store.coord.notes.append(
        acting_agent(ctx, agent_id), content, note_type=note_type, metadata=metadata
    )
    return result(f"note appended by {note.agent_id}", note)


def dokoro_shared_note_read(
    ctx: Context[AppState],
    agent_id: Annotated[Key | None, Field(description="Only notes by this agent.")] = None,
    note_type: Annotated[NoteType | None, Field(description="Only notes of this kind.")] = None,
    since: Annotated[
        IsoDate | None, Field(description="Only notes at or after this UTC time: YYYY-MM-DD or YYYY-MM-DDTHH:MM:SSZ.")
    ] = None,
    limit: Annotated[int, Field(ge=1, le=200, description="How many notes.")] = 50,
) -> Annotated[CallToolResult, NoteList]:
    """Read the shared notes, newest first."""
    from dokoro_store import iso

    notes = state(ctx).store.coord.notes.read(agent_id=agent_id, note_type=note_type, since=since, limit=limit)
    if not notes:
        return result("(no shared notes)", NoteList(notes=[]))
    lines = [f"[{iso(n.created_at)}] [{n.note_type}] agent={n.agent_id}: {n.content}" for n in notes]
    return result("\n".join(lines), NoteList(notes=notes))


TOOLS = [
    ToolSpec(dokoro_shared_note_append, "Append a shared note"),
    ToolSpec(dokoro_shared_note_read, "Read shared notes", read_only=True, idempotent=True),
]
