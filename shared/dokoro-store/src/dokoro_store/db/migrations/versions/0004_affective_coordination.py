"""Affective memory (agent_feedback) and coordination (presence, file claims, notes, blocks, handoffs).

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-29
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from dokoro_store.db.types import UtcDateTime

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "agent_feedback",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("agent_id", sa.String(), nullable=False),
        sa.Column("tool_name", sa.String(), nullable=False),
        sa.Column("outcome", sa.String(), nullable=False),
        sa.Column("confidence", sa.Float(), nullable=True),
        sa.Column("latency_ms", sa.Integer(), nullable=True),
        sa.Column("error_message", sa.Text(), nullable=True),
        sa.Column("doc_id", sa.String(), nullable=True),
        sa.Column("session_id", sa.String(), nullable=True),
        sa.Column("metadata_json", sa.JSON(), nullable=True),
        sa.Column("recorded_at", UtcDateTime(), nullable=False),
    )
    op.create_index(
        "ix_feedback_agent_tool_outcome_time", "agent_feedback", ["agent_id", "tool_name", "outcome", "recorded_at"]
    )
    op.create_index(
        "ix_feedback_tool_outcome",
        "agent_feedback",
        ["tool_name", "outcome", "agent_id", "recorded_at", "confidence", "latency_ms"],
    )
    op.create_index("ix_feedback_recorded", "agent_feedback", ["recorded_at"])

    op.create_table(
        "agent_presence",
        sa.Column("agent_id", sa.String(), primary_key=True),
        sa.Column("session_id", sa.String(), nullable=True),
        sa.Column("status", sa.String(), nullable=False, server_default="active"),
        sa.Column("current_focus", sa.Text(), nullable=True),
        sa.Column("last_heartbeat", sa.BigInteger(), nullable=False),
        sa.Column("heartbeat_seq", sa.Integer(), nullable=False, server_default="0"),
    )
    op.create_index("ix_presence_heartbeat", "agent_presence", ["last_heartbeat"])

    op.create_table(
        "file_claims",
        sa.Column("claim_key", sa.String(), primary_key=True),
        sa.Column("file_path", sa.String(), nullable=False),
        sa.Column("agent_id", sa.String(), nullable=False),
        sa.Column("session_id", sa.String(), nullable=True),
        sa.Column("intent", sa.Text(), nullable=True),
        sa.Column("claimed_at", sa.BigInteger(), nullable=False),
        sa.Column("expires_at", sa.BigInteger(), nullable=False),
        sa.Column("heartbeat_seq", sa.Integer(), nullable=False, server_default="0"),
        sa.Column("released_at", sa.BigInteger(), nullable=True),
    )
    op.create_index("ix_file_claims_agent", "file_claims", ["agent_id"])
    op.create_index("ix_file_claims_session", "file_claims", ["session_id"])
    op.create_index(
        "ix_file_claims_live",
        "file_claims",
        ["expires_at"],
        sqlite_where=sa.text("released_at IS NULL"),
        postgresql_where=sa.text("released_at IS NULL"),
    )

    op.create_table(
        "file_claim_events",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("claim_key", sa.String(), nullable=False),
        sa.Column("file_path", sa.String(), nullable=False),
        sa.Column("agent_id", sa.String(), nullable=False),
        sa.Column("action", sa.String(), nullable=False),
        sa.Column("previous_agent", sa.String(), nullable=True),
        sa.Column("session_id", sa.String(), nullable=True),
        sa.Column("at", sa.BigInteger(), nullable=False),
        sa.Column("expires_at", sa.BigInteger(), nullable=True),
    )
    op.create_index("ix_claim_events_key", "file_claim_events", ["claim_key", "id"])
    op.create_index("ix_claim_events_at", "file_claim_events", ["at"])

    op.create_table(
        "shared_notes",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("agent_id", sa.String(), nullable=False),
        sa.Column("content", sa.Text(), nullable=False),
        sa.Column("note_type", sa.String(), nullable=False, server_default="scratch"),
        sa.Column("metadata_json", sa.JSON(), nullable=True),
        sa.Column("created_at", UtcDateTime(), nullable=False),
    )
    op.create_index("ix_shared_notes_created", "shared_notes", ["created_at"])
    op.create_index("ix_shared_notes_agent", "shared_notes", ["agent_id"])

    op.create_table(
        "shared_blocks",
        sa.Column("block_key", sa.String(), primary_key=True),
        sa.Column("content", sa.Text(), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False, server_default="1"),
        sa.Column("updated_by", sa.String(), nullable=False),
        sa.Column("created_at", UtcDateTime(), nullable=False),
        sa.Column("updated_at", UtcDateTime(), nullable=False),
    )
    op.create_index("ix_shared_blocks_updated", "shared_blocks", ["updated_at"])

    op.create_table(
        "handoffs",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("from_agent", sa.String(), nullable=False),
        sa.Column("to_agent", sa.String(), nullable=True),
        sa.Column("session_id", sa.String(), nullable=True),
        sa.Column("summary", sa.Text(), nullable=False),
        sa.Column("open_items", sa.JSON(), nullable=True),
        sa.Column("status", sa.String(), nullable=False, server_default="open"),
        sa.Column("claimed_by", sa.String(), nullable=True),
        sa.Column("created_at", UtcDateTime(), nullable=False),
        sa.Column("claimed_at", UtcDateTime(), nullable=True),
    )
    op.create_index("ix_handoffs_status_created", "handoffs", ["status", "created_at"])


def downgrade() -> None:
    for table in (
        "handoffs",
        "shared_blocks",
        "shared_notes",
        "file_claim_events",
        "file_claims",
        "agent_presence",
        "agent_feedback",
    ):
        op.drop_table(table)
