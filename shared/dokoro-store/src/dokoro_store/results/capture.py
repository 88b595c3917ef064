"""What the capture of client transcripts reports: a read, a captured session, a recall, a forget."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from dokoro_store.results.base import IsoTime, Result

__all__ = ["CaptureReport", "CapturedSession", "ForgottenSession", "RecallLine"]


class CaptureReport(Result):
    """One read of a transcript into the store."""

    session_id: str
    status: Literal["captured", "nothing new", "off", "excluded"]
    why: str | None = Field(default=None, description="Why nothing was captured (capture off, an excluded folder).")
    lines: int = Field(default=0, description="Lines read by this call.")
    turns: int = Field(default=0, description="Turn documents new or changed by this call.")
    tools: int = Field(default=0, description="Tool calls found by this call.")
    skipped: int = Field(default=0, description="Lines skipped (not JSON, unknown shape, too long).")
    problems: dict[str, int] = Field(default_factory=dict, description="Skipped lines by reason.")
    read_to: int = Field(default=0, description="The byte offset the next read starts from.")
    done: bool = Field(default=True, description="False: the call's bound stopped it; the next call goes on.")
    summary: Literal["written", "unchanged", "agent's kept", "none"] = "none"
    total_turns: int = Field(default=0, description="Turns of this session in the store after the call.")


class CapturedSession(Result):
    """A session captured from a client's transcript."""

    session_id: str
    title: str
    project: str | None
    turns: int
    tools: int
    skipped: int
    first_at: IsoTime | None
    last_at: IsoTime | None
    updated_at: IsoTime
    summary: str | None = Field(default=None, description="The session's summary (the agent's when it wrote one).")


class ForgottenSession(Result):
    session_id: str
    turns: int
    summaries: int
    marks: int


class RecallLine(Result):
    """One thing the prompt hook hands the agent: a memory, a document, a past turn or a session."""

    id: str = Field(description="What to open it with: a memory id, a document id, or a session id.")
    kind: Literal["memory", "turn", "document", "session"]
    relevance: float
    text: str
