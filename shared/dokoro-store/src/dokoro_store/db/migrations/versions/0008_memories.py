"""Typed memories with a lifecycle, and the conflict gate's ledger of shown pairs.

Revision ID: 0008
Revises: 0003
Create Date: 2026-11-29
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from dokoro_store.db.types import UtcDateTime

revision = "0008"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "memories",
        sa.Column("id", sa.String(), primary_key=True),
        sa.Column("type", sa.String(), nullable=False),
        sa.Column("title", sa.Text(), nullable=False),
        sa.Column("body", sa.Text(), nullable=False),
        sa.Column("entities", sa.JSON(), nullable=False),
        sa.Column("trust", sa.String(), nullable=False, server_default="agent-inferred"),
        sa.Column("state", sa.String(), nullable=False, server_default="active"),
        sa.Column("agent_id", sa.String(), nullable=True),
        sa.Column("session_id", sa.String(), nullable=True),
        sa.Column("source", sa.Text(), nullable=True),
        sa.Column("created_at", UtcDateTime(), nullable=False),
        sa.Column("updated_at", UtcDateTime(), nullable=False),
        sa.Column("review_after", UtcDateTime(), nullable=True),
        sa.Column("valid_until", UtcDateTime(), nullable=True),
        sa.Column("supersedes", sa.String(), nullable=True),
        sa.Column("superseded_by", sa.String(), nullable=True),
        sa.Column("state_reason", sa.Text(), nullable=True),
        sa.Column("state_changed_at", UtcDateTime(), nullable=True),
        sa.Column("recall_count", sa.Integer(), nullable=False, server_default="0"),
        sa.Column("last_recalled_at", UtcDateTime(), nullable=True),
    )
    op.create_index("ix_memories_state_type", "memories", ["state", "type"])
    op.create_index("ix_memories_updated", "memories", ["updated_at"])
    op.create_table(
        "memory_conflicts",
        sa.Column("pair_hash", sa.String(), primary_key=True),
        sa.Column("new_id", sa.String(), nullable=False),
        sa.Column("old_id", sa.String(), nullable=False),
        sa.Column("shared_entities", sa.JSON(), nullable=False),
        sa.Column("similarity", sa.Float(), nullable=False, server_default="0"),
        sa.Column("shown_at", UtcDateTime(), nullable=False),
        sa.Column("verdict", sa.String(), nullable=True),
        sa.Column("decided_at", UtcDateTime(), nullable=True),
        sa.Column("decided_by", sa.String(), nullable=True),
    )
    op.create_index("ix_memory_conflicts_new_id", "memory_conflicts", ["new_id"])
    op.create_index("ix_memory_conflicts_old_id", "memory_conflicts", ["old_id"])


def downgrade() -> None:
    op.drop_table("memory_conflicts")
    op.drop_table("memories")
