"""Affective memory: the outcome of every tool call, recorded by agents or captured automatically."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Column, Index, Integer, Text
from sqlmodel import Field, SQLModel

from dokoro_store.db.types import UtcDateTime

__all__ = ["AgentFeedback"]


class AgentFeedback(SQLModel, table=True):
    """One outcome of one tool for one agent.

    ``recorded_at`` is the database's clock, so routing ages every outcome against one clock
    whichever machine recorded it. ``doc_id``/``session_id`` are plain references (no foreign
    key): an agent may tag feedback with its workspace session id, which has no ``sessions`` row.
    """

    __tablename__ = "agent_feedback"
    __table_args__ = (
        # Covers routing: grouping by (agent, tool) and counting outcomes reads the index only.
        Index("ix_feedback_agent_tool_outcome_time", "agent_id", "tool_name", "outcome", "recorded_at"),
        # Covers the per-tool tallies and routing filtered by tool.
        Index(
            "ix_feedback_tool_outcome",
            "tool_name",
            "outcome",
            "agent_id",
            "recorded_at",
            "confidence",
            "latency_ms",
        ),
        Index("ix_feedback_recorded", "recorded_at"),
    )

    id: int | None = Field(default=None, sa_column=Column(Integer, primary_key=True, autoincrement=True))
    agent_id: str
    tool_name: str
    outcome: str
    confidence: float | None = None
    latency_ms: int | None = None
    error_message: str | None = Field(default=None, sa_type=Text)
    doc_id: str | None = None
    session_id: str | None = None
    metadata_json: dict[str, Any] | None = Field(default=None, sa_type=JSON)
    recorded_at: datetime = Field(sa_type=UtcDateTime)
