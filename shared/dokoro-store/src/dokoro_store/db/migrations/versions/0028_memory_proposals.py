"""The proposals ledger (``memory_proposals``): upkeep of the memories proposed from the data
already there (near-duplicates, aging episode runs, never-recalled memories, recurring
corrections), each with its evidence and the decision a person or the owning agent made on it.

Revision ID: 0028
Revises: 0026
Create Date: 2026-12-02
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from dokoro_store.db.types import UtcDateTime

revision = "0028"
down_revision = "0026"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "memory_proposals",
        sa.Column("id", sa.String(), primary_key=True),
        sa.Column("key", sa.Text(), nullable=False),
        sa.Column("kind", sa.String(), nullable=False),
        sa.Column("title", sa.Text(), nullable=False),
        sa.Column("evidence", sa.JSON(), nullable=False),
        sa.Column("memory_ids", sa.JSON(), nullable=False),
        sa.Column("owners", sa.JSON(), nullable=False),
        sa.Column("status", sa.String(), nullable=False, server_default="proposed"),
        sa.Column("created_at", UtcDateTime(), nullable=False),
        sa.Column("decided_at", UtcDateTime(), nullable=True),
        sa.Column("decided_by", sa.String(), nullable=True),
        sa.Column("outcome", sa.Text(), nullable=True),
    )
    op.create_index("ix_memory_proposals_status", "memory_proposals", ["status", "created_at"])


def downgrade() -> None:
    op.drop_index("ix_memory_proposals_status", table_name="memory_proposals")
    op.drop_table("memory_proposals")
