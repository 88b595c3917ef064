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

from dokoro_store.db import write_guard
from dokoro_store.db.engine import Database
from dokoro_store.db.migrate import upgrade
from dokoro_store.db.types import UtcDateTime

__all__ = [
    "NATURAL_KEYS",
    "RESTAMPED",
    "TableReport",
    "canonical_row",
    "comparable",
    "copy_store",
    "decode_row",
    "identity_of",
    "insert_keeping_ids",
    "read_rows",
    "row_count",
    "store_tables",
    "surrogate_of",
    "table_checksum",
]

Progress = Callable[[str, int, int], None]
_BATCH = 200

# How a row is recognised when its primary key is a surrogate number that differs between
# stores: episodic summaries are the same fact when session, time and text agree.
NATURAL_KEYS: dict[str, tuple[str, ...]] = {
    "conversation_summaries": ("session_id", "started_at", "summary"),
    "agent_feedback": ("agent_id", "tool_name", "outcome", "recorded_at"),
    "shared_notes": ("agent_id", "created_at", "content"),
    "handoffs": ("from_agent", "created_at", "summary"),
    "file_claim_events": ("claim_key", "agent_id", "action", "at", "expires_at"),
}

# Bookkeeping columns the target stamps itself whatever a copy carries: a memory's change number
# (``rev``) is given by a database trigger on every insert and content change (migration 0019),
# so two stores holding the same memory hold it under different numbers. Rows are compared, and
# tables verified, without them.
# The graph's write-behind token (``docs.unextracted``) is cleared by whichever process extracts
# the document, so it is the target's own bookkeeping as well.
RESTAMPED: dict[str, frozenset[str]] = {"memories": frozenset({"rev"}), "docs": frozenset({"unextracted"})}


def comparable(table: Table, row: Mapping[str, Any]) -> dict[str, Any]:
    """A canonical row without what differs between two stores holding the same fact: the
    surrogate id of a natural-key table and the columns the target re-stamps (:data:`RESTAMPED`)."""
    skip = RESTAMPED.get(table.name, frozenset())
    surrogate = surrogate_of(table)
    return {k: v for k, v in row.items() if k != surrogate and k not in skip}


def store_tables() -> list[Table]:
    """Every table of the schema, parents before children."""
    from sqlmodel import SQLModel

    from dokoro_store.models import register_all

    register_all()
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


def redacted_row(table: Table, row: dict[str, Any], kinds: list[str] | None = None) -> dict[str, Any]:
    """A canonical row as the store would hold it: every text and JSON value redacted of secrets.

    What the database's redaction hook does to a written row (``db/redaction.py``), so a copied or
    imported row compares equal to what it became in the target. ``kinds`` collects what was removed.
    """
    from dokoro_store.walls.secrets import redact_value

    cleaned = dict(row)
    for column in table.columns:
        value = row.get(column.name)
        if value is None or isinstance(column.type, UtcDateTime | LargeBinary):
            continue
        if isinstance(value, str | dict | list):
            new, found = redact_value(value)
            if found:
                cleaned[column.name] = new
                if kinds is not None:
                    kinds.extend(found)
    return cleaned


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


def table_checksum(rows: Sequence[Mapping[str, Any]]) -> str:
    """SHA-256 over canonical rows, one JSON line each, in the order given."""
    digest = hashlib.sha256()
    for row in rows:
        digest.update(json.dumps(row, sort_keys=True, ensure_ascii=False, default=str).encode())
        digest.update(b"\n")
    return digest.hexdigest()


def _primary_key(table: Table) -> list[str]:
    return [column.name for column in table.primary_key.columns]


def read_rows(db: Database, table: Table) -> list[dict[str, Any]]:
    """Every canonical row of ``table`` in primary-key order."""
    return [row for batch in _canonical_batches(db, table) for row in batch]


def row_count(db: Database, table: Table) -> int:
    with db.engine.connect() as connection:
        return int(connection.execute(select(func.count()).select_from(table)).scalar_one())


def identity_of(table: Table) -> tuple[str, ...]:
    """The columns that say "the same row" across stores: the natural key, else the primary key."""
    return NATURAL_KEYS.get(table.name) or tuple(_primary_key(table))


def surrogate_of(table: Table) -> str | None:
    """The integer surrogate key of a table recognised by a natural key (it may differ per store)."""
    if table.name not in NATURAL_KEYS:
        return None
    (pk,) = table.primary_key.columns
    return pk.name


def insert_keeping_ids(session: Any, db: Database, table: Table, rows: Sequence[dict[str, Any]]) -> None:
    """Insert rows of a natural-key table: each keeps its id when free here, else gets a fresh one.

    Rows keeping their ids go in first and the sequence is moved past them, so a fresh id can
    never take an id another row of the batch still wants.
    """
    surrogate = surrogate_of(table)
    keep: list[dict[str, Any]] = []
    renumber: list[dict[str, Any]] = []
    if surrogate is None:
        keep = list(rows)
    else:
        taken = set(session.execute(select(table.c[surrogate])).scalars())
        for values in rows:
            if values.get(surrogate) in taken:
                renumber.append({k: v for k, v in values.items() if k != surrogate})
            else:
                keep.append(values)
                taken.add(values.get(surrogate))
    for values in keep:
        session.execute(table.insert().values(**values))
    db.ops.after_bulk_insert(session.connection(), table)
    for values in renumber:
        session.execute(table.insert().values(**values))


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


def _batches(db: Database, table: Table) -> Iterator[list[Any]]:
    pk = [table.c[name] for name in _primary_key(table)]
    with db.engine.connect() as connection:
        result = connection.execution_options(yield_per=_BATCH).execute(select(table).order_by(*pk))
        for partition in result.partitions(_BATCH):
            yield [row._mapping for row in partition]


def _canonical_batches(db: Database, table: Table) -> Iterator[list[dict[str, Any]]]:
    for batch in _batches(db, table):
        yield [canonical_row(table, row) for row in batch]


def _fingerprint(
    table: Table, db: Database, wanted: set[tuple[Any, ...]] | None, *, redacted: bool = False
) -> tuple[str, int]:
    """Checksum of the canonical rows (surrogate ids left out) whose identity is in ``wanted``,
    taken in identity order; and how many rows the table holds in all. ``redacted``: of the rows
    as the target stores them (secrets redacted), for a source that may still hold some."""
    identity = identity_of(table)
    picked: list[tuple[tuple[Any, ...], dict[str, Any]]] = []
    total = 0
    for batch in _canonical_batches(db, table):
        total += len(batch)
        for row in batch:
            if redacted:
                row = redacted_row(table, row)
            key = tuple(row[name] for name in identity)
            if wanted is None or key in wanted:
                picked.append((key, comparable(table, row)))
    picked.sort(key=lambda item: json.dumps(item[0], default=str))
    return table_checksum([row for _key, row in picked]), total


def _existing(
    session: Any, table: Table, pk: list[str], rows: Sequence[Mapping[str, Any]]
) -> dict[tuple[Any, ...], Any]:
    """The target's rows with the primary keys of ``rows`` (one batch), canonical, by key."""
    columns = [table.c[name] for name in pk]
    keys = [tuple(row[name] for name in pk) for row in rows]
    where = columns[0].in_([key[0] for key in keys]) if len(pk) == 1 else tuple_(*columns).in_(keys)
    found = session.execute(select(table).where(where)).mappings()
    return {tuple(row[name] for name in pk): canonical_row(table, row) for row in found}


def _copy_batch(session: Any, target: Database, table: Table, rows: list[dict[str, Any]]) -> int:
    """Upsert the rows of a primary-key table that are missing or differ in the target; returns how
    many. A row already there as it is is not written again: a rewrite would move what triggers
    stamp (a memory's ``rev``), so a second copy would not be a no-op."""
    pk = _primary_key(table)
    there = _existing(session, table, pk, rows)
    changed = []
    for row in rows:
        ours = there.get(tuple(row[name] for name in pk))
        theirs = redacted_row(table, canonical_row(table, row))
        if ours is None or comparable(table, ours) != comparable(table, theirs):
            changed.append(row)
    if changed:
        # A table whose every column is its key (memory_entities) has nothing to update on conflict.
        update = [c.name for c in table.columns if c.name not in pk] or None
        session.execute(target.ops.upsert_many(table, changed, pk, update))
    return len(changed)


def copy_store(source: Database, target: Database, *, progress: Progress | None = None) -> list[TableReport]:
    """Copy every row of ``source`` into ``target`` and verify each table.

    The target is upgraded to the current schema first. Rows are matched by identity (the
    primary key, or a natural key for tables whose numeric ids differ between stores): a row
    already in the target with other content is updated (primary key) or left as it is (natural
    key), a new row is inserted, a row already there as it is is not touched. Running it twice
    changes nothing the second time, rows only in the target are kept, and the source is only read.
    Verification compares content, not the bookkeeping the target stamps itself (:data:`RESTAMPED`).
    """
    upgrade(source)
    upgrade(target)
    reports: list[TableReport] = []
    for table in store_tables():
        identity = identity_of(table)
        total = row_count(source, table)
        seen: set[tuple[Any, ...]] = set()
        known: set[tuple[Any, ...]] = set()
        if surrogate_of(table) is not None:
            for batch in _canonical_batches(target, table):
                known.update(tuple(row[name] for name in identity) for row in batch)
        copied = 0
        read = 0
        if progress:
            progress(table.name, 0, total)
        for batch in _batches(source, table):
            rows = [dict(row) for row in batch]
            keys = [tuple(redacted_row(table, canonical_row(table, row))[name] for name in identity) for row in rows]
            seen.update(keys)
            with target.write() as session, write_guard.all_tables(session):  # rows as they are
                if surrogate_of(table) is None:
                    copied += _copy_batch(session, target, table, rows)
                else:
                    fresh = [row for row, key in zip(rows, keys, strict=True) if key not in known]
                    insert_keeping_ids(session, target, table, fresh)
                    known.update(keys)
                    copied += len(fresh)
            read += len(rows)
            if progress:
                progress(table.name, read, total)
        with target.engine.begin() as connection:
            target.ops.after_bulk_insert(connection, table)
            target.ops.refresh_statistics(connection, [table.name])
        source_checksum, _ = _fingerprint(table, source, None, redacted=True)
        target_checksum, target_total = _fingerprint(table, target, seen)
        reports.append(TableReport(table.name, total, target_total, copied, source_checksum, target_checksum))
    return reports
