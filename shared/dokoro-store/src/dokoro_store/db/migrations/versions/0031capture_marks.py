"""Capture marks: how far each client transcript (Claude Code's JSONL) has been read into the store.

One row per captured session: the transcript's path, the byte offset read up to (the start of the
turn still open at the last read, so the next read finishes it), the counts, the session's title
and the state of its extractive summary. The turns themselves are documents (``doc_type`` 'turn',
``thread`` = the session id); a lost mark costs a re-read, never a duplicate.

Revision ID: 0031capture
Revises: 0030
Create Date: 2026-12-07
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from dokoro_store.db.types import UtcDateTime

revision = "0031capture"
down_revision = "0030"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "capture_marks",
        sa.Column("session_id", sa.String(), nullable=False),
        sa.Column("transcript", sa.String(), nullable=False),
        sa.Column("project", sa.String(), nullable=True),
        sa.Column("head", sa.String(), nullable=True),
        sa.Column("read_to", sa.BigInteger(), nullable=False, server_default="0"),
        sa.Column("lines", sa.Integer(), nullable=False, server_default="0"),
        sa.Column("turns", sa.Integer(), nullable=False, server_default="0"),
        sa.Column("tools", sa.Integer(), nullable=False, server_default="0"),
        sa.Column("skipped", sa.Integer(), nullable=False, server_default="0"),
        sa.Column("title", sa.String(), nullable=True),
        sa.Column("digest", sa.JSON(), nullable=True),
        sa.Column("first_at", UtcDateTime(), nullable=True),
        sa.Column("last_at", UtcDateTime(), nullable=True),
        sa.Column("updated_at", UtcDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("session_id"),
    )
    op.create_index("ix_capture_marks_updated", "capture_marks", ["updated_at"])


def downgrade() -> None:
    op.drop_index("ix_capture_marks_updated", table_name="capture_marks")
    op.drop_table("capture_marks")
