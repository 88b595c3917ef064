"""Tables of the store (SQLModel). Schema changes go through the Alembic migrations."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Column, ForeignKey, Index, Integer, String, Text
from sqlmodel import Field, SQLModel

from dokoro_store.db.types import UtcDateTime

__all__ = ["ApiToken", "ConversationSummary", "Doc", "EpisodeSession", "Question"]


class EpisodeSession(SQLModel, table=True):
    """One agent session; its ``summary`` holds the compacted history of the session."""

    __tablename__ = "sessions"

    id: str = Field(primary_key=True)
    started_at: datetime = Field(sa_type=UtcDateTime)
    ended_at: datetime | None = Field(default=None, sa_type=UtcDateTime)
    status: str = Field(default="active")
    summary: str | None = Field(default=None, sa_type=Text)
    # Compaction bookkeeping: {"compactionPending": bool, "preFlushAt": ..., "lastCompactedAt": ...}
    metadata_json: dict[str, Any] | None = Field(default=None, sa_type=JSON)


class ConversationSummary(SQLModel, table=True):
    """Episodic memory: what happened in a session, as the agent summarised it."""

    __tablename__ = "conversation_summaries"
    __table_args__ = (
        Index("ix_summaries_session_started", "session_id", "started_at"),
        Index("ix_summaries_started", "started_at"),
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
    compacted: bool = Field(default=False)


class Doc(SQLModel, table=True):
    """A document of the workspace (session dumps, imported markdown, indexed content)."""

    __tablename__ = "docs"
    __table_args__ = (Index("ix_docs_type_status", "doc_type", "status"),)

    id: str = Field(primary_key=True)
    filepath: str = Field(sa_column=Column(String, unique=True, nullable=False))
    title: str
    content: str | None = Field(default=None, sa_type=Text)
    doc_type: str = Field(default="issue")
    status: str = Field(default="inbox")
    priority: str = Field(default="medium")
    created_at: datetime = Field(sa_type=UtcDateTime)
    updated_at: datetime = Field(sa_type=UtcDateTime)
    completed_at: datetime | None = Field(default=None, sa_type=UtcDateTime)
    metadata_json: dict[str, Any] | None = Field(default=None, sa_type=JSON)
    content_hash: str | None = Field(default=None, index=True)


class Question(SQLModel, table=True):
    """An open or answered question of the working memory, shared by every agent of the store."""

    __tablename__ = "questions"
    __table_args__ = (Index("ix_questions_status_created", "status", "created_at"),)

    id: str = Field(primary_key=True)
    question: str = Field(sa_type=Text)
    context: str | None = Field(default=None, sa_type=Text)
    priority: str = Field(default="medium")
    status: str = Field(default="open")
    answer: str | None = Field(default=None, sa_type=Text)
    created_at: datetime = Field(sa_type=UtcDateTime)
    answered_at: datetime | None = Field(default=None, sa_type=UtcDateTime)
    agent_id: str | None = None


class ApiToken(SQLModel, table=True):
    """A bearer token of the shared HTTP server; only its SHA-256 is stored."""

    __tablename__ = "api_tokens"

    id: str = Field(primary_key=True)
    agent_id: str = Field(index=True)
    token_hash: str = Field(sa_column=Column(String, unique=True, nullable=False))
    label: str | None = None
    created_at: datetime = Field(sa_type=UtcDateTime)
    last_used_at: datetime | None = Field(default=None, sa_type=UtcDateTime)
    revoked_at: datetime | None = Field(default=None, sa_type=UtcDateTime)
