"""Typed memories (semantic layer): facts, preferences, decisions, lessons, rules, guardrails, ..."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import JSON, BigInteger, Column, ForeignKey, Index, String, Text, text
from sqlmodel import Field, SQLModel

from dokoro_store.db.types import UtcDateTime, stored_default

__all__ = ["Memory", "MemoryConflict", "MemoryEntity", "MemoryLink", "MemoryTombstone"]


class Memory(SQLModel, table=True):
    """One memory and its lifecycle: active → archived (superseded) → deprecated, or purged."""

    __tablename__ = "memories"
    __table_args__ = (
        Index("ix_memories_state_type", "state", "type"),
        Index("ix_memories_updated", "updated_at"),
        Index("ix_memories_rev", "rev"),
        Index("ix_memories_title", "title"),  # remember's retry check (migration 0025)
        # The memories with a date to be re-checked or to expire (0027): what staleness counts.
        Index(
            "ix_memories_review_after",
            "review_after",
            sqlite_where=text("review_after IS NOT NULL"),
            postgresql_where=text("review_after IS NOT NULL"),
        ),
        Index(
            "ix_memories_valid_until",
            "valid_until",
            sqlite_where=text("valid_until IS NOT NULL"),
            postgresql_where=text("valid_until IS NOT NULL"),
        ),
        # The proposals' candidates by age (0029): the never recalled, the aging episodes.
        Index(
            "ix_memories_never_recalled",
            "state",
            "created_at",
            "id",
            sqlite_where=text("recall_count = 0"),
            postgresql_where=text("recall_count = 0"),
        ),
        Index("ix_memories_state_type_created", "state", "type", "created_at", "id"),
        # The use counters changed since a folder last wrote them to its ledger (0031files).
        Index(
            "ix_memories_last_recalled",
            "last_recalled_at",
            sqlite_where=text("last_recalled_at IS NOT NULL"),
            postgresql_where=text("last_recalled_at IS NOT NULL"),
        ),
    )

    id: str = Field(primary_key=True)
    type: str
    title: str = Field(sa_type=Text)
    body: str = Field(sa_type=Text)
    entities: list[str] = Field(default_factory=list, sa_column=Column(JSON, nullable=False))
    trust: str = stored_default("agent-inferred")
    state: str = stored_default("active")
    agent_id: str | None = None
    session_id: str | None = None
    source: str | None = Field(default=None, sa_type=Text)
    created_at: datetime = Field(sa_type=UtcDateTime)
    updated_at: datetime = Field(sa_type=UtcDateTime)
    review_after: datetime | None = Field(default=None, sa_type=UtcDateTime)
    valid_until: datetime | None = Field(default=None, sa_type=UtcDateTime)
    supersedes: str | None = None
    superseded_by: str | None = None
    state_reason: str | None = Field(default=None, sa_type=Text)
    state_changed_at: datetime | None = Field(default=None, sa_type=UtcDateTime)
    state_changed_by: str | None = None  # the agent whose call last changed the state
    recall_count: int = stored_default(0)
    last_recalled_at: datetime | None = Field(default=None, sa_type=UtcDateTime)
    # The change number database triggers stamp on every change a memory's file shows (migration
    # 0017); each workspace folder renders the rows above the highest number it has seen.
    rev: int = Field(default=0, sa_type=BigInteger, sa_column_kwargs={"server_default": "0"})
    # The memory's own revision (migration 0031files): 1 when written, one more on every change its
    # file shows (the same triggers), kept when it is restored from its file. A file shows it, so a
    # file older than its row (a folder behind the database) is told from a person's edit.
    revision: int = Field(default=1, sa_type=BigInteger, sa_column_kwargs={"server_default": "1"})


class MemoryConflict(SQLModel, table=True):
    """A pair of close memories the conflict gate showed once, and the verdict given on it."""

    __tablename__ = "memory_conflicts"
    __table_args__ = (
        # The pairs waiting for a verdict (0031rows): what the health line counts and merges come from.
        Index(
            "ix_memory_conflicts_open",
            "shown_at",
            sqlite_where=text("verdict IS NULL"),
            postgresql_where=text("verdict IS NULL"),
        ),
    )

    pair_hash: str = Field(sa_column=Column(String, primary_key=True))
    new_id: str = Field(index=True)
    old_id: str = Field(index=True)
    shared_entities: list[str] = Field(default_factory=list, sa_column=Column(JSON, nullable=False))
    similarity: float = stored_default(0.0, sql="0")
    shown_at: datetime = Field(sa_type=UtcDateTime)
    verdict: str | None = None
    decided_at: datetime | None = Field(default=None, sa_type=UtcDateTime)
    decided_by: str | None = None


class MemoryEntity(SQLModel, table=True):
    """One entity a memory is about: the conflict gate finds the memories sharing an entity with
    a new one by this index, not by reading every memory's ``entities`` list."""

    __tablename__ = "memory_entities"
    __table_args__ = (Index("ix_memory_entities_entity", "entity", "memory_id"),)

    memory_id: str = Field(sa_column=Column(String, ForeignKey("memories.id", ondelete="CASCADE"), primary_key=True))
    entity: str = Field(sa_column=Column(String, primary_key=True))


class MemoryLink(SQLModel, table=True):
    """``memory_id`` depends on ``depends_on`` (migration 0027): when the memory it depends on is
    retired (archived, deprecated, purged), ``memory_id`` is stale until it is renewed.

    ``depends_on`` is no foreign key: a purged memory's dependents keep the link and read it as
    "purged". ``checked_at``: when the dependent was last renewed; a retirement after it counts.
    """

    __tablename__ = "memory_links"
    __table_args__ = (Index("ix_memory_links_depends_on", "depends_on"),)

    memory_id: str = Field(sa_column=Column(String, ForeignKey("memories.id", ondelete="CASCADE"), primary_key=True))
    depends_on: str = Field(sa_column=Column(String, primary_key=True))
    created_at: datetime = Field(sa_type=UtcDateTime)
    checked_at: datetime | None = Field(default=None, sa_type=UtcDateTime)


class MemoryTombstone(SQLModel, table=True):
    """A memory purged for good (migration 0031files): its id, the revision it had, when and by whom.

    Nothing of its text is kept. A folder whose file of it is older than the purge (another
    machine's folder, a clone behind the team database) has that file removed instead of
    bringing the memory back; the folder's ledger (``memories/ledger/purged.jsonl``) carries it too.
    """

    __tablename__ = "memory_tombstones"

    memory_id: str = Field(sa_column=Column(String, primary_key=True))
    revision: int = Field(sa_type=BigInteger)
    purged_at: datetime = Field(sa_type=UtcDateTime)
    purged_by: str | None = None
