"""Human-readable JSON backups of a whole store, and a restore that never overwrites.

``export_store`` writes every table's canonical rows to one indented JSON file.
``plan_import`` compares a backup with a store, row by row: a row already there with the
same content is a *duplicate* (skipped), a row whose identity exists with different content
is a *conflict* (reported with both versions, never applied), anything else is *new*.
``apply_import`` inserts only the new rows, in one transaction.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from sqlalchemy import Table

from dokoro_store.clock import iso
from dokoro_store.db import write_guard
from dokoro_store.db.engine import Database
from dokoro_store.db.migrate import HEADS, schema_label, upgrade
from dokoro_store.errors import InvalidArgumentError
from dokoro_store.moving.transfer import (
    canonical_row,
    comparable,
    decode_row,
    identity_of,
    insert_keeping_ids,
    read_rows,
    redacted_row,
    store_tables,
    surrogate_of,
)
from dokoro_store.walls.files import atomic_write_text

__all__ = ["BACKUP_FORMAT", "Conflict", "ImportPlan", "TablePlan", "apply_import", "export_store", "plan_import"]

BACKUP_FORMAT = "dokoro-backup"
BACKUP_VERSION = 1

# Credentials are not memory: a backup never carries them (moving a store does).
EXCLUDED_TABLES = frozenset({"api_tokens"})

# How much a store has used a row since (a memory's recall count): not what the row says, so a
# row differing only there is the same fact, already here.
USAGE_COLUMNS: dict[str, frozenset[str]] = {"memories": frozenset({"recall_count", "last_recalled_at"})}


def _content(table: Table, row: Mapping[str, Any]) -> dict[str, Any]:
    usage = USAGE_COLUMNS.get(table.name, frozenset())
    return {k: v for k, v in comparable(table, row).items() if k not in usage}


def backup_tables() -> list[Table]:
    return [table for table in store_tables() if table.name not in EXCLUDED_TABLES]


def backup_document(db: Database, exported_at: datetime) -> dict[str, Any]:
    upgrade(db)
    return {
        "format": BACKUP_FORMAT,
        "version": BACKUP_VERSION,
        "schema_revision": schema_label(HEADS),
        "exported_at": iso(exported_at),
        "backend": db.dialect,
        "tables": {table.name: read_rows(db, table) for table in backup_tables()},
    }


def export_store(db: Database, folder: Path, exported_at: datetime) -> tuple[Path, dict[str, int]]:
    """Write ``dokoro-backup-<UTC stamp>.json`` into ``folder``; returns the path and row counts."""
    document = backup_document(db, exported_at)
    path = folder / f"dokoro-backup-{exported_at:%Y%m%dT%H%M%SZ}.json"
    counter = 2
    while path.exists():
        path = folder / f"dokoro-backup-{exported_at:%Y%m%dT%H%M%SZ}-{counter}.json"
        counter += 1
    atomic_write_text(path, json.dumps(document, indent=2, ensure_ascii=False, sort_keys=False) + "\n", within=None)
    return path, {name: len(rows) for name, rows in document["tables"].items()}


def load_backup(path: Path) -> dict[str, Any]:
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InvalidArgumentError(f"no backup file at {path}") from None
    except json.JSONDecodeError as exc:
        raise InvalidArgumentError(f"{path} is not valid JSON: {exc}") from None
    if not isinstance(document, dict) or document.get("format") != BACKUP_FORMAT:
        raise InvalidArgumentError(f'{path} is not a dokoro backup (no "format": "{BACKUP_FORMAT}")')
    if int(document.get("version", 0)) > BACKUP_VERSION:
        raise InvalidArgumentError(f"{path} was written by a newer dokoro (backup version {document['version']})")
    return document


@dataclass(frozen=True)
class Conflict:
    """A row whose identity is in the store with other content: ``ours`` and ``theirs`` are the
    two versions' content (bookkeeping columns left out)."""

    table: str
    key: dict[str, Any]
    ours: dict[str, Any]
    theirs: dict[str, Any]

    @property
    def differing(self) -> list[str]:
        return sorted(k for k in self.theirs if self.ours.get(k) != self.theirs.get(k))


@dataclass
class TablePlan:
    table: str
    new: list[dict[str, Any]] = field(default_factory=list)
    duplicates: int = 0
    conflicts: list[Conflict] = field(default_factory=list)


@dataclass
class ImportPlan:
    tables: list[TablePlan]
    unknown_tables: list[str]
    redacted: tuple[str, ...] = ()  # kinds of secret found in the backup (redacted on import)

    @property
    def new_rows(self) -> int:
        return sum(len(t.new) for t in self.tables)

    @property
    def duplicates(self) -> int:
        return sum(t.duplicates for t in self.tables)

    @property
    def conflicts(self) -> list[Conflict]:
        return [c for t in self.tables for c in t.conflicts]


def plan_import(db: Database, document: Mapping[str, Any]) -> ImportPlan:
    """Classify every row of a backup against the store, changing nothing."""
    upgrade(db)
    tables = {table.name: table for table in store_tables()}
    incoming: Mapping[str, list[dict[str, Any]]] = document.get("tables", {})
    plans: list[TablePlan] = []
    redactions: list[str] = []
    for table in backup_tables():
        rows = incoming.get(table.name, [])
        plan = TablePlan(table.name)
        identity = identity_of(table)
        # By identity, every row holding it: a natural key may be shared by two real rows (two
        # identical outcomes recorded in one second), and the backup's n-th row of a key is new
        # when the store holds fewer than n (so both travel, and a second import adds neither).
        existing: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
        for row in read_rows(db, table):
            existing.setdefault(tuple(row[name] for name in identity), []).append(row)
        seen: dict[tuple[Any, ...], int] = {}
        for raw in rows:
            # A backup may hold secrets (an older dokoro, a hand-made file): compare and import the
            # rows as the store will hold them, redacted.
            row = redacted_row(table, canonical_row(table, _with_defaults(table, decode_row(table, raw))), redactions)
            key = tuple(row[name] for name in identity)
            nth = seen.get(key, 0)
            seen[key] = nth + 1
            if nth and surrogate_of(table) is None:
                plan.duplicates += 1  # the same primary key twice in one file
                continue
            held = existing.get(key, [])
            ours = held[nth] if nth < len(held) else None
            if ours is None:
                plan.new.append(row)
                continue
            # Compared on content: not on the surrogate id, the columns this store stamps itself
            # (a memory's rev) or its use of the row since (recall counts).
            content_ours, content_theirs = _content(table, ours), _content(table, row)
            if content_ours == content_theirs:
                plan.duplicates += 1
            else:
                key_values = dict(zip(identity, key, strict=True))
                plan.conflicts.append(Conflict(table.name, key_values, content_ours, content_theirs))
        plans.append(plan)
    unknown = sorted(name for name in incoming if name not in tables or name in EXCLUDED_TABLES)
    return ImportPlan(plans, unknown, tuple(redactions))


def _with_defaults(table: Table, values: dict[str, Any]) -> dict[str, Any]:
    for column in table.columns:
        if column.name not in values:
            values[column.name] = None
    return values


def apply_import(db: Database, plan: ImportPlan, progress: Callable[[str, int, int], None] | None = None) -> int:
    """Insert the plan's new rows (keeping their ids where free); returns how many.

    ``progress(table, done, total)`` is called after each table (one transaction for all of them).
    """
    tables = {table.name: table for table in store_tables()}
    inserted = 0
    with db.write() as session, write_guard.all_tables(session):  # rows as they are, every table
        for table_plan in plan.tables:
            table = tables[table_plan.table]
            insert_keeping_ids(session, db, table, [decode_row(table, row) for row in table_plan.new])
            inserted += len(table_plan.new)
            if progress is not None:
                progress(table_plan.table, len(table_plan.new), len(table_plan.new))
    return inserted
