"""Capture: how far each client transcript has been read into the store (migration 0031capture)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, BigInteger, Column, Index, String
from sqlmodel import Field, SQLModel

from dokoro_store.db.types import UtcDateTime, stored_default

__all__ = ["CaptureMark"]


class CaptureMark(SQLModel, table=True):
    """One captured session: its transcript, the byte offset read up to (the start of the turn
    still open when it was last read), what was found so far, and the extractive summary's state.

    Losing a mark costs a re-read, never a duplicate: turns are documents with stable ids."""

    __tablename__ = "capture_marks"
    __table_args__ = (Index("ix_capture_marks_updated", "updated_at"),)

    session_id: str = Field(sa_column=Column(String, primary_key=True))
    transcript: str  # the path the client named (shown, never opened from here without the client's event)
    project: str | None = None  # the session's working folder
    head: str | None = None  # sha256 of the transcript's first line: a replaced file is read again
    read_to: int = Field(default=0, sa_column=Column(BigInteger, nullable=False, server_default="0"))
    lines: int = stored_default(0)
    turns: int = stored_default(0)
    tools: int = stored_default(0)
    skipped: int = stored_default(0)
    title: str | None = None
    digest: dict[str, Any] | None = Field(default=None, sa_type=JSON)
    first_at: datetime | None = Field(default=None, sa_type=UtcDateTime)
    last_at: datetime | None = Field(default=None, sa_type=UtcDateTime)
    updated_at: datetime = Field(sa_type=UtcDateTime)
