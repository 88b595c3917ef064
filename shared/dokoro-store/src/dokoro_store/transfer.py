"""Rows as portable data: canonical form, checksums, and copying a store between databases.

``copy_store`` moves every table of one database into another (SQLite ⇄ PostgreSQL), in
foreign-key order, by upsert: re-running it converges, the source is only read, and each
table is verified afterwards by row count and a checksum of its canonical rows.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Table, func, select, tuple_
from sqlalchemy.types import LargeBinary

from dokoro_store.db.engine import Database
from dokoro_store.db.migrate import upgrade
from dokoro_store.db.types import UtcDateTime

__all__ = [
    "TableReport",
    "canonical_row",
    "copy_store",
    "decode_row",
    "read_rows",
    "row_count",
    "store_tables",
    "table_checksum",
]

Progress = Callable[[str, int, int], None]
_BATCH = 200


def store_tables() -> list[Table]:
    """Every table of the schema, parents before children."""
    from sqlmodel import SQLModel

    import dokoro_store.models  # noqa: F401  - registers the tables on the metadata

    return list(SQLModel.metadata.sorted_tables)


def _canonical_value(column_type: Any, value: Any) -> Any:
    if value is None:
        return None
    if isinstance(column_type, UtcDateTime) or isinstance(value, datetime):
        return value.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    if isinstance(column_type, LargeBinary) or isinstance(value, bytes | memoryview):
        return base64.b64encode(bytes(value)).decode("ascii")
    return value


def canonical_row(table: Table, row: Mapping[str, Any]) -> dict[str, Any]:
    """JSON-ready values in one fixed form, identical whichever backend they came from."""
    return {column.name: _canonical_value(column.type, row[column.name]) for column in table.columns}


def decode_row(table: Table, data: Mapping[str, Any]) -> dict[str, Any]:
    """The inverse of :func:`canonical_row`, for rows read back from a backup file."""
    from dokoro_store.clock import parse_iso

    values: dict[str, Any] = {}
    for column in table.columns:
        if column.name not in data:
            continue
        value = data[column.name]
        if value is not None and isinstance(column.type, UtcDateTime):
            value = parse_iso(value)
        elif value is not None and isinstance(column.type, LargeBinary):
            value = base64.b64decode(value)
        values[column.name] = value
    return values


def _digest(rows: Sequence[Mapping[str, Any]]) -> str:
    digest = hashlib.sha256()
    for row in rows:
        digest.update(json.dumps(row, sort_keys=True, ensure_ascii=False, default=str).encode())
        digest.update(b"\n")
    return digest.hexdigest()


def _primary_key(table: Table) -> list[str]:
    return [column.name for column in table.primary_key.columns]


def read_rows(db: Database, table: Table, keys: Sequence[tuple[Any, ...]] | None = None) -> list[dict[str, Any]]:
    """Canonical rows of ``table`` in primary-key order (optionally only those keys)."""
    pk = [table.c[name] for name in _primary_key(table)]
    rows: list[dict[str, Any]] = []
    with db.engine.connect() as connection:
        if keys is None:
            result = connection.execute(select(table).order_by(*pk))
            rows = [canonical_row(table, r._mapping) for r in result]
        else:
            for start in range(0, len(keys), _BATCH):
                chunk = keys[start : start + _BATCH]
                condition = (
                    pk[0].in_([key[0] for key in chunk]) if len(pk) == 1 else tuple_(*pk).in_(chunk)
                )
                result = connection.execute(select(table).where(condition).order_by(*pk))
                rows += [canonical_row(table, r._mapping) for r in result]
    return rows


def table_checksum(rows: Sequence[Mapping[str, Any]]) -> str:
    return _digest(rows)


@dataclass(frozen=True)
class TableReport:
    table: str
    source_rows: int
    target_rows: int
    copied: int
    source_checksum: str
    target_checksum: str

    @property
    def verified(self) -> bool:
        return self.source_checksum == self.target_checksum


def _raw_rows(db: Database, table: Table) -> Iterator[list[dict[str, Any]]]:
    pk = [table.c[name] for name in _primary_key(table)]
    with db.engine.connect() as connection:
        result = connection.execution_options(yield_per=_BATCH).execute(select(table).order_by(*pk))
        for partition in result.partitions(_BATCH):
            yield [dict(row._mapping) for row in partition]


def copy_store(source: Database, target: Database, *, progress: Progress | None = None) -> list[TableReport]:
    """Copy every row of ``source`` into ``target`` and verify each table.

    The target is upgraded to the current schema first. Rows are upserted by primary key,
    so running it twice changes nothing the second time; rows only in the target are kept.
    """
    upgrade(source)
    upgrade(target)
    reports: list[TableReport] = []
    for table in store_tables():
        pk = _primary_key(table)
        update = [c.name for c in table.columns if c.name not in pk]
        with source.engine.connect() as connection:
            total = int(connection.execute(select(func.count()).select_from(table)).scalar_one())
        copied = 0
        if progress:
            progress(table.name, 0, total)
        for batch in _raw_rows(source, table):
            with target.write() as session:
                session.execute(target.ops.upsert_many(table, batch, pk, update))
            copied += len(batch)
            if progress:
                progress(table.name, copied, total)
        with target.engine.begin() as connection:
            target.ops.after_bulk_insert(connection, table)
        source_rows = read_rows(source, table)
        keys = [tuple(row[name] for name in pk) for row in _raw_pk_values(source, table)]
        target_rows = read_rows(target, table, keys)
        with target.engine.connect() as connection:
            target_total = int(connection.execute(select(func.count()).select_from(table)).scalar_one())
        reports.append(
            TableReport(
                table=table.name,
                source_rows=total,
                target_rows=target_total,
                copied=copied,
                source_checksum=table_checksum(source_rows),
                target_checksum=table_checksum(target_rows),
            )
        )
    return reports


def _raw_pk_values(db: Database, table: Table) -> list[dict[str, Any]]:
    pk = [table.c[name] for name in _primary_key(table)]
    with db.engine.connect() as connection:
        return [dict(row._mapping) for row in connection.execute(select(*pk).order_by(*pk))]


def row_count(db: Database, table: Table) -> int:
    with db.engine.connect() as connection:
        return int(connection.execute(select(func.count()).select_from(table)).scalar_one())
