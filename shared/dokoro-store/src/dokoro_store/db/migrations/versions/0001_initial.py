"""Initial schema: sessions, episodic summaries and documents.

Revision ID: 0001
Revises:
Create Date: 2026-11-29
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from dokoro_store.db.types import UtcDateTime

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "sessions",
        sa.Column("id", sa.String(), primary_key=True),
        sa.Column("started_at", UtcDateTime(), nullable=False),
        sa.Column("ended_at", UtcDateTime(), nullable=True),
        sa.Column("status", sa.String(), nullable=False, server_default="active"),
        sa.Column("summary", sa.Text(), nullable=True),
        sa.Column("metadata_json", sa.JSON(), nullable=True),
    )
    op.create_table(
        "conversation_summaries",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("session_id", sa.String(), sa.ForeignKey("sessions.id", ondelete="SET NULL"), nullable=True),
        sa.Column("ai_model", sa.String(), nullable=False),
        sa.Column("summary", sa.Text(), nullable=False),
        sa.Column("key_decisions", sa.JSON(), nullable=True),
        sa.Column("key_topics", sa.JSON(), nullable=True),
        sa.Column("message_count", sa.Integer(), nullable=True),
        sa.Column("token_count", sa.Integer(), nullable=True),
        sa.Column("started_at", UtcDateTime(), nullable=False),
        sa.Column("created_at", UtcDateTime(), nullable=False),
        sa.Column("compacted", sa.Boolean(), nullable=False, server_default=sa.false()),
    )
    op.create_index("ix_summaries_session_started", "conversation_summaries", ["session_id", "started_at"])
    op.create_index("ix_summaries_started", "conversation_summaries", ["started_at"])
    op.create_table(
        "docs",
        sa.Column("id", sa.String(), primary_key=True),
        sa.Column("filepath", sa.String(), nullable=False, unique=True),
        sa.Column("title", sa.String(), nullable=False),
        sa.Column("content", sa.Text(), nullable=True),
        sa.Column("doc_type", sa.String(), nullable=False, server_default="issue"),
        sa.Column("status", sa.String(), nullable=False, server_default="inbox"),
        sa.Column("priority", sa.String(), nullable=False, server_default="medium"),
        sa.Column("created_at", UtcDateTime(), nullable=False),
        sa.Column("updated_at", UtcDateTime(), nullable=False),
        sa.Column("completed_at", UtcDateTime(), nullable=True),
        sa.Column("metadata_json", sa.JSON(), nullable=True),
        sa.Column("content_hash", sa.String(), nullable=True),
    )
    op.create_index("ix_docs_type_status", "docs", ["doc_type", "status"])
    op.create_index("ix_docs_content_hash", "docs", ["content_hash"])


def downgrade() -> None:
    op.drop_table("docs")
    op.drop_table("conversation_summaries")
    op.drop_table("sessions")
