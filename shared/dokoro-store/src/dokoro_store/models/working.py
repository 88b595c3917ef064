"""Working memory rows shared by every agent of a store."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Index, Text
from sqlmodel import Field, SQLModel

from dokoro_store.db.types import UtcDateTime, stored_default

__all__ = ["Question"]


class Question(SQLModel, table=True):
    """An open or answered question of the working memory, shared by every agent of the store."""

    __tablename__ = "questions"
    __table_args__ = (Index("ix_questions_status_created", "status", "created_at"),)

    id: str = Field(primary_key=True)
    question: str = Field(sa_type=Text)
    context: str | None = Field(default=None, sa_type=Text)
    priority: str = stored_default("medium")
    status: str = stored_default("open")
    answer: str | None = Field(default=None, sa_type=Text)
    created_at: datetime = Field(sa_type=UtcDateTime)
    answered_at: datetime | None = Field(default=None, sa_type=UtcDateTime)
    agent_id: str | None = None
