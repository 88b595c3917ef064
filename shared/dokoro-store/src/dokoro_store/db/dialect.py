"""The few places where SQLite and PostgreSQL differ, behind one small interface.

Services never branch on the backend; they ask the :class:`DialectOps` of their database
for an upsert, the database clock, or the migration lock.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from sqlalchemy import Connection, Table, text
from sqlalchemy.dialects import sqlite
from sqlalchemy.orm import Session
from sqlalchemy.sql.dml import Insert

from dokoro_store.walls.files import file_lock

if TYPE_CHECKING:
    from sqlalchemy.dialects import postgresql

__all__ = ["DialectOps", "PostgresOps", "SqliteOps"]

# julianday() of 1970-01-01T00:00:00Z.
_UNIX_EPOCH_JULIAN = 2440587.5


class DialectOps(Protocol):
    name: str
    # The database's clock is this machine's (SQLite: a file read by this process), so a write that
    # stamps rows with it need not ask the database for the time first.
    local_clock: bool

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

    def upsert_each(self, table: Table, key: Sequence[str], update: Sequence[str] | None) -> Insert:
        """:meth:`upsert` without values, to execute with a list of rows (``session.execute(stmt,
        rows)``): compiled once and sent in batches, where :meth:`upsert_many` compiles a statement
        with a parameter per value (a bulk write's cost in Python)."""
        ...

    def after_bulk_insert(self, connection: Connection, table: Table) -> None:
        """Repair what explicit ids bypass (PostgreSQL sequences) after copying rows in."""
        ...

    def refresh_statistics(self, connection: Connection, tables: Sequence[str]) -> None:
        """After a bulk write: the planner's statistics of ``tables`` brought up to date now, not
        whenever autovacuum gets to them (PostgreSQL)."""
        ...

    def epoch_now_sql(self) -> str:
        """SQL expression for the database clock in whole unix seconds."""
        ...

    def now_seconds_sql(self) -> str:
        """SQL expression for the database clock in fractional unix seconds (at least ms precision)."""
        ...

    def epoch_of_sql(self, column: str) -> str:
        """SQL expression for a :class:`~dokoro_store.db.types.UtcDateTime` column in fractional unix seconds."""
        ...

    def half_life_weight_sql(self, age_seconds: str, half_life_seconds: str) -> str:
        """SQL expression ``0.5 ** (max(0, age) / half_life)`` (a negative age weighs 1)."""
        ...

    def insert(self, table: Table) -> sqlite.Insert | postgresql.Insert:
        """The backend's INSERT, with ``on_conflict_do_update``/``on_conflict_do_nothing``."""
        ...

    def lock_keys(self, session: Session | Connection, namespace: str, keys: Iterable[str]) -> None:
        """Serialise write transactions touching the same ``keys`` (even rows not yet inserted).

        Call it first thing in a ``db.write()`` transaction; the locks end with it. On SQLite
        the write transaction already holds the database's one write lock.
        """
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
    return stmt.on_conflict_do_update(index_elements=list(key), set_={name: stmt.excluded[name] for name in update})


class _Upserts:
    """``upsert``/``upsert_many`` on top of the dialect's own ``insert`` (its ON CONFLICT clause)."""

    def insert(self, table: Table) -> sqlite.Insert | postgresql.Insert:
        raise NotImplementedError

    def upsert(
        self,
        table: Table,
        values: Mapping[str, Any],
        key: Sequence[str],
        update: Sequence[str] | None,
    ) -> Insert:
        return _on_conflict(self.insert(table).values(**values), key, update)

    def upsert_many(
        self,
        table: Table,
        rows: Sequence[Mapping[str, Any]],
        key: Sequence[str],
        update: Sequence[str] | None,
    ) -> Insert:
        return _on_conflict(self.insert(table).values(list(rows)), key, update)

    def upsert_each(self, table: Table, key: Sequence[str], update: Sequence[str] | None) -> Insert:
        # Built once per shape (statements are immutable): a write path runs it on every call, and
        # building the ON CONFLICT clause costs more than executing it.
        shape = (type(self), table, tuple(key), None if update is None else tuple(update))
        built = _EACH.get(shape)
        if built is None:
            built = _EACH.setdefault(shape, _on_conflict(self.insert(table), key, update))
        return built


# Process-wide on purpose: a statement built from a dialect, a table and its key columns is the same
# for every database of that dialect (statements are immutable and carry no values).
_EACH: dict[tuple[type, Table, tuple[str, ...], tuple[str, ...] | None], Insert] = {}


class SqliteOps(_Upserts):
    name = "sqlite"
    local_clock = True

    def __init__(self, lock_dir: Path) -> None:
        self._lock_dir = lock_dir

    def after_bulk_insert(self, connection: Connection, table: Table) -> None:
        # SQLite hands out max(rowid) + 1; nothing to repair.
        return None

    def refresh_statistics(self, connection: Connection, tables: Sequence[str]) -> None:
        # The queries are written for SQLite's planner without statistics (no ANALYZE ever runs:
        # sqlite_stat1 would change plans chosen and measured without it).
        return None

    def epoch_now_sql(self) -> str:
        return "CAST(strftime('%s','now') AS INTEGER)"

    def now_seconds_sql(self) -> str:
        return f"((julianday('now') - {_UNIX_EPOCH_JULIAN}) * 86400.0)"

    def epoch_of_sql(self, column: str) -> str:
        return f"((julianday({column}) - {_UNIX_EPOCH_JULIAN}) * 86400.0)"

    def half_life_weight_sql(self, age_seconds: str, half_life_seconds: str) -> str:
        # power() is built into most SQLite builds; the engine registers it where it is missing.
        return f"power(0.5, max(0.0, {age_seconds}) / {half_life_seconds})"

    def insert(self, table: Table) -> sqlite.Insert:
        return sqlite.insert(table)

    def lock_keys(self, session: Session | Connection, namespace: str, keys: Iterable[str]) -> None:
        # BEGIN IMMEDIATE: the transaction already holds the one write lock of the database.
        return None

    @contextlib.contextmanager
    def migration_lock(self, connection: Connection) -> Iterator[None]:
        with file_lock(self._lock_dir, "migrate", within=self._lock_dir):
            yield


class PostgresOps(_Upserts):
    name = "postgresql"
    local_clock = False
    _ADVISORY_KEY = 0x646F6B6F726F  # "dokoro"

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

    def refresh_statistics(self, connection: Connection, tables: Sequence[str]) -> None:
        # Right after a bulk import the planner still believes the tables are as small as they
        # were: at 10k memories it chose an exact scan of every memory's vector over the HNSW
        # walk (recall 150 ms instead of 80) until autovacuum's analyze came round. ANALYZE reads
        # a sample (30k rows a table by default): a fraction of a second at 100k.
        if not tables:
            return
        connection.execute(text("ANALYZE " + ", ".join(f'"{name}"' for name in tables)))
        # The GIN indexes' pending lists (migration 0024) merged too: every search reads them whole.
        connection.execute(
            text(
                "SELECT gin_clean_pending_list(i.indexrelid) FROM pg_index i "
                "JOIN pg_class ix ON ix.oid = i.indexrelid JOIN pg_am am ON am.oid = ix.relam "
                "JOIN pg_class t ON t.oid = i.indrelid "
                "WHERE am.amname = 'gin' AND t.relname = ANY(:tables) AND t.relnamespace = ix.relnamespace "
                "AND t.relnamespace = to_regnamespace(current_schema())"
            ),
            {"tables": list(tables)},
        )

    def epoch_now_sql(self) -> str:
        return "CAST(EXTRACT(EPOCH FROM clock_timestamp()) AS BIGINT)"

    def now_seconds_sql(self) -> str:
        return "date_part('epoch', clock_timestamp())"

    def epoch_of_sql(self, column: str) -> str:
        # date_part gives double precision; EXTRACT gives numeric, much slower in aggregates.
        return f"date_part('epoch', {column})"

    def half_life_weight_sql(self, age_seconds: str, half_life_seconds: str) -> str:
        return (
            f"power(CAST(0.5 AS DOUBLE PRECISION), "
            f"GREATEST(CAST(0.0 AS DOUBLE PRECISION), {age_seconds}) / {half_life_seconds})"
        )

    def insert(self, table: Table) -> postgresql.Insert:
        from sqlalchemy.dialects import postgresql  # only PostgreSQL stores pay for its dialect

        return postgresql.insert(table)

    def lock_keys(self, session: Session | Connection, namespace: str, keys: Iterable[str]) -> None:
        # Transaction-scoped advisory locks, taken in one order so two writers never deadlock;
        # they also cover keys whose rows do not exist yet, which FOR UPDATE cannot.
        for key in sorted(set(keys)):
            session.execute(
                text("SELECT pg_advisory_xact_lock(hashtextextended(:key, 0))"), {"key": f"{namespace}:{key}"}
            )

    @contextlib.contextmanager
    def migration_lock(self, connection: Connection) -> Iterator[None]:
        connection.execute(text("SELECT pg_advisory_lock(:k)"), {"k": self._ADVISORY_KEY})
        try:
            yield
        finally:
            connection.execute(text("SELECT pg_advisory_unlock(:k)"), {"k": self._ADVISORY_KEY})
