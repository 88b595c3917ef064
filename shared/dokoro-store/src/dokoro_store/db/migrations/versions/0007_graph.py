"""Semantic memory: the bi-temporal entity graph.

``entities`` unique by (type, canonical_name); ``doc_entities`` link documents to entities
(no foreign key to ``docs``: deep extraction may describe text without a document row);
``entity_relations`` carry valid time (valid_from/valid_to) and transaction time
(recorded_at/closed_at), with at most one open row per (source, target, type);
``entity_content_hashes`` remember what text was last extracted.

Revision ID: 0007
Revises: 0003
Create Date: 2026-11-30
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from dokoro_store.db.types import UtcDateTime

revision = "0007"
down_revision = "0003"
branch_labels = None
depends_on = None

_OPEN = sa.text("valid_to IS NULL")


def upgrade() -> None:
    op.create_table(
        "entities",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("type", sa.String(), nullable=False),
        sa.Column("name", sa.String(), nullable=False),
        sa.Column("canonical_name", sa.String(), nullable=False),
        sa.Column("description", sa.Text(), nullable=True),
        sa.Column("metadata_json", sa.JSON(), nullable=True),
        sa.Column("created_at", UtcDateTime(), nullable=False),
        sa.Column("updated_at", UtcDateTime(), nullable=False),
        sa.UniqueConstraint("type", "canonical_name", name="uq_entities_type_canonical"),
    )
    op.create_index("ix_entities_canonical", "entities", ["canonical_name"])

    op.create_table(
        "doc_entities",
        sa.Column("doc_id", sa.String(), primary_key=True),
        sa.Column("entity_id", sa.Integer(), sa.ForeignKey("entities.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("relation_type", sa.String(), primary_key=True),
        sa.Column("context", sa.Text(), nullable=True),
        sa.Column("confidence", sa.Float(), nullable=False, server_default="1.0"),
        sa.Column("created_at", UtcDateTime(), nullable=False),
    )
    op.create_index("ix_doc_entities_entity", "doc_entities", ["entity_id", "doc_id"])

    op.create_table(
        "entity_relations",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("source_id", sa.Integer(), sa.ForeignKey("entities.id", ondelete="CASCADE"), nullable=False),
        sa.Column("target_id", sa.Integer(), sa.ForeignKey("entities.id", ondelete="CASCADE"), nullable=False),
        sa.Column("relation_type", sa.String(), nullable=False),
        sa.Column("weight", sa.Float(), nullable=False, server_default="1.0"),
        sa.Column("metadata_json", sa.JSON(), nullable=True),
        sa.Column("valid_from", UtcDateTime(), nullable=False),
        sa.Column("valid_to", UtcDateTime(), nullable=True),
        sa.Column("recorded_at", UtcDateTime(), nullable=False),
        sa.Column("closed_at", UtcDateTime(), nullable=True),
    )
    op.create_index("ix_entity_rel_source", "entity_relations", ["source_id"])
    op.create_index("ix_entity_rel_target", "entity_relations", ["target_id"])
    op.create_index("ix_entity_rel_valid_to", "entity_relations", ["valid_to"])
    op.create_index("ix_entity_rel_temporal", "entity_relations", ["source_id", "valid_from", "valid_to"])
    op.create_index(
        "uq_entity_rel_open",
        "entity_relations",
        ["source_id", "target_id", "relation_type"],
        unique=True,
        sqlite_where=_OPEN,
        postgresql_where=_OPEN,
    )

    op.create_table(
        "entity_content_hashes",
        sa.Column("doc_id", sa.String(), primary_key=True),
        sa.Column("content_hash", sa.String(), nullable=False),
        sa.Column("last_extracted", UtcDateTime(), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("entity_content_hashes")
    op.drop_table("entity_relations")
    op.drop_table("doc_entities")
    op.drop_table("entities")
