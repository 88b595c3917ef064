"""Memory upkeep: per-type switches, ``depends_on`` links, and the dates staleness reads.

- ``memory_type_switches``: which memory types agents may write and which wait for a person's
  review, one row per type a person changed (a type without a row is on);
- ``memory_links``: a memory that depends on another; retiring the other makes it stale;
- partial indexes on ``memories.review_after`` and ``memories.valid_until``: staleness is computed
  at read (no background job), and its count reads only the memories that have such a date.

Revision ID: 0027
Revises: 0028 (numbered 0027 as planned; the proposals ledger, 0028, landed first and follows 0026)
Create Date: 2026-12-02
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from dokoro_store.db.types import UtcDateTime

revision = "0027"
down_revision = "0028"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "memory_type_switches",
        sa.Column("type", sa.String(), primary_key=True),
        sa.Column("agents_write", sa.Boolean(), nullable=False, server_default=sa.true()),
        sa.Column("needs_review", sa.Boolean(), nullable=False, server_default=sa.false()),
        sa.Column("changed_at", UtcDateTime(), nullable=False),
        sa.Column("changed_by", sa.String(), nullable=True),
    )
    op.create_table(
        "memory_links",
        sa.Column("memory_id", sa.String(), sa.ForeignKey("memories.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("depends_on", sa.String(), primary_key=True),
        sa.Column("created_at", UtcDateTime(), nullable=False),
        sa.Column("checked_at", UtcDateTime(), nullable=True),
    )
    op.create_index("ix_memory_links_depends_on", "memory_links", ["depends_on"])
    for column in ("review_after", "valid_until"):
        op.create_index(
            f"ix_memories_{column}",
            "memories",
            [column],
            sqlite_where=sa.text(f"{column} IS NOT NULL"),
            postgresql_where=sa.text(f"{column} IS NOT NULL"),
        )


def downgrade() -> None:
    op.drop_index("ix_memories_valid_until", table_name="memories")
    op.drop_index("ix_memories_review_after", table_name="memories")
    op.drop_index("ix_memory_links_depends_on", table_name="memory_links")
    op.drop_table("memory_links")
    op.drop_table("memory_type_switches")
