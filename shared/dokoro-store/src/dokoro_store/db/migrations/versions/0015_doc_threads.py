"""Documents in a thread: the conversation or log a document belongs to, and its place in it.

Turns of one conversation, entries of one session log, episodes of one session: search lifts
the neighbours of a document that matches (the answer often sits in the turn beside the one
that names the topic), so it needs to know which documents sit side by side. Both columns are
optional; a document outside any thread has neither.

Revision ID: 0015
Revises: 0009
Create Date: 2026-11-30
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0015"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Plain ADD COLUMN on both dialects: no table rebuild, so SQLite's rowids (which the FTS5
    # indexes key on) and triggers stay as they are.
    op.add_column("docs", sa.Column("thread", sa.String(), nullable=True))
    op.add_column("docs", sa.Column("thread_pos", sa.Integer(), nullable=True))
    op.create_index("ix_docs_thread", "docs", ["thread", "thread_pos"])


def downgrade() -> None:
    op.drop_index("ix_docs_thread", table_name="docs")
    with op.batch_alter_table("docs") as batch:
        batch.drop_column("thread_pos")
        batch.drop_column("thread")
