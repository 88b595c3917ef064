"""An index on ``memories.title``: remember's retry check (an identical remember by the same agent
within minutes returns the memory the first one stored) finds its twin by title. It went through
the index on ``updated_at`` and read every memory written or changed in the last ten minutes: all
of them right after a bulk import (3 ms per remember at 10k, ~30 ms at 100k), and as many as an
agent writing fast had written. Titles are at most 300 characters on every path that writes one.

Revision ID: 0025
Revises: 0024
Create Date: 2026-12-01
"""

from __future__ import annotations

from alembic import op

revision = "0025"
down_revision = "0024"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index("ix_memories_title", "memories", ["title"])


def downgrade() -> None:
    op.drop_index("ix_memories_title", table_name="memories")
