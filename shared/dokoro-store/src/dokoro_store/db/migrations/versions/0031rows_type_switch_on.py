"""A memory type may be switched off as a whole (``memory_type_switches.enabled``): refused on
write, hidden from recall and the briefing, and the status says so. Until now the switches only
decided who may write a type (``agents_write``) and whether it waits for review; a type without a
row, or with ``enabled`` true, is in use as before.

``ix_memory_conflicts_open``: the gate's pairs still waiting for a verdict, a partial index, so the
health line counts the open contradictions without reading every pair ever shown.

Revision ID: 0031rows
Revises: 0031owners
Create Date: 2026-12-06
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0031rows"
down_revision = "0031owners"  # chained after owners when the branches met
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("memory_type_switches", sa.Column("enabled", sa.Boolean(), nullable=False, server_default=sa.true()))
    op.create_index(
        "ix_memory_conflicts_open",
        "memory_conflicts",
        ["shown_at"],
        sqlite_where=sa.text("verdict IS NULL"),
        postgresql_where=sa.text("verdict IS NULL"),
    )


def downgrade() -> None:
    op.drop_index("ix_memory_conflicts_open", table_name="memory_conflicts")
    with op.batch_alter_table("memory_type_switches") as batch:
        batch.drop_column("enabled")
