"""Episodic memory: sessions and their summaries."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Column, ForeignKey, Index, Integer, String, Text, text
from sqlmodel import Field, SQLModel

from dokoro_store.db.types import UtcDateTime, stored_default

__all__ = ["ConversationSummary", "EpisodeSession"]


class EpisodeSession(SQLModel, table=True):
    """One agent session; its ``summary`` holds the compacted history of the session."""

    __tablename__ = "sessions"

    id: str = Field(primary_key=True)
    started_at: datetime = Field(sa_type=UtcDateTime)
    ended_at: datetime | None = Field(default=None, sa_type=UtcDateTime)
    status: str = stored_default("active")
    summary: str | None = Field(default=None, sa_type=Text)
    # Compaction bookkeeping: {"compactionPending": bool, "preFlushAt": ..., "lastCompactedAt": ...}
    metadata_json: dict[str, Any] | None = Field(default=None, sa_type=JSON)


class ConversationSummary(SQLModel, table=True):
    """Episodic memory: what happened in a session, as the agent summarised it."""

    __tablename__ = "conversation_summaries"
    __table_args__ = (
        Index("ix_summaries_session_started", "session_id", "started_at"),
        Index("ix_summaries_started", "started_at"),
        # The summaries not yet embedded (0026): what the write-behind step embeds.
        Index(
            "ix_summaries_unembedded",
            "id",
            sqlite_where=text("embedding IS NULL"),
            postgresql_where=text("embedding IS NULL"),
        ),
    )

    id: int | None = Field(default=None, sa_column=Column(Integer, primary_key=True, autoincrement=True))
    session_id: str | None = Field(
        default=None,
        sa_column=Column(String, ForeignKey("sessions.id", ondelete="SET NULL"), nullable=True),
    )
    ai_model: str
    summary: str = Field(sa_type=Text)
    key_decisions: list[str] | None = Field(default=None, sa_type=JSON)
    key_topics: list[str] | None = Field(default=None, sa_type=JSON)
    message_count: int | None = None
    token_count: int | None = None
    started_at: datetime = Field(sa_type=UtcDateTime)
    created_at: datetime = Field(sa_type=UtcDateTime)
    compacted: bool = stored_default(False)
