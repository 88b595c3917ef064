"""Coordination between agents: presence, advisory file claims, shared notes, blocks, handoffs.

Presence and claim times are whole unix seconds from the database's clock (one clock domain for
every agent of a team backend); notes, blocks and handoffs carry UTC timestamps.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, BigInteger, Column, Index, Integer, Text, text
from sqlmodel import Field, SQLModel

from dokoro_store.db.types import UtcDateTime, stored_default

__all__ = ["AgentPresence", "FileClaim", "FileClaimEvent", "Handoff", "SharedBlock", "SharedNote"]


class AgentPresence(SQLModel, table=True):
    """The last heartbeat of an agent (one row per agent)."""

    __tablename__ = "agent_presence"
    __table_args__ = (Index("ix_presence_heartbeat", "last_heartbeat"),)

    agent_id: str = Field(primary_key=True)
    session_id: str | None = None
    status: str = stored_default("active")
    current_focus: str | None = Field(default=None, sa_type=Text)
    last_heartbeat: int = Field(sa_type=BigInteger)
    heartbeat_seq: int = stored_default(0)


class FileClaim(SQLModel, table=True):
    """An advisory lease on one file, keyed by its lower-cased root-relative path.

    A row stays after release (``released_at`` set) and is reused by the next claim; rows
    released or expired more than a day ago are pruned.
    """

    __tablename__ = "file_claims"
    __table_args__ = (
        Index("ix_file_claims_agent", "agent_id"),
        Index("ix_file_claims_session", "session_id"),
        Index(
            "ix_file_claims_live",
            "expires_at",
            sqlite_where=text("released_at IS NULL"),
            postgresql_where=text("released_at IS NULL"),
        ),
    )

    claim_key: str = Field(primary_key=True)
    file_path: str
    agent_id: str
    session_id: str | None = None
    intent: str | None = Field(default=None, sa_type=Text)
    claimed_at: int = Field(sa_type=BigInteger)
    expires_at: int = Field(sa_type=BigInteger)
    heartbeat_seq: int = stored_default(0)
    released_at: int | None = Field(default=None, sa_type=BigInteger)


class FileClaimEvent(SQLModel, table=True):
    """The history of claims: every acquisition, renewal, takeover and release, in commit order.

    Written in the transaction that changes the claim, so it is an audit of who held what when
    (forced takeovers are recorded as such, with the holder they displaced).
    """

    __tablename__ = "file_claim_events"
    __table_args__ = (Index("ix_claim_events_key", "claim_key", "id"), Index("ix_claim_events_at", "at"))

    id: int | None = Field(default=None, sa_column=Column(Integer, primary_key=True, autoincrement=True))
    claim_key: str
    file_path: str
    agent_id: str
    # claimed | renewed | taken_over | taken_over_forced | released
    action: str
    previous_agent: str | None = None
    session_id: str | None = None
    at: int = Field(sa_type=BigInteger)
    expires_at: int | None = Field(default=None, sa_type=BigInteger)


class SharedNote(SQLModel, table=True):
    """An append-only note every agent of the store can read."""

    __tablename__ = "shared_notes"
    __table_args__ = (Index("ix_shared_notes_created", "created_at"), Index("ix_shared_notes_agent", "agent_id"))

    id: int | None = Field(default=None, sa_column=Column(Integer, primary_key=True, autoincrement=True))
    agent_id: str
    content: str = Field(sa_type=Text)
    note_type: str = stored_default("scratch")
    metadata_json: dict[str, Any] | None = Field(default=None, sa_type=JSON)
    created_at: datetime = Field(sa_type=UtcDateTime)


class SharedBlock(SQLModel, table=True):
    """A named block of shared text, written with compare-and-set on ``version``."""

    __tablename__ = "shared_blocks"
    __table_args__ = (Index("ix_shared_blocks_updated", "updated_at"),)

    block_key: str = Field(primary_key=True)
    content: str = Field(sa_type=Text)
    version: int = stored_default(1)
    updated_by: str
    created_at: datetime = Field(sa_type=UtcDateTime)
    updated_at: datetime = Field(sa_type=UtcDateTime)


class Handoff(SQLModel, table=True):
    """Work one agent hands to another (or to anyone); claimed atomically by one taker."""

    __tablename__ = "handoffs"
    __table_args__ = (Index("ix_handoffs_status_created", "status", "created_at"),)

    id: int | None = Field(default=None, sa_column=Column(Integer, primary_key=True, autoincrement=True))
    from_agent: str
    to_agent: str | None = None
    session_id: str | None = None
    summary: str = Field(sa_type=Text)
    open_items: list[str] | None = Field(default=None, sa_type=JSON)
    status: str = stored_default("open")
    claimed_by: str | None = None
    created_at: datetime = Field(sa_type=UtcDateTime)
    claimed_at: datetime | None = Field(default=None, sa_type=UtcDateTime)
