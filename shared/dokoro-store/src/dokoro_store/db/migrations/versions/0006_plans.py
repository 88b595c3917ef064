"""Plans move from .mcp/plans/*.json into the database, so a team shares them.

Revision ID: 0006
Revises: 0003
Create Date: 2026-11-30
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from dokoro_store.db.types import UtcDateTime

revision = "0006"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "plans",
        sa.Column("id", sa.String(), primary_key=True),
        sa.Column("title", sa.String(), nullable=False),
        sa.Column("description", sa.Text(), nullable=True),
        sa.Column("status", sa.String(), nullable=False, server_default="active"),
        sa.Column("created_at", UtcDateTime(), nullable=False),
        sa.Column("updated_at", UtcDateTime(), nullable=False),
        sa.Column("validated_at", UtcDateTime(), nullable=True),
        sa.Column("validation_notes", sa.Text(), nullable=True),
        sa.Column("archived_at", UtcDateTime(), nullable=True),
        sa.Column("archive_path", sa.String(), nullable=True),
        sa.Column("agent_id", sa.String(), nullable=True),
    )
    op.create_index("ix_plans_created", "plans", ["created_at"])
    op.create_table(
        "plan_items",
        sa.Column("plan_id", sa.String(), sa.ForeignKey("plans.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("position", sa.Integer(), primary_key=True, autoincrement=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("completed", sa.Boolean(), nullable=False, server_default=sa.false()),
        sa.Column("created_at", UtcDateTime(), nullable=False),
        sa.Column("completed_at", UtcDateTime(), nullable=True),
        sa.Column("notes", sa.Text(), nullable=True),
        sa.Column("blockers", sa.JSON(), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("plan_items")
    op.drop_table("plans")
