"""Tracking rows: issues and features, their history, the week's items and per-agent task timers.

These are shared by every agent of a store (a team's PostgreSQL holds them for everyone); the
markdown under ``tracking/``, ``features/`` and ``currentWeek.md`` is a rendering of them.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Column, ForeignKey, Index, Integer, String, Text, UniqueConstraint
from sqlmodel import Field, SQLModel

from dokoro_store.db.types import UtcDateTime, stored_default

__all__ = ["TaskTimer", "TrackingEvent", "TrackingItem", "WeeklyItem"]


class TrackingItem(SQLModel, table=True):
    """An issue (``kind='issue'``) or a feature (``kind='feature'``) and where it stands.

    ``version`` grows with every change, so a rendering knows whether it is stale.
    """

    __tablename__ = "tracking_items"
    __table_args__ = (
        Index("ix_tracking_items_kind_status", "kind", "status"),
        Index("ix_tracking_items_updated", "updated_at"),
    )

    id: str = Field(primary_key=True)
    kind: str
    title: str = Field(sa_type=Text)
    status: str
    priority: str = stored_default("medium")
    category: str | None = None  # issues: bug | enhancement | research | question
    complexity: str | None = None  # features: trivial | simple | moderate | complex | epic
    estimate: str = stored_default("1h")
    description: str | None = Field(default=None, sa_type=Text)
    solution: str | None = Field(default=None, sa_type=Text)
    notes: str | None = Field(default=None, sa_type=Text)  # free text kept from hand edits
    plan_path: str | None = None  # features: features/<stamp>-<slug>-implementation-plan.md
    plan_approach: str | None = None
    plan_markdown: str | None = Field(default=None, sa_type=Text)
    session_id: str | None = None
    agent_id: str | None = None
    created_at: datetime = Field(sa_type=UtcDateTime)
    updated_at: datetime = Field(sa_type=UtcDateTime)
    started_at: datetime | None = Field(default=None, sa_type=UtcDateTime)
    completed_at: datetime | None = Field(default=None, sa_type=UtcDateTime)
    version: int = stored_default(1)


class TrackingEvent(SQLModel, table=True):
    """One step in an item's history (added, started, planned, resolved, edited by hand, …).

    ``seq`` is the item's version after the step, so (item, seq) is the same event in every store.
    """

    __tablename__ = "tracking_events"
    __table_args__ = (Index("ix_tracking_events_at", "at"),)

    item_id: str = Field(
        sa_column=Column(String, ForeignKey("tracking_items.id", ondelete="CASCADE"), primary_key=True),
    )
    seq: int = Field(sa_column=Column(Integer, primary_key=True, autoincrement=False))
    action: str
    from_status: str | None = None
    to_status: str | None = None
    agent_id: str | None = None
    note: str | None = Field(default=None, sa_type=Text)
    at: datetime = Field(sa_type=UtcDateTime)


class WeeklyItem(SQLModel, table=True):
    """An item of one ISO week's list (``week`` is ``YYYY-Www`` with the ISO week-year)."""

    __tablename__ = "tracking_weekly_items"
    __table_args__ = (
        UniqueConstraint("week", "title_key", name="uq_weekly_items_week_title"),
        Index("ix_weekly_items_week_position", "week", "position"),
    )

    id: str = Field(primary_key=True)  # <week>-<position>, e.g. 2026-W24-3
    week: str
    position: int
    type: str  # issue | feature | task
    title: str = Field(sa_type=Text)
    title_key: str  # the title folded for duplicate detection
    priority: str = stored_default("medium")
    effort: str | None = None
    ref_id: str | None = None  # the issue/feature/task id the item stands for, if any
    status: str = stored_default("open")  # open | done | dropped
    source: str = stored_default("tool")  # tool | sync | hand
    agent_id: str | None = None
    created_at: datetime = Field(sa_type=UtcDateTime)
    updated_at: datetime = Field(sa_type=UtcDateTime)
    done_at: datetime | None = Field(default=None, sa_type=UtcDateTime)
    version: int = stored_default(1)


class TaskTimer(SQLModel, table=True):
    """One agent's task and its time, measured on the database clock.

    ``active_seconds`` holds the closed active spans; while the task runs, ``resumed_at`` marks the
    start of the open one. ``pause_seconds`` holds closed pauses; while paused, ``paused_at`` marks
    the start of the open one. ``pauses`` is the list of ``{start, end, reason}``.
    """

    __tablename__ = "tracking_tasks"
    __table_args__ = (Index("ix_tracking_tasks_agent_status", "agent_id", "status"),)

    id: str = Field(primary_key=True)
    agent_id: str
    title: str = Field(sa_type=Text)
    status: str  # active | paused | completed | abandoned
    iterations: int = stored_default(1)
    started_at: datetime = Field(sa_type=UtcDateTime)
    ended_at: datetime | None = Field(default=None, sa_type=UtcDateTime)
    resumed_at: datetime | None = Field(default=None, sa_type=UtcDateTime)
    paused_at: datetime | None = Field(default=None, sa_type=UtcDateTime)
    active_seconds: float = stored_default(0.0, sql="0")
    pause_seconds: float = stored_default(0.0, sql="0")
    pauses: list[dict[str, Any]] = Field(default_factory=list, sa_type=JSON)
    updated_at: datetime = Field(sa_type=UtcDateTime)
