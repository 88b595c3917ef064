"""The store's settings for its memories: which types are in use, which agents may write, which
wait for review."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Column, String
from sqlmodel import Field, SQLModel

from dokoro_store.db.types import UtcDateTime, stored_default

__all__ = ["MemoryTypeSwitch"]


class MemoryTypeSwitch(SQLModel, table=True):
    """One memory type's switches (migration 0027; ``enabled``: 0031rows). A type without a row is on:
    in use, agents may write it, and it waits for review only when the store's review queue is on
    (``DOKORO_MEMORY_REVIEW``)."""

    __tablename__ = "memory_type_switches"

    type: str = Field(sa_column=Column(String, primary_key=True))
    # The type is in use: written, recalled and briefed. Off: refused on write, hidden from reads.
    enabled: bool = stored_default(True)
    agents_write: bool = stored_default(True)  # agents may remember memories of this type
    needs_review: bool = stored_default(False)  # an agent's memory of this type waits as proposed
    changed_at: datetime = Field(sa_type=UtcDateTime)
    changed_by: str | None = None  # who changed it (a person's name, when given)
