"""Semantic memory: the entity graph (entities, their links to documents, bi-temporal relations).

A relation row records two times: when the fact held in the world (``valid_from`` /
``valid_to``, NULL = still holds) and when the store learned it (``recorded_at``) or learned it
had ended (``closed_at``). Rows are never deleted or overwritten; a single-valued fact that
changes is closed and a new row opened.

``doc_entities.doc_id`` and ``entity_content_hashes.doc_id`` name a document without a foreign
key to ``docs``: deep extraction may describe text that has no document row (reference bug §7.19).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Column, Float, ForeignKey, Index, Integer, String, Text, UniqueConstraint, text
from sqlmodel import Field, SQLModel

from dokoro_store.db.types import UtcDateTime

__all__ = ["DocEntity", "Entity", "EntityContentHash", "EntityRelation"]

# The open facts of one (source, target, type): at most one row with valid_to IS NULL.
OPEN_FACT_WHERE = "valid_to IS NULL"


class Entity(SQLModel, table=True):
    """A person, project, file, service, component or concept, unique by (type, canonical name)."""

    __tablename__ = "entities"
    __table_args__ = (
        UniqueConstraint("type", "canonical_name", name="uq_entities_type_canonical"),
        Index("ix_entities_canonical", "canonical_name"),
    )

    id: int | None = Field(default=None, sa_column=Column(Integer, primary_key=True, autoincrement=True))
    type: str
    name: str
    canonical_name: str
    description: str | None = Field(default=None, sa_type=Text)
    metadata_json: dict[str, Any] | None = Field(default=None, sa_type=JSON)
    created_at: datetime = Field(sa_type=UtcDateTime)
    updated_at: datetime = Field(sa_type=UtcDateTime)


class DocEntity(SQLModel, table=True):
    """A document's link to an entity it mentions (or relates to), with the evidence."""

    __tablename__ = "doc_entities"
    # (entity, doc) covers "documents of an entity" and the doc counts of entity search.
    __table_args__ = (Index("ix_doc_entities_entity", "entity_id", "doc_id"),)

    # No foreign key to docs: the text of a deep extraction need not be a stored document.
    doc_id: str = Field(sa_column=Column(String, primary_key=True))
    entity_id: int = Field(sa_column=Column(Integer, ForeignKey("entities.id", ondelete="CASCADE"), primary_key=True))
    relation_type: str = Field(sa_column=Column(String, primary_key=True))
    context: str | None = Field(default=None, sa_type=Text)
    confidence: float = Field(default=1.0, sa_column=Column(Float, nullable=False, server_default="1.0"))
    created_at: datetime = Field(sa_type=UtcDateTime)


class EntityRelation(SQLModel, table=True):
    """A typed, weighted edge between two entities, valid over a time window."""

    __tablename__ = "entity_relations"
    __table_args__ = (
        Index("ix_entity_rel_source", "source_id"),
        Index("ix_entity_rel_target", "target_id"),
        Index("ix_entity_rel_valid_to", "valid_to"),
        Index("ix_entity_rel_temporal", "source_id", "valid_from", "valid_to"),
        Index(
            "uq_entity_rel_open",
            "source_id",
            "target_id",
            "relation_type",
            unique=True,
            sqlite_where=text(OPEN_FACT_WHERE),
            postgresql_where=text(OPEN_FACT_WHERE),
        ),
    )

    id: int | None = Field(default=None, sa_column=Column(Integer, primary_key=True, autoincrement=True))
    source_id: int = Field(sa_column=Column(Integer, ForeignKey("entities.id", ondelete="CASCADE"), nullable=False))
    target_id: int = Field(sa_column=Column(Integer, ForeignKey("entities.id", ondelete="CASCADE"), nullable=False))
    relation_type: str
    weight: float = Field(default=1.0, sa_column=Column(Float, nullable=False, server_default="1.0"))
    metadata_json: dict[str, Any] | None = Field(default=None, sa_type=JSON)
    # Valid time: when the fact held. valid_to NULL = it still holds.
    valid_from: datetime = Field(sa_type=UtcDateTime)
    valid_to: datetime | None = Field(default=None, sa_type=UtcDateTime)
    # Transaction time: when the store learned the fact, and when it learned the fact had ended.
    recorded_at: datetime = Field(sa_type=UtcDateTime)
    closed_at: datetime | None = Field(default=None, sa_type=UtcDateTime)


class EntityContentHash(SQLModel, table=True):
    """The content hash a document had when its entities were last extracted (skip unchanged text)."""

    __tablename__ = "entity_content_hashes"

    doc_id: str = Field(primary_key=True)
    content_hash: str
    last_extracted: datetime = Field(sa_type=UtcDateTime)
