"""Tracking rows: issues and features with their history, the week's items, per-agent task timers.

The original kept these as markdown files under tracking/ and a JSON file per session; here they
are rows a team shares, and the files are renderings.

Revision ID: 0016
Revises: 0015
Create Date: 2026-11-30
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from dokoro_store.db.types import UtcDateTime

revision = "0016"
down_revision = "0015"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "tracking_items",
        sa.Column("id", sa.String(), primary_key=True),
        sa.Column("kind", sa.String(), nullable=False),
        sa.Column("title", sa.Text(), nullable=False),
        sa.Column("status", sa.String(), nullable=False),
        sa.Column("priority", sa.String(), nullable=False, server_default="medium"),
        sa.Column("category", sa.String(), nullable=True),
        sa.Column("complexity", sa.String(), nullable=True),
        sa.Column("estimate", sa.String(), nullable=False, server_default="1h"),
        sa.Column("description", sa.Text(), nullable=True),
        sa.Column("solution", sa.Text(), nullable=True),
        sa.Column("notes", sa.Text(), nullable=True),
        sa.Column("plan_path", sa.String(), nullable=True),
        sa.Column("plan_approach", sa.String(), nullable=True),
        sa.Column("plan_markdown", sa.Text(), nullable=True),
        sa.Column("session_id", sa.String(), nullable=True),
        sa.Column("agent_id", sa.String(), nullable=True),
        sa.Column("created_at", UtcDateTime(), nullable=False),
        sa.Column("updated_at", UtcDateTime(), nullable=False),
        sa.Column("started_at", UtcDateTime(), nullable=True),
        sa.Column("completed_at", UtcDateTime(), nullable=True),
        sa.Column("version", sa.Integer(), nullable=False, server_default="1"),
    )
    op.create_index("ix_tracking_items_kind_status", "tracking_items", ["kind", "status"])
    op.create_index("ix_tracking_items_updated", "tracking_items", ["updated_at"])
    op.create_table(
        "tracking_events",
        sa.Column("item_id", sa.String(), sa.ForeignKey("tracking_items.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("seq", sa.Integer(), primary_key=True, autoincrement=False),
        sa.Column("action", sa.String(), nullable=False),
        sa.Column("from_status", sa.String(), nullable=True),
        sa.Column("to_status", sa.String(), nullable=True),
        sa.Column("agent_id", sa.String(), nullable=True),
        sa.Column("note", sa.Text(), nullable=True),
        sa.Column("at", UtcDateTime(), nullable=False),
    )
    op.create_index("ix_tracking_events_at", "tracking_events", ["at"])
    op.create_table(
        "tracking_weekly_items",
        sa.Column("id", sa.String(), primary_key=True),
        sa.Column("week", sa.String(), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("type", sa.String(), nullable=False),
        sa.Column("title", sa.Text(), nullable=False),
        sa.Column("title_key", sa.String(), nullable=False),
        sa.Column("priority", sa.String(), nullable=False, server_default="medium"),
        sa.Column("effort", sa.String(), nullable=True),
        sa.Column("ref_id", sa.String(), nullable=True),
        sa.Column("status", sa.String(), nullable=False, server_default="open"),
        sa.Column("source", sa.String(), nullable=False, server_default="tool"),
        sa.Column("agent_id", sa.String(), nullable=True),
        sa.Column("created_at", UtcDateTime(), nullable=False),
        sa.Column("updated_at", UtcDateTime(), nullable=False),
        sa.Column("done_at", UtcDateTime(), nullable=True),
        sa.Column("version", sa.Integer(), nullable=False, server_default="1"),
        sa.UniqueConstraint("week", "title_key", name="uq_weekly_items_week_title"),
    )
    op.create_index("ix_weekly_items_week_position", "tracking_weekly_items", ["week", "position"])
    op.create_table(
        "tracking_tasks",
        sa.Column("id", sa.String(), primary_key=True),
        sa.Column("agent_id", sa.String(), nullable=False),
        sa.Column("title", sa.Text(), nullable=False),
        sa.Column("status", sa.String(), nullable=False),
        sa.Column("iterations", sa.Integer(), nullable=False, server_default="1"),
        sa.Column("started_at", UtcDateTime(), nullable=False),
        sa.Column("ended_at", UtcDateTime(), nullable=True),
        sa.Column("resumed_at", UtcDateTime(), nullable=True),
        sa.Column("paused_at", UtcDateTime(), nullable=True),
        sa.Column("active_seconds", sa.Float(), nullable=False, server_default="0"),
        sa.Column("pause_seconds", sa.Float(), nullable=False, server_default="0"),
        sa.Column("pauses", sa.JSON(), nullable=False),
        sa.Column("updated_at", UtcDateTime(), nullable=False),
    )
    op.create_index("ix_tracking_tasks_agent_status", "tracking_tasks", ["agent_id", "status"])


def downgrade() -> None:
    op.drop_table("tracking_tasks")
    op.drop_table("tracking_weekly_items")
    op.drop_table("tracking_events")
    op.drop_table("tracking_items")
