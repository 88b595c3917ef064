"""Documents of the workspace."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, BigInteger, Column, Index, String, Text, text
from sqlmodel import Field, SQLModel

from dokoro_store.db.types import UtcDateTime, stored_default

__all__ = ["Doc"]


class Doc(SQLModel, table=True):
    """A document of the workspace (session dumps, imported markdown, indexed content)."""

    __tablename__ = "docs"
    __table_args__ = (
        Index("ix_docs_type_status", "doc_type", "status"),
        Index("ix_docs_thread", "thread", "thread_pos"),
        Index("ix_docs_updated_at", "updated_at"),
        Index(
            "ix_docs_unextracted",
            "unextracted",
            sqlite_where=text("unextracted IS NOT NULL"),
            postgresql_where=text("unextracted IS NOT NULL"),
        ),
    )

    id: str = Field(primary_key=True)
    filepath: str = Field(sa_column=Column(String, unique=True, nullable=False))
    title: str
    content: str | None = Field(default=None, sa_type=Text)
    doc_type: str = stored_default("issue")
    status: str = stored_default("inbox")
    priority: str = stored_default("medium")
    created_at: datetime = Field(sa_type=UtcDateTime)
    updated_at: datetime = Field(sa_type=UtcDateTime)
    completed_at: datetime | None = Field(default=None, sa_type=UtcDateTime)
    metadata_json: dict[str, Any] | None = Field(default=None, sa_type=JSON)
    content_hash: str | None = Field(default=None, index=True)
    # The conversation or log this document is one entry of, and its place in it (search lifts the
    # neighbours of a match); None for a document that stands alone.
    thread: str | None = Field(default=None)
    thread_pos: int | None = Field(default=None)
    # The token of the index write whose text is not yet extracted into the entity graph (the
    # graph's write-behind, semantic/graph/extraction/indexer.py); None once extracted.
    unextracted: int | None = Field(default=None, sa_type=BigInteger)
