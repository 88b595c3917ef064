"""Procedural memory rows: plans and their items, shared by every agent of a store."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import JSON, Column, ForeignKey, Index, Integer, String, Text
from sqlmodel import Field, SQLModel

from dokoro_store.db.types import UtcDateTime, stored_default

__all__ = ["Plan", "PlanItem"]


class Plan(SQLModel, table=True):
    """A plan: an ordered checklist with a lifecycle (active → completed → validated, or failed).

    ``archive_path`` is set once the plan is archived (relative to ``.mcp/plans/``, e.g.
    ``archive/2026-06/<id>.json``); an archived plan is read-only.
    """

    __tablename__ = "plans"
    __table_args__ = (Index("ix_plans_created", "created_at"),)

    id: str = Field(primary_key=True)
    title: str
    description: str | None = Field(default=None, sa_type=Text)
    status: str = stored_default("active")
    created_at: datetime = Field(sa_type=UtcDateTime)
    updated_at: datetime = Field(sa_type=UtcDateTime)
    validated_at: datetime | None = Field(default=None, sa_type=UtcDateTime)
    validation_notes: str | None = Field(default=None, sa_type=Text)
    archived_at: datetime | None = Field(default=None, sa_type=UtcDateTime)
    archive_path: str | None = None
    agent_id: str | None = None  # the creator; None or "unknown" = nobody in particular (shared)
    shared: bool = stored_default(False)  # other agents may check and validate it too


class PlanItem(SQLModel, table=True):
    """One item of a plan; ``position`` is 0-based (the agent speaks 1-based indexes)."""

    __tablename__ = "plan_items"

    plan_id: str = Field(
        sa_column=Column(String, ForeignKey("plans.id", ondelete="CASCADE"), primary_key=True),
    )
    position: int = Field(sa_column=Column(Integer, primary_key=True, autoincrement=False))
    text: str = Field(sa_type=Text)
    completed: bool = stored_default(False)
    created_at: datetime = Field(sa_type=UtcDateTime)
    completed_at: datetime | None = Field(default=None, sa_type=UtcDateTime)
    notes: str | None = Field(default=None, sa_type=Text)
    blockers: list[str] = Field(default_factory=list, sa_type=JSON)
