"""Credentials of the shared HTTP server."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Column, String
from sqlalchemy import false as sa_false
from sqlmodel import Field, SQLModel

from dokoro_store.db.types import UtcDateTime

__all__ = ["ApiToken"]


class ApiToken(SQLModel, table=True):
    """A bearer token of the shared HTTP server; only its SHA-256 is stored."""

    __tablename__ = "api_tokens"

    id: str = Field(primary_key=True)
    agent_id: str = Field(index=True)
    token_hash: str = Field(sa_column=Column(String, unique=True, nullable=False))
    label: str | None = None
    created_at: datetime = Field(sa_type=UtcDateTime)
    last_used_at: datetime | None = Field(default=None, sa_type=UtcDateTime)
    revoked_at: datetime | None = Field(default=None, sa_type=UtcDateTime)
    # An operator's token (migration 0031owners): the whole-store actions (a full reindex) over HTTP.
    operator: bool = Field(default=False, sa_column_kwargs={"server_default": sa_false()})
