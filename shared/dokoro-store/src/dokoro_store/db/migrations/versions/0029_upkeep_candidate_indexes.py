"""Indexes of the proposals' candidates, so a pass reads a page of them whatever the store's size:
the never-recalled memories of a state by age (``recall_count = 0``, partial: a memory leaves it at its first
recall) and the memories of a state and type by age (the aging episodes). Without them the pass
sorted every active memory to find the oldest few (0.4 s at 40k memories, growing with the store).

Revision ID: 0029
Revises: 0027
Create Date: 2026-12-02
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0029"
down_revision = "0027"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index(
        "ix_memories_never_recalled",
        "memories",
        ["state", "created_at", "id"],
        sqlite_where=sa.text("recall_count = 0"),
        postgresql_where=sa.text("recall_count = 0"),
    )
    op.create_index("ix_memories_state_type_created", "memories", ["state", "type", "created_at", "id"])


def downgrade() -> None:
    op.drop_index("ix_memories_state_type_created", table_name="memories")
    op.drop_index("ix_memories_never_recalled", table_name="memories")
