"""The few places where SQLite and PostgreSQL differ, behind one small interface.

Services never branch on the backend; they ask the :class:`DialectOps` of their database
for an upsert, the database clock, or the migration lock.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

from sqlalchemy import Connection, Table, text
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.sql.dml import Insert

from dokoro_store.files import file_lock

__all__ = ["DialectOps", "PostgresOps", "SqliteOps"]


class DialectOps(Protocol):
    name: str

    def upsert(
        self,
        table: Table,
        values: Mapping[str, Any],
        key: Sequence[str],
        update: Sequence[str] | None,
    ) -> Insert:
        """An INSERT that updates ``update`` columns (or does nothing when None) on a key clash."""
        ...

    def upsert_many(
        self,
        table: Table,
        rows: Sequence[Mapping[str, Any]],
        key: Sequence[str],
        update: Sequence[str] | None,
    ) -> Insert:
        """A multi-row :meth:`upsert`."""
        ...

    def after_bulk_insert(self, connection: Connection, table: Table) -> None:
        """Repair what explicit ids bypass (PostgreSQL sequences) after copying rows in."""
        ...

    def epoch_now_sql(self) -> str:
        """SQL expression for the database clock in whole unix seconds."""
        ...

    def migration_lock(self, connection: Connection) -> contextlib.AbstractContextManager[None]:
        """Serialise schema upgrades between processes opening the same store at once."""
        ...


def _on_conflict(
    stmt: sqlite.Insert | postgresql.Insert,
    key: Sequence[str],
    update: Sequence[str] | None,
) -> Insert:
    if update is None:
        return stmt.on_conflict_do_nothing(index_elements=list(key))
    return stmt.on_conflict_do_update(
        index_elements=list(key), set_={name: stmt.excluded[name] for name in update}
    )


class SqliteOps:
    name = "sqlite"

    def __init__(self, lock_dir: Path) -> None:
        self._lock_dir = lock_dir

    def upsert(
        self,
        table: Table,
        values: Mapping[str, Any],
        key: Sequence[str],
        update: Sequence[str] | None,
    ) -> Insert:
        return _on_conflict(sqlite.insert(table).values(**values), key, update)

    def upsert_many(
        self,
        table: Table,
        rows: Sequence[Mapping[str, Any]],
        key: Sequence[str],
        update: Sequence[str] | None,
    ) -> Insert:
        return _on_conflict(sqlite.insert(table).values(list(rows)), key, update)

    def after_bulk_insert(self, connection: Connection, table: Table) -> None:
        # SQLite hands out max(rowid) + 1; nothing to repair.
        return None

    def epoch_now_sql(self) -> str:
        return "CAST(strftime('%s','now') AS INTEGER)"

    @contextlib.contextmanager
    def migration_lock(self, connection: Connection) -> Iterator[None]:
        with file_lock(self._lock_dir, "migrate"):
            yield


class PostgresOps:
    name = "postgresql"
    _ADVISORY_KEY = 0x646F6B6F726F  # "dokoro"

    def upsert(
        self,
        table: Table,
        values: Mapping[str, Any],
        key: Sequence[str],
        update: Sequence[str] | None,
    ) -> Insert:
        return _on_conflict(postgresql.insert(table).values(**values), key, update)

    def upsert_many(
        self,
        table: Table,
        rows: Sequence[Mapping[str, Any]],
        key: Sequence[str],
        update: Sequence[str] | None,
    ) -> Insert:
        return _on_conflict(postgresql.insert(table).values(list(rows)), key, update)

    def after_bulk_insert(self, connection: Connection, table: Table) -> None:
        for column in table.primary_key.columns:
            if column.autoincrement is True or (column.autoincrement == "auto" and column.type.python_type is int):
                connection.execute(
                    text(
                        f"SELECT setval(pg_get_serial_sequence('{table.name}', '{column.name}'), "
                        f"COALESCE((SELECT MAX({column.name}) FROM {table.name}), 1), "
                        f"(SELECT MAX({column.name}) FROM {table.name}) IS NOT NULL)"
                    )
                )

    def epoch_now_sql(self) -> str:
        return "CAST(EXTRACT(EPOCH FROM clock_timestamp()) AS BIGINT)"

    @contextlib.contextmanager
    def migration_lock(self, connection: Connection) -> Iterator[None]:
        connection.execute(text("SELECT pg_advisory_lock(:k)"), {"k": self._ADVISORY_KEY})
        try:
            yield
        finally:
            connection.execute(text("SELECT pg_advisory_unlock(:k)"), {"k": self._ADVISORY_KEY})
