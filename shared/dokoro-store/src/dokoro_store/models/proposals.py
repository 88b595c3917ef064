"""The proposals ledger: upkeep of the memories the store suggests and a person (or the owning
agent) decides — merge near-duplicates, summarise a run of episodes, prune what is never
recalled, promote a recurring correction to a guardrail. Nothing changes until one is approved."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Column, Index, Text
from sqlmodel import Field, SQLModel

from dokoro_store.db.types import UtcDateTime, stored_default

__all__ = ["MemoryProposal"]


class MemoryProposal(SQLModel, table=True):
    """One proposal, its evidence, and the decision on it (``proposed`` → ``approved``/``rejected``).

    The id is derived from ``key`` (what is proposed: the kind and the memories or pattern it is
    about), so the same proposal is filed once, and a rejected one is never filed again."""

    __tablename__ = "memory_proposals"
    __table_args__ = (Index("ix_memory_proposals_status", "status", "created_at"),)

    id: str = Field(primary_key=True)
    key: str = Field(sa_type=Text)
    kind: str
    title: str = Field(sa_type=Text)
    evidence: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))
    memory_ids: list[str] = Field(default_factory=list, sa_column=Column(JSON, nullable=False))
    # The agents whose data the change touches: an agent may decide only when none is another agent.
    owners: list[str] = Field(default_factory=list, sa_column=Column(JSON, nullable=False))
    status: str = stored_default("proposed")
    created_at: datetime = Field(sa_type=UtcDateTime)
    decided_at: datetime | None = Field(default=None, sa_type=UtcDateTime)
    decided_by: str | None = None
    outcome: str | None = Field(default=None, sa_type=Text)
