"""Column types shared by every table."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import DateTime, String, false, true
from sqlalchemy.engine import Dialect
from sqlalchemy.types import TypeDecorator, TypeEngine
from sqlmodel import Field

__all__ = ["UtcDateTime", "stored_default", "utc_from_db"]

_SQLITE_FORMAT = "%Y-%m-%dT%H:%M:%S.%fZ"


class UtcDateTime(TypeDecorator[datetime]):
    """An aware UTC datetime.

    PostgreSQL stores ``timestamptz``. SQLite stores fixed-width ISO text
    (``YYYY-MM-DDTHH:MM:SS.ffffffZ``) so that string order is time order and a comparison
    with a bound parameter never mixes formats.
    """

    impl = String(27)
    cache_ok = True

    def load_dialect_impl(self, dialect: Dialect) -> TypeEngine[Any]:
        if dialect.name == "postgresql":
            return dialect.type_descriptor(DateTime(timezone=True))
        return dialect.type_descriptor(String(27))

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> Any:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("naive datetime given to a UTC column; attach a timezone")
        utc = value.astimezone(UTC)
        if dialect.name == "postgresql":
            return utc
        return utc.strftime(_SQLITE_FORMAT)

    def process_result_value(self, value: Any, dialect: Dialect) -> datetime | None:
        return utc_from_db(value)


def utc_from_db(value: object) -> datetime | None:
    """A :class:`UtcDateTime` value as the driver returns it (PostgreSQL's datetime, SQLite's
    fixed-width text) as an aware UTC datetime: what the column type decodes, for raw reads too."""
    if value is None:
        return None
    if isinstance(value, datetime):
        return value.astimezone(UTC) if value.tzinfo else value.replace(tzinfo=UTC)
    # fromisoformat reads the fixed-width text (and its Z) ten times faster than strptime: every
    # row read from SQLite goes through here.
    return datetime.fromisoformat(str(value)).astimezone(UTC)


def stored_default(value: str | int | float | bool, *, sql: str | None = None) -> Any:
    """A model field whose default the database holds too (``server_default``), as the migrations
    create it: rows written by raw SQL, an import or an older dokoro get the same value.

    ``sql`` is the literal the migration wrote when it differs from ``str(value)`` (``"0"`` for
    ``0.0``), so the drift test compares like with like.
    """
    if isinstance(value, bool):
        return Field(default=value, sa_column_kwargs={"server_default": true() if value else false()})
    return Field(default=value, sa_column_kwargs={"server_default": sql if sql is not None else str(value)})
